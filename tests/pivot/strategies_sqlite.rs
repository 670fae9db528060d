//! The two strategies must give identical tables: the same columns in the same order and the
//! same cells, on a generated source wide enough that `auto` would stream (120 attributes) and
//! awkward enough to matter (missing attributes, NULL values, conflicting duplicates, names
//! that differ only in case — in a `COLLATE NOCASE` column, which must not merge them —
//! quotes and spaces).

use std::path::Path;

use eavpivot::backend::{self, Backend, ConnectOptions, ConnectionSpec};
use eavpivot::config::{self, StrategyName};
use eavpivot::execute::{run_job, RunOptions};
use eavpivot::plan::PlanOptions;
use eavpivot::value::Value;

const ENTITIES: usize = 400;
const ATTRIBUTES: usize = 120;

fn attribute_name(a: usize) -> String {
    match a % 7 {
        0 => format!("Attr {a}"),
        1 => format!("attr {}", a - 1), // differs from an earlier one only in case
        2 => format!("it's \"{a}\""),
        _ => format!("attr_{a:03}"),
    }
}

/// Deterministic rows: most (entity, attribute) pairs present, some NULL, some duplicated
/// with a different value (so `aggregate: max` must pick the same winner both ways).
fn source_sql() -> String {
    let mut sql = String::from(
        "CREATE TABLE kv (id INTEGER NOT NULL, attr TEXT COLLATE NOCASE, val TEXT);\nBEGIN;\n",
    );
    for e in 0..ENTITIES {
        for a in 0..ATTRIBUTES {
            let h = (e * 31 + a * 17) % 23;
            if h == 0 {
                continue;
            }
            let name = attribute_name(a).replace('\'', "''");
            let val = if h == 1 {
                "NULL".to_string()
            } else {
                format!("'v{e}_{a}'")
            };
            sql.push_str(&format!("INSERT INTO kv VALUES ({e}, '{name}', {val});\n"));
            if h == 2 {
                sql.push_str(&format!(
                    "INSERT INTO kv VALUES ({e}, '{name}', 'w{e}_{a}');\n"
                ));
            }
        }
        if e % 50 == 0 {
            sql.push_str(&format!("INSERT INTO kv VALUES ({e}, NULL, 'no name');\n"));
        }
    }
    sql.push_str("COMMIT;\n");
    sql
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

async fn open(path: &Path) -> Box<dyn Backend> {
    let url = format!("sqlite:{}", path.display());
    let spec = ConnectionSpec::parse(Some(&url)).expect("connection string");
    let options = ConnectOptions {
        connect_timeout: std::time::Duration::from_secs(5),
        password: None,
    };
    backend::connect(&spec, &options)
        .await
        .expect("open sqlite")
}

/// Column names and every row of `wide`, ordered by the entity.
async fn read_wide(backend: &mut dyn Backend) -> (Vec<Option<String>>, Vec<Vec<Value>>) {
    let columns = backend
        .column_types("SELECT * FROM wide")
        .await
        .expect("describe wide");
    let names = backend
        .query("SELECT name FROM pragma_table_info('wide') ORDER BY cid")
        .await
        .expect("column names")
        .into_iter()
        .map(|r| r[0].as_text())
        .collect();
    assert_eq!(columns.len(), 1 + ATTRIBUTES, "one column per attribute");
    let rows = backend
        .query("SELECT * FROM wide ORDER BY id")
        .await
        .expect("read wide");
    (names, rows)
}

#[test]
fn stream_and_pushdown_give_identical_tables() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("strategies.db");
    rusqlite::Connection::open(&db)
        .and_then(|c| c.execute_batch(&source_sql()))
        .expect("source data");
    let job_path = dir.path().join("job.yaml");
    std::fs::write(
        &job_path,
        "name: strategies\nsource: { table: kv, alias: k }\nentity: [k.id]\nattribute: k.attr\nvalue: k.val\ntarget: { table: wide, if_exists: replace }\n",
    )
    .expect("job file");
    let job = config::load_job(&job_path).expect("job");
    runtime().block_on(async {
        let mut backend = open(&db).await;
        let mut tables = Vec::new();
        for strategy in [
            StrategyName::Pushdown,
            StrategyName::Stream,
            StrategyName::Auto,
        ] {
            let options = RunOptions {
                dry_run: false,
                plan: PlanOptions {
                    strategy: Some(strategy),
                    ..PlanOptions::default()
                },
                preview_rows: 0,
                no_progress: true,
            };
            let outcome = run_job(&job, backend.as_mut(), &options)
                .await
                .unwrap_or_else(|e| panic!("{strategy:?}: {e}"));
            assert_eq!(outcome.report.rows_written, ENTITIES as u64);
            assert!(
                outcome.report.conflicts > 0,
                "the source has conflicting duplicates"
            );
            if strategy == StrategyName::Auto {
                assert_eq!(
                    outcome.plan.strategy.as_str(),
                    "stream",
                    "{}",
                    outcome.plan.strategy_reason
                );
            }
            tables.push((
                strategy,
                outcome.report.conflicts,
                read_wide(backend.as_mut()).await,
            ));
        }
        let (_, conflicts, pushdown) = &tables[0];
        for (strategy, c, table) in &tables[1..] {
            assert_eq!(c, conflicts, "{strategy:?}: conflict count");
            assert_eq!(table.0, pushdown.0, "{strategy:?}: column names");
            assert_eq!(table.1.len(), pushdown.1.len(), "{strategy:?}: row count");
            for (got, want) in table.1.iter().zip(&pushdown.1) {
                assert_eq!(got, want, "{strategy:?}: row of entity {:?}", want[0]);
            }
        }
    });
}
