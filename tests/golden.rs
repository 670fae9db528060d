//! Golden SQL: every bundled job (config/*.yaml) × every dialect renders, through the same
//! dry-run loop a real run uses, to the committed file tests/golden/<dialect>/<job>.sql.
//! Attributes come from the job's real SQLite sample data; other dialects get them through a
//! scripted backend, so no server is needed. A mismatch prints both texts in full;
//! `EAVPIVOT_BLESS=1 cargo test --test golden` rewrites the files.
//!
//! Suite `golden` (this file's own tests, and the modules below): SQL text checked without a
//! server — golden files, and independent parsers (`sqlparser`) over what each dialect
//! renders: the standalone scripts, every statement for SQL Server.
//!
//! Where a new test goes: into the suite of its concern, as `tests/<suite>/<file>.rs` with a
//! `mod` line here; it uses the support modules declared here (`crate::servers`, …), never its
//! own `#[path]` copy. Each binary links every driver, so a new binary costs a link on every
//! build: only a test that cannot share a process gets one (it sets environment variables or
//! the working directory, signals its own process, or uses process-wide state such as the
//! interrupt flag — see `interrupt.rs`). Tests of one binary run in parallel, across files too:
//! server table and database names carry a prefix of their file and `std::process::id()`.

#[path = "support/dry_run.rs"]
mod dry_run;
#[path = "support/scripted_backend.rs"]
mod scripted_backend;

#[path = "golden/layers.rs"]
mod layers;
#[path = "golden/mssql_tsql_parse.rs"]
mod mssql_tsql_parse;
#[path = "golden/oracle_parse.rs"]
mod oracle_parse;
#[path = "golden/script_parse.rs"]
mod script_parse;

use std::path::{Path, PathBuf};

use eavpivot::backend::sqlite::SqliteBackend;
use eavpivot::backend::Backend;
use eavpivot::config::{self, Job};
use eavpivot::dialect::prelude::*;
use eavpivot::dialect::{self, Sqlite};
use eavpivot::execute::{self, RunOptions};
use eavpivot::report;
use scripted_backend::ScriptedBackend;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bundled_jobs() -> Vec<PathBuf> {
    let mut jobs: Vec<PathBuf> = std::fs::read_dir(repo().join("config"))
        .expect("config/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    jobs.sort();
    assert!(!jobs.is_empty(), "no bundled jobs found");
    jobs
}

/// Attribute names and counts from the job's SQLite sample data.
async fn sample_attributes(job: &Job) -> Vec<(String, i64, i64)> {
    let mut db = SqliteBackend::in_memory().expect("in-memory sqlite");
    let setup = job
        .setup
        .as_deref()
        .expect("bundled jobs carry sample data")
        .replace("{dialect}", "sqlite");
    let script = std::fs::read_to_string(repo().join(&setup)).expect("sample data readable");
    db.execute_script(&script).await.expect("sample data loads");
    let rows = db
        .query(&eavpivot::dialect::query::discover_attributes(
            &Sqlite,
            &eavpivot::plan::source_query(job),
        ))
        .await
        .expect("discovery");
    rows.into_iter()
        .filter_map(|r| {
            let name = r[0].as_text()?;
            Some((name, r[1].as_i64()?, r[2].as_i64()?))
        })
        .collect()
}

async fn render(job: &Job, dialect: &'static dyn Dialect, attrs: &[(String, i64, i64)]) -> String {
    let mut backend = ScriptedBackend::new(dialect, attrs.to_vec(), job.entity.len());
    let options = RunOptions {
        dry_run: true,
        ..RunOptions::default()
    };
    let outcome = execute::run_job(job, &mut backend, &options)
        .await
        .unwrap_or_else(|e| panic!("{} on {} failed to render: {e}", job.name, dialect.name()));
    let mut report = outcome.report;
    report.connection = "golden test, no connection".into();
    normalize_run_tags(&report::dry_run_script(&report, &report.statement_log))
}

/// Staging names and marks carry a tag unique to each run (`ITEM_WIDE__eavpivot_1a2b3c4d`,
/// `COMMENT = 'eavpivot job j run 1a2b3c4d'`); the golden files show it as `RUNTAG` so that
/// they stay comparable.
fn normalize_run_tags(sql: &str) -> String {
    ["__eavpivot_", " run "]
        .iter()
        .fold(sql.to_string(), |text, marker| {
            normalize_after(&text, marker)
        })
}

fn normalize_after(sql: &str, marker: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find(marker) {
        let (head, tail) = rest.split_at(at + marker.len());
        out.push_str(head);
        let tail = tail.strip_prefix("old_").map_or(tail, |t| {
            out.push_str("old_");
            t
        });
        let tag_len = tail.bytes().take_while(u8::is_ascii_hexdigit).count();
        if tag_len == 8 {
            out.push_str("RUNTAG");
            rest = &tail[8..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

fn compare_or_bless(path: &Path, got: &str) -> Option<String> {
    if std::env::var_os("EAVPIVOT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("golden dir")).expect("create golden dir");
        std::fs::write(path, got).expect("write golden file");
        return None;
    }
    let want = std::fs::read_to_string(path).unwrap_or_default();
    (want != got).then(|| {
        format!(
            "golden mismatch: {}\n===== expected (committed) =====\n{want}\n===== got =====\n{got}\n(re-bless with EAVPIVOT_BLESS=1 cargo test --test golden)",
            path.display()
        )
    })
}

#[tokio::test]
async fn every_bundled_job_renders_its_golden_sql_in_every_dialect() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in bundled_jobs() {
        let job = config::load_job(&path).expect("bundled job is valid");
        let attrs = sample_attributes(&job).await;
        assert!(
            !attrs.is_empty(),
            "{}: sample data has no attributes",
            job.name
        );
        for d in dialect::ALL {
            let got = render(&job, d, &attrs).await;
            let golden = repo()
                .join("tests/golden")
                .join(d.name())
                .join(format!("{}.sql", job.name));
            failures.extend(compare_or_bless(&golden, &got));
            checked += 1;
        }
    }
    assert!(
        checked >= 4,
        "expected at least one job in four dialects, checked {checked}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[tokio::test]
async fn dry_run_cli_prints_the_golden_sqlite_statements() {
    // The CLI's --dry-run on the embedded default must print the same statements.
    let dir = tempfile::tempdir().expect("temp dir");
    let out = assert_cmd::Command::cargo_bin("eavpivot")
        .expect("binary")
        .current_dir(dir.path())
        .args([
            "run",
            &repo().join("config/item_detail.yaml").display().to_string(),
            "--dry-run",
        ])
        .env_remove("EAVPIVOT_CONNECTION")
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    let golden = std::fs::read_to_string(repo().join("tests/golden/sqlite/item_detail.sql"))
        .expect("golden");
    let body = |s: &str| {
        s.lines()
            .skip_while(|l| l.starts_with("--"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&printed), body(&golden));
    assert!(
        !dir.path().join("eavpivot.db").exists(),
        "a dry run must not create the database file"
    );
}
