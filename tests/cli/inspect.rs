//! `eavpivot inspect`: on every bundled job through the real binary (writes nothing, not even
//! the embedded database file), and on a 1,000-attribute source whose figures are checked
//! against independent SQL, on SQLite always and on PostgreSQL when reachable (where the
//! typed plan needs one table and the text plan two).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use eavpivot::backend::sqlite::SqliteBackend;
use eavpivot::backend::Backend;
use servers::runtime;

use crate::servers;
use eavpivot::cli::inspect::inspect;
use eavpivot::config;
use eavpivot::execute::{run_job, RunOptions};
use eavpivot::value::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn int(rows: &[Vec<Value>]) -> u64 {
    rows[0][0].as_i64().expect("a count") as u64
}

#[test]
fn bundled_jobs_inspect_without_writing_and_match_sql() {
    let mut jobs: Vec<PathBuf> = std::fs::read_dir(repo().join("config"))
        .expect("config/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    jobs.sort();
    assert!(!jobs.is_empty());
    for path in jobs {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = Command::cargo_bin("eavpivot")
            .expect("binary")
            .current_dir(dir.path())
            .env_remove("EAVPIVOT_CONNECTION")
            .args(["inspect", "--json"])
            .arg(&path)
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stderr}", path.display());
        assert!(
            !dir.path().join("eavpivot.db").exists(),
            "{}: inspect created the embedded database",
            path.display()
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let job = config::load_job(&path).expect("job");
        let expected = runtime().block_on(sample_figures(&job));
        for (key, want) in expected {
            assert_eq!(
                report[key].as_u64(),
                Some(want),
                "{}: {key}",
                path.display()
            );
        }
        assert!(report["attributes"]
            .as_array()
            .is_some_and(|a| !a.is_empty()));
    }
}

/// Source rows and entities of a bundled job's SQLite sample data, by plain SQL.
async fn sample_figures(job: &config::Job) -> Vec<(&'static str, u64)> {
    let mut db = SqliteBackend::in_memory().expect("sqlite");
    let setup = job
        .setup
        .as_deref()
        .expect("sample data")
        .replace("{dialect}", "sqlite");
    let script = std::fs::read_to_string(repo().join(setup)).expect("setup file");
    db.execute_script(&script).await.expect("loads");
    let d = db.dialect();
    let rows = db
        .query(&format!(
            "SELECT COUNT(*) FROM ({}) s",
            eavpivot::dialect::query::source_rows(d, &eavpivot::plan::source_query(job))
        ))
        .await
        .expect("rows");
    let entities = db
        .query(&eavpivot::dialect::query::count_entities(
            d,
            &eavpivot::plan::source_query(job),
        ))
        .await
        .expect("entities");
    vec![("source_rows", int(&rows)), ("entities", int(&entities))]
}

const ATTRIBUTES: usize = 1_000;
const ENTITIES: i64 = 40;

/// 1,000 integer attributes of nine digits over 40 entities: attribute k is missing for
/// entities divisible by (k % 7 + 2), and entity 1 holds two values for every 100th.
async fn create_wide_source(db: &mut dyn Backend, table: &str) {
    let _ = db.execute(&format!("DROP TABLE {table}")).await;
    db.execute(&format!(
        "CREATE TABLE {table} (id INT, attr VARCHAR(20), val VARCHAR(20))"
    ))
    .await
    .expect("source");
    let mut rows = Vec::new();
    for k in 0..ATTRIBUTES {
        for e in 1..=ENTITIES {
            if e % (k as i64 % 7 + 2) == 0 {
                continue;
            }
            rows.push(format!(
                "({e}, 'a{k:04}', '{}')",
                100_000_000 + e * 1_000 + k as i64
            ));
            if e == 1 && k % 100 == 0 {
                rows.push(format!("({e}, 'a{k:04}', '{}')", 200_000_000 + k as i64));
            }
        }
    }
    for chunk in rows.chunks(500) {
        db.execute(&format!(
            "INSERT INTO {table} (id, attr, val) VALUES {}",
            chunk.join(", ")
        ))
        .await
        .expect("rows");
    }
}

fn wide_job(source: &str, target: &str, pivot: &str) -> config::Job {
    let text = format!(
        "name: wide\nsource: {{ table: {source} }}\nentity: [id]\nattribute: attr\nvalue: val\n\
         pivot: {{ {pivot} }}\ntarget: {{ table: {target}, if_exists: replace, split: auto }}\n"
    );
    config::parse_job(&text, Path::new("wide.yaml")).expect("job")
}

/// Per attribute (entities with a value, conflicting entities, min bytes, max bytes), by SQL.
async fn per_attribute_sql(db: &mut dyn Backend, source: &str) -> BTreeMap<String, [u64; 4]> {
    let rows = db
        .query(&format!(
            "SELECT p.attr, COUNT(*), SUM(CASE WHEN p.lo <> p.hi THEN 1 ELSE 0 END), MIN(p.wlo), MAX(p.whi)
             FROM (SELECT id, attr, MIN(val) AS lo, MAX(val) AS hi,
                          MIN(LENGTH(val)) AS wlo, MAX(LENGTH(val)) AS whi
                   FROM {source} WHERE val IS NOT NULL GROUP BY id, attr) p
             GROUP BY p.attr"
        ))
        .await
        .expect("per attribute");
    rows.into_iter()
        .map(|r| {
            let n = |i: usize| r[i].as_i64().expect("number") as u64;
            (r[0].as_text().expect("name"), [n(1), n(2), n(3), n(4)])
        })
        .collect()
}

async fn check_wide(db: &mut dyn Backend, what: &str) {
    let source = format!("insp{}_src", std::process::id());
    let target = format!("insp{}_wide", std::process::id());
    create_wide_source(db, &source).await;
    let job = wide_job(&source, &target, "column_type: text");
    let inspection = inspect(db, &job, what).await.expect("inspect");
    let sql = per_attribute_sql(db, &source).await;
    let total = db
        .query(&format!("SELECT COUNT(*) FROM {source}"))
        .await
        .expect("count");
    assert_eq!(inspection.source_rows, int(&total));
    assert_eq!(inspection.entities, ENTITIES as u64);
    assert_eq!(inspection.attributes_found, ATTRIBUTES);
    assert_eq!(inspection.conflicting_pairs, (ATTRIBUTES / 100) as u64);
    for a in &inspection.attributes {
        let want = sql[&a.attribute];
        let got = [
            a.entities,
            a.conflicting_entities,
            a.min_bytes.unwrap_or(0),
            a.max_bytes,
        ];
        assert_eq!(got, want, "{what}: {}", a.attribute);
        assert_eq!(
            a.sql_type.to_lowercase(),
            "integer",
            "{what}: {}",
            a.attribute
        );
    }
    if what == "postgres" {
        // Nine-digit text cells (10 bytes) overflow one 8,160-byte row; INT cells (4) do not.
        assert_eq!(inspection.plan.tables.len(), 2, "{:?}", inspection.plan);
        assert!(
            inspection
                .plan
                .warnings
                .iter()
                .any(|w| w.contains("would need 1 tables instead of 2")),
            "{:?}",
            inspection.plan.warnings
        );
        let typed = wide_job(&source, &target, "column_type: infer");
        let outcome = run_job(&typed, db, &RunOptions::default())
            .await
            .expect("typed run");
        assert_eq!(
            outcome.report.tables.len(),
            1,
            "{:?}",
            outcome.report.tables
        );
        let _ = db.execute(&format!("DROP TABLE {target}")).await;
    }
    let _ = db.execute(&format!("DROP TABLE {source}")).await;
}

#[test]
fn a_thousand_attributes_on_sqlite_match_sql() {
    let mut db = SqliteBackend::in_memory().expect("sqlite");
    runtime().block_on(check_wide(&mut db, "sqlite"));
}

#[test]
fn a_thousand_attributes_on_postgres_match_sql_and_fit_one_table_typed() {
    runtime().block_on(async {
        let Some(mut db) = servers::postgres().open().await else {
            return;
        };
        check_wide(db.as_mut(), "postgres").await;
    });
}
