//! Ctrl-C during a load rolls back and says so, under both strategies: the existing target
//! keeps its old contents and no staging table is left. The interrupt is asked for through
//! `progress::interrupt` (what the Ctrl-C handler calls) before the run, which makes the test
//! deterministic: the stream checks before its first row, the pushdown before COMMIT.
//! In the `interrupt` binary, taking turns, because the flag is process-wide.

use eavpivot::backend::{self, ConnectOptions, ConnectionSpec};
use eavpivot::config::{self, StrategyName};
use eavpivot::execute::{progress, run_job, RunOptions};
use eavpivot::plan::PlanOptions;

#[test]
fn interrupt_rolls_back_and_keeps_the_old_target() {
    let _turn = crate::serial();
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("interrupt.db");
    rusqlite::Connection::open(&db)
        .and_then(|c| {
            c.execute_batch(
                "CREATE TABLE kv (id INTEGER, attr TEXT, val TEXT);
                 INSERT INTO kv VALUES (1, 'a', 'x'), (1, 'b', 'y'), (2, 'a', 'z');
                 CREATE TABLE wide (id INTEGER, old TEXT);
                 INSERT INTO wide VALUES (42, 'kept');",
            )
        })
        .expect("source and old target");
    let job_path = dir.path().join("job.yaml");
    std::fs::write(
        &job_path,
        "name: interrupt\nsource: { table: kv, alias: k }\nentity: [k.id]\nattribute: k.attr\nvalue: k.val\ntarget: { table: wide, if_exists: replace }\n",
    )
    .expect("job file");
    let job = config::load_job(&job_path).expect("job");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let spec = ConnectionSpec::parse(Some(&format!("sqlite:{}", db.display()))).expect("url");
        let options = ConnectOptions {
            connect_timeout: std::time::Duration::from_secs(5),
            password: None,
        };
        let mut backend = backend::connect(&spec, &options).await.expect("open");
        for strategy in [StrategyName::Stream, StrategyName::Pushdown] {
            let run = RunOptions {
                dry_run: false,
                plan: PlanOptions {
                    strategy: Some(strategy),
                    ..PlanOptions::default()
                },
                preview_rows: 0,
                no_progress: true,
            };
            progress::interrupt();
            let err = match run_job(&job, backend.as_mut(), &run).await {
                Ok(_) => panic!("{strategy:?}: an interrupted run must fail"),
                Err(e) => e.to_string(),
            };
            assert!(err.contains("interrupted"), "{strategy:?}: {err}");
            assert!(err.contains("rolled back"), "{strategy:?}: {err}");
            let old = backend
                .query("SELECT id, old FROM wide")
                .await
                .expect("old target");
            assert_eq!(old.len(), 1, "{strategy:?}: old target untouched");
            let staging = backend
                .query("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'wide_%'")
                .await
                .expect("staging");
            assert_eq!(
                staging[0][0].as_i64(),
                Some(0),
                "{strategy:?}: no staging table left"
            );
        }
        // The flag is cleared when the load ends: the next run succeeds.
        let run = RunOptions {
            dry_run: false,
            plan: PlanOptions::default(),
            preview_rows: 0,
            no_progress: true,
        };
        let outcome = run_job(&job, backend.as_mut(), &run)
            .await
            .expect("a later run");
        assert_eq!(outcome.report.rows_written, 2);
    });
}
