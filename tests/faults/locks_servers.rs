//! A lock held by another session makes a run fail within `lock_timeout` (plus a little),
//! with one line naming the lock, instead of hanging; nothing is left behind, and the same run
//! succeeds once the lock is released. PostgreSQL (ACCESS EXCLUSIVE on the source) and
//! MariaDB (`LOCK TABLES … WRITE` on the source, and on the target so that the final RENAME
//! is what waits). Servers from EAVPIVOT_PG_URL / EAVPIVOT_MARIADB_URL (default: the local
//! ones), skipped when unreachable unless `EAVPIVOT_REQUIRE_SERVERS=1`.

use crate::db_children;
use crate::servers;

use std::time::Duration;

use db_children::*;
use servers::{mariadb, postgres, runtime};

/// `--lock-timeout` for these runs: short, to keep the file fast.
const TIMEOUT: u64 = 2;
/// What a timed-out run may take beyond the timeout (connect, discovery, rollback).
const SLACK: Duration = Duration::from_secs(4);

/// Once the lock is released the same run succeeds: 101 entities pivoted. Then clean up.
async fn rerun_succeeds(
    db: &mut dyn eavpivot::backend::Backend,
    url: &str,
    job: &std::path::Path,
    kv: &str,
    wide: &str,
) {
    let again = start(job, url, &["--lock-timeout", &TIMEOUT.to_string()]);
    let (status, stderr, _) = finish(again, Duration::from_secs(60)).await;
    assert_eq!(status.code(), Some(0), "re-run after release: {stderr}");
    let rows = count(db, &format!("SELECT COUNT(*) FROM {wide}")).await;
    assert_eq!(rows, 101, "re-run after release");
    drop_tables(db, &[kv, wide]).await;
}

#[test]
fn postgres_lock_on_the_source_times_out_with_its_holder() {
    runtime().block_on(async {
        let server = postgres();
        let url = &server.url;
        let Some((mut db, mut holder)) = two_connections(&server).await else {
            return;
        };
        let (kv, wide) = table_names("lk");
        create_source(db.as_mut(), &kv, &pg_rows(300), &[&kv, &wide]).await;
        let dir = tempfile::tempdir().expect("temp dir");
        let job = write_job(dir.path(), &kv, &wide, "k.val", "");
        holder.execute("BEGIN").await.expect("begin");
        holder
            .execute(&format!("LOCK TABLE {kv} IN ACCESS EXCLUSIVE MODE"))
            .await
            .expect("lock");
        let holder_pid = count(holder.as_mut(), "SELECT pg_backend_pid()").await;

        let run = start(&job, url, &["--lock-timeout", &TIMEOUT.to_string()]);
        let (status, stderr, took) = finish(run, Duration::from_secs(TIMEOUT) + SLACK * 2).await;
        assert_eq!(status.code(), Some(1), "{stderr}");
        assert!(
            took < Duration::from_secs(TIMEOUT) + SLACK,
            "took {took:?}: {stderr}"
        );
        let held = format!("on {kv} (held by pid {holder_pid}, ");
        assert!(
            stderr.contains(&format!("waiting for a lock {held}")),
            "no waiting line: {stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "lock_timeout {TIMEOUT} s expired waiting for a lock {held}"
            )),
            "no timeout line: {stderr}"
        );
        let exists = format!("SELECT COUNT(*) FROM pg_class WHERE relname = '{wide}'");
        holder.execute("ROLLBACK").await.expect("release");
        assert_eq!(count(db.as_mut(), &exists).await, 0, "target left behind");

        rerun_succeeds(db.as_mut(), url, &job, &kv, &wide).await;
    });
}

#[test]
fn mariadb_locks_on_source_and_target_time_out_and_leave_nothing() {
    runtime().block_on(async {
        let server = mariadb();
        let url = &server.url;
        let Some((mut db, mut holder)) = two_connections(&server).await else {
            return;
        };
        let (kv, wide) = table_names("lk");
        let staging = format!("{wide}__eavpivot_new");
        create_source(
            db.as_mut(),
            &kv,
            &mariadb_rows(300),
            &[&kv, &wide, &staging],
        )
        .await;
        for sql in [
            format!("CREATE TABLE {wide} (id int, old varchar(10))"),
            format!("INSERT INTO {wide} VALUES (42, 'kept')"),
        ] {
            db.execute(&sql).await.expect("old target");
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let job = write_job(dir.path(), &kv, &wide, "k.val", ", if_exists: replace");
        let tables = |name: &str| {
            format!(
                "SELECT COUNT(*) FROM information_schema.TABLES \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{name}'"
            )
        };

        // The source locked: discovery waits, then gives up.
        for locked in [&kv, &wide] {
            holder
                .execute(&format!("LOCK TABLES {locked} WRITE"))
                .await
                .expect("lock");
            let run = start(&job, url, &["--lock-timeout", &TIMEOUT.to_string()]);
            let (status, stderr, took) =
                finish(run, Duration::from_secs(TIMEOUT) + SLACK * 2).await;
            holder.execute("UNLOCK TABLES").await.expect("release");
            assert_eq!(status.code(), Some(1), "{locked}: {stderr}");
            assert!(
                took < Duration::from_secs(TIMEOUT) + SLACK,
                "{locked}: took {took:?}: {stderr}"
            );
            assert!(
                stderr.contains(&format!(
                    "lock_timeout {TIMEOUT} s expired waiting for a lock"
                )),
                "{locked}: {stderr}"
            );
            assert!(stderr.contains("waiting for a lock"), "{locked}: {stderr}");
            assert_eq!(
                count(db.as_mut(), &tables(&staging)).await,
                0,
                "{locked}: staging left: {stderr}"
            );
            let old = db
                .query(&format!("SELECT old FROM {wide}"))
                .await
                .expect("old target");
            assert_eq!(old.len(), 1, "{locked}: old target replaced: {stderr}");
        }

        rerun_succeeds(db.as_mut(), url, &job, &kv, &wide).await;
    });
}
