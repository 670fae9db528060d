//! `column_type: infer` on every backend, both strategies: each attribute of the ladder and
//! its traps (leading zeros, exponent, invalid dates, trailing zeros, negative numbers,
//! values beyond INT, mixed columns, a conflict under `aggregate: max`) is checked cell by
//! cell through the catalog's declared type and the text the database prints back.
//!
//! SQLite always; PostgreSQL and MariaDB at `EAVPIVOT_PG_URL` / `EAVPIVOT_MARIADB_URL` (the
//! local servers by default), skipped with a reason when unreachable unless
//! `EAVPIVOT_REQUIRE_SERVERS=1`; SQL Server when `EAVPIVOT_MSSQL_URL` is set; Citus when
//! `EAVPIVOT_CITUS_URL` is set (the source distributed by its entity `id`, each target
//! checked distributed and co-located with it).

use std::collections::BTreeMap;

use crate::fixture::{self, catalog_types, insert_rows, kv_table, Row};
use crate::servers;

use eavpivot::backend::Backend;
use eavpivot::config::{self, StrategyName};
use eavpivot::execute::run_job;
use servers::{printed, run_options, runtime};

/// (entity, attribute, value): the source rows.
const ROWS: &[Row] = &[
    (1, "qty", "12"),
    (2, "qty", "-7"),
    (3, "qty", "9"),
    // A conflict: MAX over the source text picks '9' ("9" > "10"), on both strategies.
    (3, "qty", "10"),
    (1, "int32", "70000"),
    (2, "int32", "-40000"),
    (1, "big", "3000000000"),
    (2, "big", "-1"),
    (1, "huge", "12345678901234567890"),
    (1, "zip", "00501"),
    (2, "zip", "12345"),
    (1, "price", "0.40"),
    (2, "price", "12.50"),
    (3, "price", "-3.25"),
    (1, "trail", "1.5"),
    (2, "trail", "0.40"),
    (1, "sci", "1e5"),
    (1, "plus", "+5"),
    (1, "born", "2023-01-31"),
    (2, "born", "2020-02-29"),
    (1, "bad_date", "2023-02-30"),
    (1, "at", "2024-01-01 10:00:00"),
    (2, "at", "1999-12-31 23:59:59"),
    (1, "atf", "2024-01-01 10:00:00.25"),
    (2, "atf", "2024-06-30 23:59:59.75"),
    (1, "flag", "true"),
    (2, "flag", "false"),
    (1, "mixed", "12"),
    (2, "mixed", "N/A"),
    (1, "empty", ""),
    (1, "name", "Ünïcode"),
    (2, "name", "x"),
];

/// What each attribute must become: the ladder's kind, as each dialect's catalog names it.
fn expected_type(dialect: &str, attribute: &str) -> &'static str {
    let kind = match attribute {
        "qty" => "smallint",
        "int32" => "int",
        "big" => "bigint",
        "huge" | "price" => "decimal",
        "born" => "date",
        "at" | "atf" => "timestamp",
        "flag" => "boolean",
        _ => "text",
    };
    match (dialect, kind) {
        // SQLite keeps integers only (no exact decimal, date or timestamp storage).
        ("sqlite", "smallint" | "int" | "bigint") => "INTEGER",
        ("sqlite", _) => "TEXT",
        ("postgres", "int") => "integer",
        ("postgres", "decimal") => "numeric",
        ("postgres", "timestamp") => "timestamp without time zone",
        ("postgres", k) => k,
        ("mariadb", "timestamp") => "datetime",
        ("mariadb", "boolean" | "text") => "varchar",
        ("mssql", "timestamp") => "datetime2",
        ("mssql", "boolean" | "text") => "nvarchar",
        (_, k) => k,
    }
}

#[test]
fn sqlite_typed() {
    let db = servers::sqlite();
    runtime().block_on(run_all(&db));
}

#[test]
fn postgres_typed() {
    runtime().block_on(run_all(&servers::postgres()));
}

#[test]
fn mariadb_typed() {
    runtime().block_on(run_all(&servers::mariadb()));
}

#[test]
fn citus_typed() {
    let Some(db) = servers::citus() else {
        return;
    };
    runtime().block_on(run_all(&db));
}

#[test]
fn mssql_typed() {
    let Some(db) = servers::mssql() else {
        return;
    };
    runtime().block_on(run_all(&db));
}

async fn run_all(server: &servers::Db) {
    let what = server.what;
    let Some(mut db) = server.open().await else {
        return;
    };
    let db = db.as_mut();
    // The catalog and literals are the dialect's (Citus's is PostgreSQL's).
    let dialect = db.dialect().name();
    let citus = what == "citus";
    let source = format!("typed{}_src", std::process::id());
    let target = format!("typed{}_wide", std::process::id());
    kv_table(db, dialect, &source, true, &[])
        .await
        .expect("source table");
    if citus {
        servers::distribute(db, &source, "id")
            .await
            .expect("distribute");
    }
    insert_rows(db, dialect, &source, true, ROWS)
        .await
        .expect("source rows");
    let mut failures = Vec::new();
    for strategy in [StrategyName::Pushdown, StrategyName::Stream] {
        if let Err(e) = check_run(db, dialect, &source, &target, strategy).await {
            failures.push(format!("{what} {strategy:?}: {e}"));
        }
        if citus {
            if let Err(e) = servers::co_located(db, &target, &source).await {
                failures.push(format!("{what} {strategy:?}: {e}"));
            }
        }
        if let Err(e) = check_typed_source(db, dialect, &source, &target, strategy).await {
            failures.push(format!("{what} {strategy:?} INT value column: {e}"));
        }
    }
    if let Err(e) = check_override_refusal(db, &source, &target).await {
        failures.push(format!("{what} pivot.types: {e}"));
    }
    for t in [&target, &source] {
        let _ = db.execute(&format!("DROP TABLE {t}")).await;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `column_type: infer` in the mode this file pins: the narrowest widths, numbers typed only
/// where every value prints back as its exact text.
const EXACT_TEXT: &str = "column_type: infer, infer: { widths: exact, numbers: text }";

fn job(source: &str, target: &str, value: &str, pivot: &str) -> config::Job {
    fixture::job("typed", source, value, pivot, target, "replace")
}

/// The catalog's type name without its precision, scale or length: `numeric(18,2)` →
/// `numeric`.
fn type_name(declared: &str) -> &str {
    declared.split('(').next().unwrap_or(declared)
}

/// The source text each cell must print back as: under `aggregate: max`, the greatest
/// source text of the entity's values (byte order).
fn expected_cells() -> BTreeMap<(i64, String), String> {
    let mut out: BTreeMap<(i64, String), String> = BTreeMap::new();
    for (e, a, v) in ROWS {
        let cell = out
            .entry((*e, a.to_string()))
            .or_insert_with(|| v.to_string());
        if v.as_bytes() > cell.as_bytes() {
            *cell = v.to_string();
        }
    }
    out
}

async fn check_run(
    db: &mut dyn Backend,
    dialect: &str,
    source: &str,
    target: &str,
    strategy: StrategyName,
) -> Result<(), String> {
    // The exact text mode: every value prints back as written (typed_infer_modes.rs tests
    // the defaults, headroom and numbers by value).
    let job = job(source, target, "val", EXACT_TEXT);
    let outcome = run_job(&job, db, &run_options(strategy))
        .await
        .map_err(|e| format!("run failed: {e}"))?;
    let columns: Vec<String> = outcome
        .report
        .columns
        .iter()
        .map(|c| c.column.clone())
        .collect();
    let catalog = catalog_types(db, dialect, target).await;
    for c in &outcome.report.columns {
        let want = expected_type(dialect, &c.attribute);
        let got = catalog.get(&c.column).map(|t| type_name(t).to_string());
        if got.as_deref() != Some(&want.to_lowercase()) {
            return Err(format!(
                "column {}: catalog says {got:?}, expected {want} (plan: {} — {:?})",
                c.column, c.sql_type, c.type_reason
            ));
        }
    }
    let zip = outcome
        .report
        .columns
        .iter()
        .find(|c| c.attribute == "zip")
        .and_then(|c| c.type_reason.clone())
        .unwrap_or_default();
    if !zip.contains("'00501' for entity 1") {
        return Err(format!(
            "zip's reason does not name the value that kept it text: {zip}"
        ));
    }
    let got = printed(db, target, &columns).await;
    let want = expected_cells();
    if got != want {
        let diff: Vec<String> = want
            .iter()
            .filter(|(k, v)| got.get(*k) != Some(*v))
            .map(|(k, v)| format!("{k:?}: want {v:?}, got {:?}", got.get(k)))
            .chain(
                got.keys()
                    .filter(|k| !want.contains_key(*k))
                    .map(|k| format!("{k:?}: unexpected {:?}", got[k])),
            )
            .collect();
        return Err(format!("cells differ: {}", diff.join("; ")));
    }
    Ok(())
}

/// A value column that is already INT keeps an integer type and its values.
async fn check_typed_source(
    db: &mut dyn Backend,
    dialect: &str,
    source: &str,
    target: &str,
    strategy: StrategyName,
) -> Result<(), String> {
    let job = job(
        source,
        target,
        "n",
        &format!("{EXACT_TEXT}, columns: [qty, big]"),
    );
    let outcome = run_job(&job, db, &run_options(strategy))
        .await
        .map_err(|e| format!("run failed: {e}"))?;
    let catalog = catalog_types(db, dialect, target).await;
    for c in ["qty", "big"] {
        let want = expected_type(dialect, "qty").to_lowercase();
        if catalog.get(c).map(|t| type_name(t).to_string()) != Some(want.clone()) {
            return Err(format!(
                "{c}: catalog {:?}, expected {want}",
                catalog.get(c)
            ));
        }
    }
    let got = printed(db, target, &["qty".into(), "big".into()]).await;
    let want: BTreeMap<(i64, String), String> = [
        ((1, "qty"), "1"),
        ((2, "qty"), "2"),
        ((3, "qty"), "3"),
        ((1, "big"), "1"),
        ((2, "big"), "2"),
    ]
    .into_iter()
    .map(|((e, a), v)| ((e, a.to_string()), v.to_string()))
    .collect();
    if got != want {
        return Err(format!(
            "cells {got:?}, expected {want:?} ({:?})",
            outcome.report.columns
        ));
    }
    Ok(())
}

/// `pivot.types` with a value that does not convert: refused before any DDL, naming the
/// attribute, the entity and the value.
async fn check_override_refusal(
    db: &mut dyn Backend,
    source: &str,
    target: &str,
) -> Result<(), String> {
    let _ = db.execute(&format!("DROP TABLE {target}")).await;
    let job = job(source, target, "val", "types: { qty: INT, zip: INT }");
    let err = match run_job(&job, db, &run_options(StrategyName::Auto)).await {
        Ok(_) => return Err("a job with zip: INT ran over '00501'".into()),
        Err(e) => e.to_string(),
    };
    if !(err.contains("'zip'") && err.contains("'00501' for entity 1") && err.contains("INT")) {
        return Err(format!(
            "the refusal does not name attribute, entity and value: {err}"
        ));
    }
    if db.query(&format!("SELECT 1 FROM {target}")).await.is_ok() {
        return Err("the refused job created its target".into());
    }
    Ok(())
}

/// The verification query counts exactly the values a typed column would not print back:
/// `007` forced into an integer column prints `7`.
#[test]
fn the_round_trip_check_catches_a_value_that_prints_differently() {
    use eavpivot::backend::sqlite::SqliteBackend;
    use eavpivot::dialect::{ColumnKind, PivotColumn, Sqlite, TableShape, Typed};
    runtime().block_on(async {
        let mut db = SqliteBackend::in_memory().expect("sqlite");
        db.execute_script(
            "CREATE TABLE kv (id INT, attr TEXT, val TEXT);
             INSERT INTO kv VALUES (1, 'n', '7'), (2, 'n', '007'), (3, 'n', NULL), (1, 't', 'x');",
        )
        .await
        .expect("data");
        let job = job("kv", "wide", "val", "column_type: infer");
        let mut n = PivotColumn::text("n", "n");
        n.typed = Some(Typed {
            kind: ColumnKind::Int,
            sql_type: "INTEGER".into(),
            why: String::new(),
            round_trips: true,
            by_value: false,
        });
        let shape = TableShape {
            table: config::TableRef::parse("wide").expect("name"),
            entity: Vec::new(),
            columns: vec![n, PivotColumn::text("t", "t")],
            column_type: "TEXT".into(),
            primary_key: false,
        };
        let sql = eavpivot::dialect::query::typed_round_trip(
            &Sqlite,
            std::slice::from_ref(&shape),
            &eavpivot::plan::source_query(&job),
            false,
        )
        .expect("a typed column");
        let rows = db.query(&sql).await.expect("runs");
        assert_eq!(rows[0][0].as_i64(), Some(1), "{sql}");
        // The stream binds an integer column's values itself and checks them as it converts
        // (execute::stream): neither its read nor its check scan asks the database.
        let streamed = true;
        let source = eavpivot::plan::source_query(&job);
        let one = std::slice::from_ref(&shape);
        assert!(eavpivot::dialect::query::ordered_rows_checked(&Sqlite, &source, one).is_none());
        assert!(
            eavpivot::dialect::query::typed_round_trip(&Sqlite, one, &source, streamed).is_none()
        );
        // Columns the database converts from their text (dates, decimals on the servers) are
        // checked by the stream's read: `a_server_that_prints_values_differently…` below.
        // The pushdown's pivot loads a typed cell only where it prints back: `007` is left
        // out (a missing cell verification refuses), `7` is loaded.
        let mut keyed = shape.clone();
        keyed.entity = vec![eavpivot::dialect::EntityColumn {
            name: "id".into(),
            sql_type: None,
        }];
        let pivot = eavpivot::dialect::query::insert_select(
            &Sqlite,
            &keyed,
            &eavpivot::plan::source_query(&job),
            eavpivot::terms::Aggregate::Max,
        );
        db.execute("CREATE TABLE wide (id INT, n INTEGER, t TEXT)")
            .await
            .expect("target");
        db.execute(&pivot).await.expect("pivot");
        let cells: Vec<String> = db
            .query("SELECT id, n, t FROM wide ORDER BY id")
            .await
            .expect("read")
            .iter()
            .map(|r| format!("{} {} {}", r[0], r[1], r[2]))
            .collect();
        assert_eq!(cells, ["1 7 x", "2 NULL NULL", "3 NULL NULL"], "{pivot}");
        let untyped = TableShape {
            columns: vec![PivotColumn::text("t", "t")],
            ..shape
        };
        assert!(eavpivot::dialect::query::typed_round_trip(
            &Sqlite,
            std::slice::from_ref(&untyped),
            &eavpivot::plan::source_query(&job),
            false
        )
        .is_none());
        assert!(eavpivot::dialect::query::ordered_rows_checked(
            &Sqlite,
            &eavpivot::plan::source_query(&job),
            &[untyped]
        )
        .is_none());
    });
}

/// A server that prints dates otherwise (PostgreSQL with `DateStyle = German`: `2023-01-31`
/// comes back `31.01.2023`, set here for the session as a database or role would set it):
/// eavpivot's sessions set the output back to ISO, so both strategies type the column as a
/// date and load every value exactly — where they refused the load as misprinted before. (The
/// round-trip check itself: `the_round_trip_check_catches_a_value_that_prints_differently`.)
#[test]
fn a_server_that_prints_dates_otherwise_loads_them_exactly() {
    runtime().block_on(async {
        let server = servers::postgres();
        let Some(mut plain) = server.open().await else {
            return;
        };
        let joiner = if server.url.contains('?') { '&' } else { '?' };
        let german = servers::Db {
            url: format!("{}{joiner}options=-cDateStyle%3DGerman", server.url),
            ..server
        };
        let Some(mut db) = german.open().await else {
            return;
        };
        let source = format!("typed{}_style", std::process::id());
        let target = format!("typed{}_style_wide", std::process::id());
        let dialect = db.dialect().name();
        kv_table(db.as_mut(), dialect, &source, true, &[])
            .await
            .expect("source table");
        let rows: &[Row] = &[
            (1, "born", "2023-01-31"),
            (2, "born", "2020-02-29"),
            (1, "qty", "12"),
        ];
        insert_rows(db.as_mut(), dialect, &source, true, rows)
            .await
            .expect("source rows");
        let read = format!("SELECT born::text, pg_typeof(born)::text FROM {target} ORDER BY id");
        for strategy in [StrategyName::Pushdown, StrategyName::Stream] {
            let job = job(&source, &target, "val", "column_type: infer");
            let outcome = run_job(&job, db.as_mut(), &run_options(strategy)).await;
            assert!(outcome.is_ok(), "{strategy:?}: {:?}", outcome.err());
            let got = servers::text_rows(plain.as_mut(), &read).await;
            assert_eq!(
                got,
                [["2023-01-31", "date"], ["2020-02-29", "date"]],
                "{strategy:?}"
            );
        }
        for t in [&target, &source] {
            let _ = plain.execute(&format!("DROP TABLE {t}")).await;
        }
    });
}
