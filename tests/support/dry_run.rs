//! The dry run of a bundled job on any dialect, with no server: the statements a parser test
//! checks. The including test declares `mod scripted_backend` (support/scripted_backend.rs).

use std::path::PathBuf;

use eavpivot::backend::sqlite::SqliteBackend;
use eavpivot::backend::Backend;
use eavpivot::config::{self, Job, StrategyName};
use eavpivot::dialect::{query, Dialect, Sqlite};
use eavpivot::execute::{self, RunOptions};
use eavpivot::plan::PlanOptions;

use super::scripted_backend::ScriptedBackend;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every bundled job (config/*.yaml), in name order.
pub fn bundled_jobs() -> Vec<Job> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(repo().join("config"))
        .expect("config/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| config::load_job(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect()
}

/// The attribute names of the job's SQLite sample data: realistic input for the dry run.
pub async fn sample_attributes(job: &Job) -> Vec<(String, i64, i64)> {
    let mut db = SqliteBackend::in_memory().expect("in-memory sqlite");
    let setup = job
        .setup
        .as_deref()
        .expect("sample data")
        .replace("{dialect}", "sqlite");
    let script = std::fs::read_to_string(repo().join(setup)).expect("sample data readable");
    db.execute_script(&script).await.expect("sample data loads");
    let rows = db
        .query(&query::discover_attributes(
            &Sqlite,
            &eavpivot::plan::source_query(job),
        ))
        .await
        .expect("discovery");
    rows.into_iter()
        .filter_map(|r| Some((r[0].as_text()?, r[1].as_i64()?, r[2].as_i64()?)))
        .collect()
}

/// Every statement a dry run of `job` on `dialect` with `strategy` logs.
pub async fn dry_run_statements(
    dialect: &'static dyn Dialect,
    job: &Job,
    strategy: StrategyName,
) -> Vec<String> {
    let attrs = sample_attributes(job).await;
    let mut backend = ScriptedBackend::new(dialect, attrs, job.entity.len());
    let options = RunOptions {
        dry_run: true,
        plan: PlanOptions {
            strategy: Some(strategy),
            ..PlanOptions::default()
        },
        ..RunOptions::default()
    };
    let outcome = execute::run_job(job, &mut backend, &options)
        .await
        .unwrap_or_else(|e| panic!("{}: dry run failed: {e}", job.name));
    outcome.report.statements
}
