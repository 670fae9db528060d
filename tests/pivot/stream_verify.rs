//! The streaming strategy's verification before commit (src/execute/verify.rs): a row lost
//! between the database and the pivot must fail the job and leave nothing behind; a clean run
//! must not need the DISTINCT queries over the source. And the bulk loads must keep every
//! value exact (NULL vs '' vs text full of separators and escapes) on every reachable engine,
//! refusing, not truncating, what a column cannot hold.
//!
//! SQLite always; PostgreSQL and MariaDB from `EAVPIVOT_PG_URL` / `EAVPIVOT_MARIADB_URL`
//! (default: the local ones), skipped when unreachable unless `EAVPIVOT_REQUIRE_SERVERS=1`.

use std::path::Path;

use async_trait::async_trait;
use eavpivot::backend::{self, Backend, ConnectOptions, ConnectionSpec, LoadTarget, RowPipeline};
use eavpivot::config::{self, StrategyName};
use eavpivot::dialect::prelude::*;
use eavpivot::execute::{run_job, Outcome, RunOptions};
use eavpivot::plan::PlanOptions;
use eavpivot::value::Value;
use eavpivot::Result;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

async fn connect(url: &str) -> Result<Box<dyn Backend>> {
    let spec = ConnectionSpec::parse(Some(url)).expect("connection string");
    let options = ConnectOptions {
        connect_timeout: std::time::Duration::from_secs(5),
        password: None,
    };
    backend::connect(&spec, &options).await
}

/// A backend whose streamed read loses the source rows `lose` picks: what a driver or
/// network bug would do.
struct Lossy {
    inner: Box<dyn Backend>,
    lose: fn(&[Value]) -> bool,
}

struct LossyPipeline<'a> {
    inner: &'a mut dyn RowPipeline,
    lose: fn(&[Value]) -> bool,
}

impl RowPipeline for LossyPipeline<'_> {
    fn push(&mut self, row: Vec<Value>) -> Result<()> {
        if (self.lose)(&row) {
            return Ok(());
        }
        self.inner.push(row)
    }
    fn finish(&mut self) -> Result<()> {
        self.inner.finish()
    }
    fn take_ready(&mut self) -> Vec<Vec<Vec<Value>>> {
        self.inner.take_ready()
    }
    fn ready_rows(&self) -> usize {
        self.inner.ready_rows()
    }
}

#[async_trait]
impl Backend for Lossy {
    fn dialect(&self) -> &'static dyn Dialect {
        self.inner.dialect()
    }
    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Value>>> {
        self.inner.query(sql).await
    }
    async fn execute(&mut self, sql: &str) -> Result<u64> {
        self.inner.execute(sql).await
    }
    async fn execute_script(&mut self, sql: &str) -> Result<()> {
        self.inner.execute_script(sql).await
    }
    async fn column_types(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        self.inner.column_types(sql).await
    }
    async fn load_rows(&mut self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
        self.inner.load_rows(target, rows).await
    }
    async fn stream_into(
        &mut self,
        read_sql: &str,
        pipeline: &mut dyn RowPipeline,
        targets: &[LoadTarget],
    ) -> Result<Vec<u64>> {
        let mut lossy = LossyPipeline {
            inner: pipeline,
            lose: self.lose,
        };
        self.inner.stream_into(read_sql, &mut lossy, targets).await
    }
}

/// Entity 1: a, b (b twice, conflicting); 2: a; 3: b; 4: only a NULL value; 5: a, b.
const SOURCE: &str = "CREATE TABLE kv (id INTEGER NOT NULL, attr TEXT, val TEXT);
INSERT INTO kv VALUES (1, 'a', 'x'), (1, 'b', 'p'), (1, 'b', 'q'), (2, 'a', 'y'),
  (3, 'b', 'z'), (4, 'a', NULL), (5, 'a', 'u'), (5, 'b', 'w');";

fn job(column_type: Option<&str>) -> config::Job {
    let column_type = column_type
        .map(|t| format!("pivot: {{ column_type: \"{t}\" }}\n"))
        .unwrap_or_default();
    let yaml = format!(
        "name: stream_verify\nsource: {{ table: kv, alias: k }}\nentity: [k.id]\n\
         attribute: k.attr\nvalue: k.val\n{column_type}target: {{ table: wide, if_exists: replace }}\n"
    );
    config::parse_job(&yaml, Path::new("stream_verify.yaml")).expect("job")
}

fn stream() -> RunOptions {
    RunOptions {
        plan: PlanOptions {
            strategy: Some(StrategyName::Stream),
            ..PlanOptions::default()
        },
        ..RunOptions::default()
    }
}

async fn sqlite_with_source(dir: &Path) -> Box<dyn Backend> {
    let path = dir.join("verify.db");
    std::fs::write(&path, b"").expect("create db file");
    let mut db = connect(&format!("sqlite:{}", path.display()))
        .await
        .expect("open sqlite");
    db.execute_script(SOURCE).await.expect("source");
    db
}

async fn wide_exists(db: &mut dyn Backend) -> bool {
    let rows = db
        .query("SELECT COUNT(*) FROM sqlite_master WHERE name = 'wide'")
        .await
        .expect("catalog");
    rows[0][0] != Value::Int(0)
}

fn is(id: i64, attr: &str, row: &[Value]) -> bool {
    row.first() == Some(&Value::Int(id)) && row.get(1) == Some(&Value::Text(attr.into()))
}

/// Run over a backend that loses the rows `lose` picks; the job must fail verification.
fn lost_rows_fail(lose: fn(&[Value]) -> bool, what: &str) {
    runtime().block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let inner = sqlite_with_source(dir.path()).await;
        let mut db = Lossy { inner, lose };
        let err = match run_job(&job(None), &mut db, &stream()).await {
            Ok(_) => panic!("{what}: a run that lost rows committed"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("verification failed"), "{what}: {err}");
        assert!(err.contains("rolled back"), "{what}: {err}");
        assert!(
            !wide_exists(db.inner.as_mut()).await,
            "{what}: target left behind"
        );
    });
}

#[test]
fn a_lost_cell_is_caught_and_rolled_back() {
    lost_rows_fail(|r| is(3, "b", r), "entity 3's only value");
}

#[test]
fn a_lost_entity_is_caught_even_without_a_value() {
    // Entity 4 has no non-null value: only the row count can miss it.
    lost_rows_fail(|r| is(4, "a", r), "entity 4 (NULL only)");
}

fn log_has(outcome: &Outcome, text: &str) -> bool {
    outcome
        .report
        .statement_log
        .iter()
        .any(|s| s.sql.contains(text))
}

#[test]
fn a_clean_stream_needs_no_distinct_scan_of_the_source() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut db = sqlite_with_source(dir.path()).await;
        let outcome = run_job(&job(None), db.as_mut(), &stream())
            .await
            .expect("run");
        assert_eq!(outcome.report.rows_written, 5);
        assert!(
            !log_has(&outcome, "DISTINCT"),
            "integer keys in order: no DISTINCT query"
        );
        // A lost duplicate changes no cell count, yet the per-attribute count shows it and
        // verification falls back to the database's own count, which this run must pass.
        let mut lossy = Lossy {
            inner: db,
            lose: |r| is(1, "b", r) && r.get(2) == Some(&Value::Text("q".into())),
        };
        let outcome = run_job(&job(None), &mut lossy, &stream())
            .await
            .expect("cells still match the source");
        assert!(
            log_has(&outcome, "SELECT DISTINCT"),
            "fell back to the DISTINCT count"
        );
    });
}

#[test]
fn text_keys_are_counted_by_the_database() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut db = sqlite_with_source(dir.path()).await;
        db.execute_script("UPDATE kv SET id = 'k' || id")
            .await
            .expect("text keys");
        let outcome = run_job(&job(None), db.as_mut(), &stream())
            .await
            .expect("run");
        assert!(log_has(
            &outcome,
            "SELECT COUNT(*) FROM (SELECT DISTINCT s.e0 FROM"
        ));
        assert!(!log_has(&outcome, "SELECT DISTINCT s.e0, s.a"));
    });
}

/// Values that break naive bulk formats: separators, escapes, the NULL markers as text.
fn hostile_values(dialect: &str) -> Vec<Option<String>> {
    let mut values: Vec<Option<String>> = [
        "",
        "\t",
        "a\tb",
        "line1\nline2",
        "crlf\r\n",
        "back\\slash",
        "\\",
        "\\N",
        "N",
        "NULL",
        "\\t literally",
        "\\x41 \\101 \\\\N",
        "\u{1}\u{7}\u{8}\u{b}\u{c}\u{1b}\u{7f}",
        "'quoted' \"twice\"",
        " padded ",
        "Grüße 日本語 😀",
        ",;|",
    ]
    .iter()
    .map(|s| Some(s.to_string()))
    .collect();
    values.push(None);
    if dialect != "postgres" {
        values.push(Some("nul\0byte".into())); // PostgreSQL text cannot hold NUL
    }
    values
}

async fn hostile_round_trip(db: &mut dyn Backend) {
    let dialect = db.dialect();
    let values = hostile_values(dialect.name());
    let table = format!("evs{}_kv", std::process::id());
    let target = format!("evs{}_wide", std::process::id());
    let _ = db.execute(&format!("DROP TABLE IF EXISTS {target}")).await;
    db.execute(&format!("DROP TABLE IF EXISTS {table}"))
        .await
        .expect("drop");
    let text = if dialect.name() == "mariadb" {
        "LONGTEXT"
    } else {
        "TEXT"
    };
    db.execute(&format!(
        "CREATE TABLE {table} (id INTEGER NOT NULL, attr VARCHAR(20), val {text})"
    ))
    .await
    .expect("create source");
    let mut rows = Vec::new();
    for (i, v) in values.iter().enumerate() {
        rows.push(vec![
            Value::Int(i as i64),
            Value::Text("v".into()),
            v.clone().map_or(Value::Null, Value::Text),
        ]);
    }
    let load = LoadTarget {
        table: config::TableRef::parse(&table).expect("name"),
        columns: vec!["id".into(), "attr".into(), "val".into()],
    };
    db.load_rows(&load, &rows).await.expect("load source");
    let yaml = format!(
        "name: hostile\nsource: {{ table: {table}, alias: k }}\nentity: [k.id]\n\
         attribute: k.attr\nvalue: k.val\ntarget: {{ table: {target}, if_exists: replace }}\n"
    );
    let job = config::parse_job(&yaml, Path::new("hostile.yaml")).expect("job");
    let run = run_job(&job, db, &stream()).await;
    let got = db
        .query(&format!("SELECT id, v FROM {target} ORDER BY id"))
        .await;
    let _ = db.execute(&format!("DROP TABLE {target}")).await;
    let _ = db.execute(&format!("DROP TABLE {table}")).await;
    run.expect("stream run");
    let got = got.expect("read back");
    assert_eq!(got.len(), values.len(), "{}", dialect.name());
    for (row, want) in got.iter().zip(&values) {
        let have = match &row[1] {
            Value::Null => None,
            Value::Text(s) => Some(s.clone()),
            Value::Bytes(b) => Some(String::from_utf8(b.clone()).expect("utf-8")),
            other => Some(other.to_string()),
        };
        assert_eq!(&have, want, "{} id {:?}", dialect.name(), row[0]);
    }
}

/// Connect to a server, or skip (fail under EAVPIVOT_REQUIRE_SERVERS=1).
async fn server(var: &str, default: &str) -> Option<Box<dyn Backend>> {
    let url = std::env::var(var).unwrap_or_else(|_| default.into());
    match connect(&url).await {
        Ok(db) => Some(db),
        Err(e) if std::env::var("EAVPIVOT_REQUIRE_SERVERS").as_deref() == Ok("1") => {
            panic!("{url} is required (EAVPIVOT_REQUIRE_SERVERS=1) but unreachable: {e}")
        }
        Err(e) => {
            eprintln!("skipped: {url} is unreachable: {e}");
            None
        }
    }
}

#[test]
fn hostile_values_survive_the_stream_on_sqlite() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("hostile.db");
        std::fs::write(&path, b"").expect("create db file");
        let mut db = connect(&format!("sqlite:{}", path.display()))
            .await
            .expect("open");
        hostile_round_trip(db.as_mut()).await;
    });
}

#[test]
fn hostile_values_survive_the_stream_on_postgres() {
    runtime().block_on(async {
        if let Some(mut db) = server("EAVPIVOT_PG_URL", "postgres://root@127.0.0.1:5432/test").await
        {
            hostile_round_trip(db.as_mut()).await;
        }
    });
}

/// The stream's read (COPY's text format on PostgreSQL) returns exactly what a plain query
/// (the simple protocol) returns: hostile text, a lone empty string (an empty COPY line),
/// NULL and the text `\N`, and the column types the backend decodes itself.
#[test]
fn the_streamed_read_returns_what_a_query_returns_on_postgres() {
    runtime().block_on(async {
        let Some(mut db) = server("EAVPIVOT_PG_URL", "postgres://root@127.0.0.1:5432/test").await
        else {
            return;
        };
        let texts = hostile_values("postgres");
        let literal = |v: &Option<String>| match v {
            Some(s) => format!("'{}'", s.replace('\'', "''")),
            None => "NULL".into(),
        };
        let one_column = texts
            .iter()
            .chain([&Some(String::new())])
            .enumerate()
            .map(|(i, v)| format!("SELECT {i} AS i, {} AS v", literal(v)))
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let queries = [
            format!("SELECT v FROM ({one_column}) t ORDER BY i"),
            format!("SELECT i, v, octet_length(v) AS b FROM ({one_column}) t ORDER BY i"),
            "SELECT 42::int2, -7::int8, 2.5::float8, true, false, '\\x00ff0a'::bytea, \
             12.50::numeric(6,2), DATE '2024-02-29', '{\"a\": \"b\\tc\"}'::jsonb, NULL::int4"
                .to_string(),
        ];
        for sql in &queries {
            let want = db.query(sql).await.expect("query");
            let mut read = db.read_ahead(sql).expect("start the read");
            let mut got = Vec::new();
            while let Some(chunk) = read.next().await.expect("read rows") {
                got.extend(chunk);
            }
            assert_eq!(got, want, "{sql}");
            assert!(!want.is_empty(), "{sql}");
        }
    });
}

#[test]
fn hostile_values_survive_the_stream_on_mariadb() {
    runtime().block_on(async {
        if let Some(mut db) =
            server("EAVPIVOT_MARIADB_URL", "mariadb://root@127.0.0.1:3306/test").await
        {
            hostile_round_trip(db.as_mut()).await;
        }
    });
}

#[test]
fn mariadb_bulk_load_refuses_what_a_column_cannot_hold() {
    // LOAD DATA LOCAL turns "data too long" into a warning and truncates; the load must fail.
    runtime().block_on(async {
        let Some(mut db) =
            server("EAVPIVOT_MARIADB_URL", "mariadb://root@127.0.0.1:3306/test").await
        else {
            return;
        };
        let table = format!("evt{}_kv", std::process::id());
        let target = format!("evt{}_wide", std::process::id());
        db.execute(&format!("DROP TABLE IF EXISTS {table}"))
            .await
            .expect("drop");
        db.execute(&format!(
            "CREATE TABLE {table} (id INT NOT NULL, attr VARCHAR(9), val VARCHAR(20))"
        ))
        .await
        .expect("create");
        db.execute(&format!(
            "INSERT INTO {table} VALUES (1, 'a', 'ok'), (2, 'a', 'far too long')"
        ))
        .await
        .expect("insert");
        let yaml = format!(
            "name: narrow\nsource: {{ table: {table}, alias: k }}\nentity: [k.id]\n\
             attribute: k.attr\nvalue: k.val\npivot: {{ column_type: \"VARCHAR(3)\" }}\n\
             target: {{ table: {target}, if_exists: replace }}\n"
        );
        let job = config::parse_job(&yaml, Path::new("narrow.yaml")).expect("job");
        let run = run_job(&job, db.as_mut(), &stream()).await;
        let left = db
            .query(&format!(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'evt{}%wide%'",
                std::process::id()
            ))
            .await
            .expect("catalog");
        let _ = db.execute(&format!("DROP TABLE {table}")).await;
        let err = run.err().expect("a value longer than its column must fail the load");
        assert!(err.to_string().contains("rolled back"), "{err}");
        assert_eq!(left[0][0], Value::Int(0), "nothing left behind: {err}");
    });
}
