//! `pivot.infer` on every backend, both strategies (issue 21.3 and 21.4): the defaults give
//! headroom (a counter at 6,771 is INTEGER, decimals DECIMAL(18,s), text rounded up to a step)
//! and type numbers by value (`1.25` and `12.5` are one DECIMAL; `007`, `1e5`, ` 12` stay
//! text), and every cell is checked by value; `widths: exact, numbers: text` gives back the
//! narrowest exact-text ladder. On SQLite, a `pivot.types` DECIMAL keeps its text exactly.
//!
//! SQLite always; PostgreSQL and MariaDB at `EAVPIVOT_PG_URL` / `EAVPIVOT_MARIADB_URL` (the
//! local servers by default), skipped with a reason when unreachable unless
//! `EAVPIVOT_REQUIRE_SERVERS=1`; SQL Server when `EAVPIVOT_MSSQL_URL` is set.

use std::collections::BTreeMap;

use crate::fixture::{self, catalog_types, insert_rows, kv_table, Row};
use crate::servers;

use eavpivot::backend::Backend;
use eavpivot::config::{self, StrategyName};
use eavpivot::execute::run_job;
use servers::{printed, run_options, runtime};

/// (entity, attribute, value): the source rows, one value per cell.
const ROWS: &[Row] = &[
    (1, "counter", "6771"),
    (2, "counter", "12"),
    (1, "weight", "1.25"),
    (2, "weight", "12.5"),
    (3, "weight", "27.80"),
    (1, "mix", "5"),
    (2, "mix", "-5.5"),
    (1, "lead", "007"),
    (2, "lead", "12"),
    (1, "sci", "1e5"),
    (2, "sci", "1.5"),
    (1, "space", " 12"),
    (2, "space", "3"),
    (1, "at", "2024-01-01 10:00:00"),
    (2, "at", "2024-01-01 10:00:00.5"),
    (3, "at", "2024-06-30 23:59:59.25"),
    // The same instant as .5: a timestamp by value, text as written.
    (4, "at", "2024-06-30 23:59:59.50"),
    (1, "blank", ""),
    (1, "name", "a name of exactly forty characters, long"),
];

/// Columns whose cells are compared by value (trailing fractional zeros aside).
const BY_VALUE: &[&str] = &["weight", "mix", "at"];

/// The declared type each attribute must get by default, as the catalog shows it.
fn default_type(dialect: &str, attribute: &str) -> &'static str {
    match (dialect, attribute) {
        ("sqlite", "counter") => "integer",
        ("sqlite", _) => "text",
        ("postgres", "counter") => "integer",
        ("postgres", "weight") => "numeric(18,2)",
        ("postgres", "mix") => "numeric(18,1)",
        ("postgres", "at") => "timestamp without time zone",
        ("postgres", _) => "text",
        (_, "counter") => "int",
        (_, "weight") => "decimal(18,2)",
        (_, "mix") => "decimal(18,1)",
        ("mariadb", "at") => "datetime",
        ("mssql", "at") => "datetime2",
        ("mariadb", "name") => "varchar(64)",
        ("mssql", "name") => "nvarchar(64)",
        // '' alone, and short text: the smallest step, not VARCHAR(1).
        ("mariadb", _) => "varchar(32)",
        _ => "nvarchar(32)",
    }
}

#[test]
fn sqlite_infer_modes() {
    runtime().block_on(run_all(&servers::sqlite()));
}

#[test]
fn postgres_infer_modes() {
    runtime().block_on(run_all(&servers::postgres()));
}

#[test]
fn mariadb_infer_modes() {
    runtime().block_on(run_all(&servers::mariadb()));
}

#[test]
fn mssql_infer_modes() {
    let Ok(url) = std::env::var("EAVPIVOT_MSSQL_URL") else {
        eprintln!("skipped: EAVPIVOT_MSSQL_URL is not set");
        return;
    };
    let mut db = servers::sqlite();
    db.what = "mssql";
    db.url = url;
    runtime().block_on(run_all(&db));
}

async fn run_all(server: &servers::Db) {
    let what = server.what;
    let Some(mut db) = server.open().await else {
        return;
    };
    let db = db.as_mut();
    let source = format!("infer{}_src", std::process::id());
    let target = format!("infer{}_wide", std::process::id());
    kv_table(db, what, &source, false, ROWS)
        .await
        .expect("source rows");
    let mut failures = Vec::new();
    if let Err(e) = check_verification_by_value(db, what, &source).await {
        failures.push(format!("{what} verification by value: {e}"));
    }
    for strategy in [StrategyName::Pushdown, StrategyName::Stream] {
        if let Err(e) = check_defaults(db, what, &source, &target, strategy).await {
            failures.push(format!("{what} {strategy:?} defaults: {e}"));
        }
        if let Err(e) = check_exact_text(db, what, &source, &target, strategy).await {
            failures.push(format!("{what} {strategy:?} exact/text: {e}"));
        }
        if let Err(e) = check_merge_headroom(db, what, &source, strategy).await {
            failures.push(format!("{what} {strategy:?} merge with headroom: {e}"));
        }
    }
    for t in [&target, &source] {
        let _ = db.execute(&format!("DROP TABLE {t}")).await;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The point of headroom: a first load with a counter at 6,771, a weight of 27.8 and an
/// empty label, then a merge of 40,000, 128.5 and a longer label (more fractional digits than the first
/// load is the merge widening of issue 21.2, not headroom). Exact widths would have
/// made SMALLINT, DECIMAL(3,1) and MariaDB VARCHAR(1); with the defaults the delta fits the
/// columns the first load created and every cell is kept (by value).
async fn check_merge_headroom(
    db: &mut dyn Backend,
    dialect: &str,
    source: &str,
    strategy: StrategyName,
) -> Result<(), String> {
    let (table, wide) = (format!("{source}_m"), format!("{source}_mw"));
    let _ = db.execute(&format!("DROP TABLE {wide}")).await;
    let first = [
        (1, "counter", "6771"),
        (1, "weight", "27.8"),
        (1, "label", ""),
    ];
    let delta = [
        (2, "counter", "40000"),
        (2, "weight", "128.5"),
        (2, "label", "a label of some length"),
    ];
    kv_table(db, dialect, &table, false, &first).await?;
    let job = fixture::job(
        "infer_merge",
        &table,
        "val",
        "column_type: infer",
        &wide,
        "merge",
    );
    let mut result = Ok(());
    for (run, rows) in [("first load", None), ("merge", Some(&delta))] {
        if let Some(rows) = rows {
            insert_rows(db, dialect, &table, false, rows).await?;
        }
        if let Err(e) = run_job(&job, db, &run_options(strategy)).await {
            result = Err(format!("{run} failed: {e}"));
            break;
        }
    }
    if result.is_ok() {
        let columns: Vec<String> = ["counter", "weight", "label"].map(String::from).to_vec();
        let got = printed(db, &wide, &columns).await;
        let want: Vec<String> = first
            .iter()
            .chain(&delta)
            .filter(|(e, a, v)| {
                let cell = got.get(&(*e, a.to_string()));
                cell.is_none_or(|c| by_value(c) != by_value(v))
            })
            .map(|(e, a, v)| {
                format!(
                    "({e}, {a}): source {v:?}, target {:?}",
                    got.get(&(*e, a.to_string()))
                )
            })
            .collect();
        if !want.is_empty() {
            result = Err(format!("cells differ: {}", want.join("; ")));
        }
    }
    for t in [&table, &wide] {
        let _ = db.execute(&format!("DROP TABLE {t}")).await;
    }
    result
}

/// The typed check in value mode counts exactly the values the column does not hold by
/// value: `12.5`, `12.50` and `5` fit a DECIMAL(4,1), `12.55` rounds to `12.6`, `1e1` is
/// spelled otherwise; in text mode `12.50` and `5` count too (they print `12.5`, `5.0`).
async fn check_verification_by_value(
    db: &mut dyn Backend,
    dialect: &str,
    source: &str,
) -> Result<(), String> {
    use eavpivot::dialect::{ColumnKind, PivotColumn, TableShape, Typed};
    let d = db.dialect();
    let kind = ColumnKind::Decimal {
        precision: 4,
        scale: 1,
    };
    if !d.stores(&kind) {
        return Ok(()); // SQLite keeps decimals as text: nothing to convert.
    }
    let table = format!("{source}_p");
    let rows: Vec<Row> = ["12.5", "12.50", "5", "12.55", "1e1"]
        .into_iter()
        .zip(0..)
        .map(|(v, i)| (i, "p", v))
        .collect();
    kv_table(db, dialect, &table, false, &rows).await?;
    let job = job(&table, "unused", "column_type: infer");
    let mut counts = Vec::new();
    for by_value in [true, false] {
        let mut column = PivotColumn::text("p", "p");
        column.typed = Some(Typed {
            sql_type: d.column_sql_type(&kind),
            kind: kind.clone(),
            why: String::new(),
            round_trips: true,
            by_value,
        });
        let shape = TableShape {
            table: config::TableRef::parse("unused").map_err(|e| e.to_string())?,
            entity: Vec::new(),
            columns: vec![column],
            column_type: d.text_type().into(),
            primary_key: false,
        };
        let sql = eavpivot::dialect::query::typed_round_trip(
            d,
            std::slice::from_ref(&shape),
            &eavpivot::plan::source_query(&job),
            false,
        )
        .ok_or("no check")?;
        let rows = db.query(&sql).await.map_err(|e| format!("{e}: {sql}"))?;
        counts.push(rows[0][0].as_i64());
    }
    let _ = db.execute(&format!("DROP TABLE {table}")).await;
    if counts != [Some(2), Some(4)] {
        return Err(format!(
            "by value / as text: {counts:?} differing values, expected 2 and 4"
        ));
    }
    Ok(())
}

fn job(source: &str, target: &str, pivot: &str) -> config::Job {
    fixture::job("infer_modes", source, "val", pivot, target, "replace")
}

/// A number's or timestamp's text without trailing fractional zeros: `12.50` → `12.5`,
/// `5.0` → `5`: two texts of one value compare equal.
fn by_value(text: &str) -> String {
    if !text.contains('.') {
        return text.to_string();
    }
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Every source cell against the target: by value in the by-value columns, else exactly.
fn compare_cells(got: &BTreeMap<(i64, String), String>, by_value_columns: &[&str]) -> Vec<String> {
    let mut diffs = Vec::new();
    for (e, a, v) in ROWS {
        let key = (*e, a.to_string());
        let cell = got.get(&key);
        let same = match cell {
            Some(c) if by_value_columns.contains(a) => by_value(c) == by_value(v),
            Some(c) => c == v,
            None => false,
        };
        if !same {
            diffs.push(format!("{key:?}: source {v:?}, target {cell:?}"));
        }
    }
    if got.len() != ROWS.len() {
        diffs.push(format!(
            "{} cells for {} source values",
            got.len(),
            ROWS.len()
        ));
    }
    diffs
}

async fn check_defaults(
    db: &mut dyn Backend,
    dialect: &str,
    source: &str,
    target: &str,
    strategy: StrategyName,
) -> Result<(), String> {
    let outcome = run_job(
        &job(source, target, "column_type: infer"),
        db,
        &run_options(strategy),
    )
    .await
    .map_err(|e| format!("run failed: {e}"))?;
    let catalog = catalog_types(db, dialect, target).await;
    for c in &outcome.report.columns {
        let want = default_type(dialect, &c.attribute);
        if catalog.get(&c.column).map(String::as_str) != Some(want) {
            return Err(format!(
                "column {}: catalog says {:?}, expected {want} (plan: {} — {:?})",
                c.column,
                catalog.get(&c.column),
                c.sql_type,
                c.type_reason
            ));
        }
    }
    let reason = |attribute: &str| {
        outcome
            .report
            .columns
            .iter()
            .find(|c| c.attribute == attribute)
            .and_then(|c| c.type_reason.clone())
            .unwrap_or_default()
    };
    let counter = reason("counter");
    if !counter.starts_with("int, headroom (exact: smallint): integers from 12 to 6771") {
        return Err(format!("counter's reason does not say headroom: {counter}"));
    }
    let weight = reason("weight");
    if dialect != "sqlite" && !weight.contains("by value") {
        return Err(format!("weight's reason does not say by value: {weight}"));
    }
    let columns: Vec<String> = outcome
        .report
        .columns
        .iter()
        .map(|c| c.column.clone())
        .collect();
    let diffs = compare_cells(&printed(db, target, &columns).await, BY_VALUE);
    if !diffs.is_empty() {
        return Err(format!("cells differ: {}", diffs.join("; ")));
    }
    Ok(())
}

/// `widths: exact, numbers: text`: SMALLINT for the counter, and `1.25`/`12.5` stay text
/// (DECIMAL(4,2) would print `12.50`); every cell exactly as written.
async fn check_exact_text(
    db: &mut dyn Backend,
    dialect: &str,
    source: &str,
    target: &str,
    strategy: StrategyName,
) -> Result<(), String> {
    let pivot = "column_type: infer, infer: { widths: exact, numbers: text }";
    let outcome = run_job(&job(source, target, pivot), db, &run_options(strategy))
        .await
        .map_err(|e| format!("run failed: {e}"))?;
    let catalog = catalog_types(db, dialect, target).await;
    let (counter, weight) = match dialect {
        "sqlite" => ("integer", "text"),
        "postgres" => ("smallint", "text"),
        "mariadb" => ("smallint", "varchar(5)"),
        _ => ("smallint", "nvarchar(5)"),
    };
    for (column, want) in [("counter", counter), ("weight", weight)] {
        if catalog.get(column).map(String::as_str) != Some(want) {
            return Err(format!(
                "{column}: catalog says {:?}, expected {want} ({:?})",
                catalog.get(column),
                outcome.report.columns
            ));
        }
    }
    let columns: Vec<String> = outcome
        .report
        .columns
        .iter()
        .map(|c| c.column.clone())
        .collect();
    let diffs = compare_cells(&printed(db, target, &columns).await, &[]);
    // The timestamps of mixed fractions are text in this mode, so every cell is exact.
    if !diffs.is_empty() {
        return Err(format!("cells differ: {}", diffs.join("; ")));
    }
    Ok(())
}

/// 21.4: on SQLite, `pivot.types: {price: "DECIMAL(12,4)"}` would have stored `149.9900` as
/// the REAL 149.99 and `82.0` as 82; the column is TEXT, the plan says why, and every value
/// is kept as written, on both strategies. An INT override stays INTEGER.
#[test]
fn sqlite_declared_decimal_keeps_the_text() {
    runtime().block_on(async {
        let server = servers::sqlite();
        let Some(mut db) = server.open().await else {
            return;
        };
        let db = db.as_mut();
        db.execute("CREATE TABLE kv (id INT, attr TEXT, val TEXT)")
            .await
            .expect("source");
        db.execute(
            "INSERT INTO kv VALUES (1, 'price', '149.9900'), (2, 'price', '82.0'), \
             (1, 'qty', '82'), (2, 'qty', '-3')",
        )
        .await
        .expect("rows");
        for strategy in [StrategyName::Pushdown, StrategyName::Stream] {
            let job = job(
                "kv",
                "wide",
                "types: { price: \"DECIMAL(12,4)\", qty: INT }",
            );
            let outcome = run_job(&job, db, &run_options(strategy))
                .await
                .expect("run");
            assert!(
                outcome.report.notes.iter().any(|n| n.contains(
                    "'price' is declared DECIMAL(12,4) but stored as TEXT: SQLite's NUMERIC affinity"
                )),
                "{strategy:?}: {:?}",
                outcome.report.notes
            );
            let sql = "SELECT id, typeof(price), price, typeof(qty), qty FROM wide ORDER BY id";
            let got = servers::text_rows(db, sql).await;
            assert_eq!(
                got,
                [
                    ["1", "text", "149.9900", "integer", "82"],
                    ["2", "text", "82.0", "integer", "-3"]
                ],
                "{strategy:?}"
            );
        }
    });
}
