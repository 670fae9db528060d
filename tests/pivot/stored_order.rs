//! Issue 20, item 4: on PostgreSQL, a source stored in entity order and larger than the
//! cache the planner assumes is read along its index by both strategies (the planner would
//! otherwise sort or hash it through temp files at 100M rows). The plan says so, the
//! settings are sent where they act (the pushdown's transaction, the stream's read
//! connection) and reset after, a source not stored in that order gets none, and the
//! result is the same table either way.

use crate::servers;
use eavpivot::backend::Backend;
use eavpivot::config::{self, StrategyName};
use eavpivot::dialect::{Postgres, Query};
use eavpivot::execute::{run_job, Outcome, RunOptions};
use eavpivot::plan::PlanOptions;
use eavpivot::value::{first_int, Value};
use servers::{connect_or_skip, drop_if_exists, fingerprint, postgres, runtime};

const SET: &str = "SET effective_cache_size";
const RESET: &str = "RESET effective_cache_size";

fn options(strategy: StrategyName) -> RunOptions {
    RunOptions {
        plan: PlanOptions {
            strategy: Some(strategy),
            ..PlanOptions::default()
        },
        no_progress: true,
        ..RunOptions::default()
    }
}

fn sent(outcome: &Outcome, needle: &str) -> bool {
    let log = &outcome.report.statement_log;
    log.iter().any(|s| s.sql.starts_with(needle))
}

fn order_note(outcome: &Outcome) -> Option<&String> {
    let notes = &outcome.report.notes;
    notes.iter().find(|n| n.contains("planned as one pass"))
}

/// 2,000 entities × 5 attributes with a primary key (id, attr); `shuffled` inserts the
/// same rows in a hashed order, so the heap does not follow `id`.
async fn make_source(db: &mut dyn Backend, table: &str, shuffled: bool) {
    drop_if_exists(db, table).await;
    let order = match shuffled {
        true => "ORDER BY md5(i::text)",
        false => "ORDER BY i",
    };
    db.execute_script(&format!(
        "CREATE TABLE {table} (id INTEGER NOT NULL, attr TEXT NOT NULL, val TEXT, PRIMARY KEY (id, attr));
         INSERT INTO {table} SELECT i / 5, 'a' || (i % 5), 'v' || i FROM generate_series(0, 9999) i {order};"
    ))
    .await
    .expect("make source");
    analyze(db, table).await;
}

/// ANALYZE once the writes before it are counted, so that their count is not added after it
/// (the statistics would then look stale).
async fn analyze(db: &mut dyn Backend, table: &str) {
    db.execute("SELECT pg_stat_force_next_flush()")
        .await
        .expect("flush the write counts");
    db.execute(&format!("ANALYZE {table}"))
        .await
        .expect("analyze");
}

async fn pivot(db: &mut dyn Backend, source: &str, target: &str, how: StrategyName) -> Outcome {
    pivot_where(db, source, "", target, how).await
}

/// With `scope` as `source.where` when not empty.
async fn pivot_where(
    db: &mut dyn Backend,
    source: &str,
    scope: &str,
    target: &str,
    how: StrategyName,
) -> Outcome {
    let text = job_text(source, scope, target);
    let job = config::parse_job(&text, std::path::Path::new("j.yaml")).expect("job");
    run_job(&job, db, &options(how))
        .await
        .unwrap_or_else(|e| panic!("{source} by {how:?}: {e}"))
}

/// The job pivoting `source` (scoped by `scope` as `source.where` when not empty) into
/// `target`, replacing it.
fn job_text(source: &str, scope: &str, target: &str) -> String {
    let scope = match scope {
        "" => String::new(),
        s => format!(", where: \"{s}\""),
    };
    format!(
        "name: {target}\nsource: {{ table: {source}, alias: k{scope} }}\nentity: [k.id]\nattribute: k.attr\nvalue: k.val\ntarget: {{ table: {target}, if_exists: replace }}\n"
    )
}

/// The plan of the stream's ordered read on `db` as it stands.
async fn read_plan(db: &mut dyn Backend, table: &str) -> String {
    let rows = db
        .query(&format!(
            "EXPLAIN SELECT id, attr, val FROM {table} ORDER BY id"
        ))
        .await
        .expect("explain");
    let lines: Vec<String> = rows
        .iter()
        .filter_map(|r| r.first().and_then(|v| v.as_text()))
        .collect();
    lines.join("\n")
}

#[test]
fn a_source_stored_in_entity_order_is_read_along_its_index_on_postgres() {
    runtime().block_on(async {
        let db = postgres();
        // The planner is told a cache of one page, so this small table is "larger": the
        // 100M-row case in miniature (BENCHMARKS.md, "100 million rows").
        let joiner = if db.url.contains('?') { '&' } else { '?' };
        let url = format!("{}{joiner}options=-ceffective_cache_size%3D8kB", db.url);
        let Some(mut conn) = connect_or_skip("postgres", &url).await else {
            return;
        };
        let conn = conn.as_mut();
        let p = format!("sorder{}", std::process::id());
        let (ordered, shuffled) = (format!("{p}_ordered"), format!("{p}_shuffled"));
        make_source(conn, &ordered, false).await;
        make_source(conn, &shuffled, true).await;

        // The mechanism: at the connection's cache the read sorts; with the settings the
        // dialect gives for this table's bytes, it walks the primary key.
        let before = read_plan(conn, &ordered).await;
        assert!(before.contains("Sort"), "{before}");
        let size = format!("SELECT pg_relation_size('{ordered}') + pg_indexes_size('{ordered}')");
        let bytes = first_int(&conn.query(&size).await.expect("size"));
        let (set, reset) = Postgres.stored_order_settings(bytes);
        for s in &set {
            conn.execute(s).await.expect("set");
        }
        let after = read_plan(conn, &ordered).await;
        assert!(after.contains("Index Scan"), "{after}");
        assert!(!after.contains("Sort"), "{after}");
        for s in &reset {
            conn.execute(s).await.expect("reset");
        }
        let reset_plan = read_plan(conn, &ordered).await;
        assert!(reset_plan.contains("Sort"), "reset: {reset_plan}");
        // The stream reads on a connection of its own: the settings go there.
        conn.set_read_settings(set.clone()).expect("read settings");
        let shown = "SELECT current_setting('effective_cache_size')";
        let mut read = conn.read_ahead(shown).expect("start the read");
        let mut got = Vec::new();
        while let Some(chunk) = read.next().await.expect("read") {
            got.extend(chunk);
        }
        let want = (bytes as u64).div_ceil(1 << 20);
        assert_eq!(got, [[Value::Text(format!("{want}MB"))]], "{set:?}");
        conn.set_read_settings(Vec::new())
            .expect("no read settings");

        for how in [StrategyName::Pushdown, StrategyName::Stream] {
            let (wide_ordered, wide_shuffled) = (format!("{p}_w1"), format!("{p}_w2"));
            let out = pivot(conn, &ordered, &wide_ordered, how).await;
            let note = order_note(&out).unwrap_or_else(|| panic!("{how:?}: no note"));
            assert!(note.contains(&ordered) && note.contains(SET), "{note}");
            assert!(note.contains("assumes cached (8 kB)"), "{note}");
            assert!(sent(&out, SET), "{how:?}: the setting was not sent");
            // The pushdown's connection goes on: its setting ends with the pivot. The
            // stream's read connection ends with the read.
            let resets = matches!(how, StrategyName::Pushdown);
            assert_eq!(sent(&out, RESET), resets, "{how:?}");
            assert_eq!(out.report.rows_written, 2000, "{how:?}");
            assert_eq!(out.report.cells_written, 10000, "{how:?}");

            let out = pivot(conn, &shuffled, &wide_shuffled, how).await;
            assert!(
                order_note(&out).is_none(),
                "{how:?}: {:?}",
                out.report.notes
            );
            assert!(!sent(&out, SET), "{how:?}: a shuffled heap got the setting");
            assert_eq!(
                fingerprint(conn, &wide_ordered).await,
                fingerprint(conn, &wide_shuffled).await,
                "{how:?}: the two sources hold the same rows"
            );
            // Back at the connection's own setting after the run.
            let plan = read_plan(conn, &ordered).await;
            assert!(plan.contains("Sort"), "{how:?} left the setting on: {plan}");
            drop_if_exists(conn, &wide_ordered).await;
            drop_if_exists(conn, &wide_shuffled).await;
        }

        // Rewritten in another order since its ANALYZE: the statistics still say "in
        // order", but more than a tenth of the rows changed since. Nothing is set.
        let stale = format!("{p}_stale");
        make_source(conn, &stale, false).await;
        conn.execute_script(&format!(
            "CREATE TEMP TABLE {p}_rows AS SELECT * FROM {stale};
             DELETE FROM {stale};
             INSERT INTO {stale} SELECT * FROM {p}_rows ORDER BY md5(id::text || attr);
             SELECT pg_stat_force_next_flush();"
        ))
        .await
        .expect("rewrite");
        // The counts arrive once the transaction that wrote them has ended.
        conn.execute("SELECT 1").await.expect("flush");
        let target = format!("{p}_w5");
        let out = pivot(conn, &stale, &target, StrategyName::Stream).await;
        assert!(order_note(&out).is_none(), "stale: {:?}", out.report.notes);
        assert!(!sent(&out, SET));
        drop_if_exists(conn, &target).await;
        drop_if_exists(conn, &stale).await;

        // A scope on anything but the entity may lead the planner to another index, which
        // the order says nothing about: nothing is set. A range of the entity (a merge by
        // ranges, docs/resume.md) is read along the same index: set.
        let target = format!("{p}_w4");
        for (scope, set) in [("k.val <> 'x'", false), ("k.id >= 1000", true)] {
            let out = pivot_where(conn, &ordered, scope, &target, StrategyName::Pushdown).await;
            assert_eq!(
                order_note(&out).is_some(),
                set,
                "{scope}: {:?}",
                out.report.notes
            );
            assert_eq!(sent(&out, SET), set, "{scope}");
            let rows = if set { 1000 } else { 2000 };
            assert_eq!(out.report.rows_written, rows, "{scope}");
            drop_if_exists(conn, &target).await;
        }

        // Into another database: the setting goes to the source's read connection.
        let dir = tempfile::tempdir().expect("temp dir");
        let job = dir.path().join("cross.yaml");
        std::fs::write(&job, job_text(&ordered, "", "wide")).expect("job file");
        let sqlite = format!("sqlite:{}", dir.path().join("t.db").display());
        let job = job.display().to_string();
        let args = ["run", &job, "--target-connection", &sqlite, "--verbose"];
        let out = servers::run(&args, &url);
        let err = servers::stderr(&out);
        assert!(out.status.success(), "{err}");
        assert!(err.contains("planned as one pass"), "{err}");
        assert!(
            err.contains("each later read's connection runs first:\nSET effective_cache_size"),
            "{err}"
        );
        assert!(err.contains("2000 rows, 10000 non-null cells"), "{err}");

        // At the server's own cache size (4 GB by default) this table fits: nothing is set.
        if let Some(mut plain) = db.open().await {
            let target = format!("{p}_w3");
            let out = pivot(plain.as_mut(), &ordered, &target, StrategyName::Pushdown).await;
            assert!(order_note(&out).is_none(), "{:?}", out.report.notes);
            assert!(!sent(&out, SET));
            drop_if_exists(plain.as_mut(), &target).await;
        }
        drop_if_exists(conn, &ordered).await;
        drop_if_exists(conn, &shuffled).await;
    });
}
