//! SIGINT and SIGTERM stop the statement running on the server, not just eavpivot: the real
//! binary is signalled while its pushdown INSERT (or its discovery scan) runs, and must exit
//! with 130 / 143 within about two seconds, leave no statement running on the server and no
//! target table. The statements are made slow by a value expression that sleeps per row only
//! inside the statement under test (PostgreSQL `current_query()`, MariaDB's processlist), and
//! the signal is sent once the statement has run for a while in pg_stat_activity / the
//! processlist: eavpivot's quick probes (`… WHERE 1 = 0`, which describe the value and the
//! keys) match the same text, and a signal that lands just after one of them ends finds no
//! statement to cancel.
//! Servers from EAVPIVOT_PG_URL / EAVPIVOT_MARIADB_URL (default: the local ones), skipped
//! when unreachable unless `EAVPIVOT_REQUIRE_SERVERS=1`.

use crate::db_children;
use crate::servers;

use std::time::Duration;

use db_children::*;
use eavpivot::backend::Backend;
use servers::{mariadb, postgres, runtime};

/// From the signal to the process gone, at most.
const PROMPT: Duration = Duration::from_secs(2);

/// (statement that sleeps, signal, exit status)
const CASES: [(&str, &str, i32); 3] = [
    ("INSERT", "INT", 130),
    ("INSERT", "TERM", 143),
    ("SELECT", "INT", 130),
];

/// How long the statement under test must have run before the signal is sent.
const SLOW_MS: u32 = 300;

/// Run the job, signal it once `slow` finds its statement (`running`, running for
/// [`SLOW_MS`]), check the aftermath.
async fn interrupt_case(
    db: &mut dyn Backend,
    url: &str,
    job: &std::path::Path,
    running: &str,
    slow: &str,
    exists: &str,
    (statement, sig, code): (&str, &str, i32),
) {
    let case = format!("{statement} + SIG{sig}");
    let run = start(job, url, &[]);
    let seen = wait_until(db, slow, Duration::from_secs(20)).await;
    assert!(seen, "{case}: the slow statement never showed up");
    signal(&run, sig);
    let (status, stderr, took) = finish(run, Duration::from_secs(20)).await;
    eprintln!(
        "{case}: exit {:?} {took:?} after the signal:\n{stderr}",
        status.code()
    );
    assert_eq!(status.code(), Some(code), "{case}: {stderr}");
    assert!(
        took < PROMPT,
        "{case}: exited {took:?} after the signal: {stderr}"
    );
    let label = if sig == "INT" { "Ctrl-C" } else { "SIGTERM" };
    assert!(
        stderr.contains(&format!(
            "interrupted ({label}): the running statement was cancelled on the server"
        )),
        "{case}: {stderr}"
    );
    if statement == "INSERT" {
        assert!(stderr.contains("rolled back"), "{case}: {stderr}");
    }
    assert_eq!(
        count(db, running).await,
        0,
        "{case}: still running on the server"
    );
    assert_eq!(count(db, exists).await, 0, "{case}: target left behind");
}

#[test]
fn postgres_statements_are_cancelled_by_sigint_and_sigterm() {
    runtime().block_on(async {
        let server = postgres();
        let Some(mut db) = server.open().await else {
            return;
        };
        let (kv, wide) = table_names("cn");
        create_source(db.as_mut(), &kv, &pg_rows(3000), &[&kv, &wide]).await;
        let dir = tempfile::tempdir().expect("temp dir");
        let exists = format!("SELECT COUNT(*) FROM pg_class WHERE relname = '{wide}'");
        // Plain (or whatever the URL says), and TLS required: a server that requires TLS
        // refuses a cancel request sent in the clear, so the cancel must use the session's TLS.
        let joiner = if server.url.contains('?') { '&' } else { '?' };
        let tls = format!("{}{joiner}sslmode=require", server.url);
        for (url, case) in [server.url.as_str(), tls.as_str()]
            .into_iter()
            .flat_map(|url| CASES.iter().map(move |case| (url, *case)))
        {
            // 10 ms per row, 30 s per scan, in the statement under test only.
            let value = format!(
                "k.val || CASE WHEN current_query() LIKE '{}%' THEN pg_sleep(0.01)::text ELSE '' END",
                case.0
            );
            let job = write_job(dir.path(), &kv, &wide, &value, "");
            std::fs::write(&job, std::fs::read_to_string(&job).expect("job") + "strategy: pushdown\n")
                .expect("job");
            let running = format!(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE state = 'active' \
                 AND pid <> pg_backend_pid() AND query LIKE '{}%' AND query LIKE '%{kv}%'",
                case.0
            );
            let slow = format!(
                "{running} AND now() - query_start > interval '{SLOW_MS} milliseconds'"
            );
            interrupt_case(db.as_mut(), url, &job, &running, &slow, &exists, case).await;
        }
        drop_tables(db.as_mut(), &[&kv, &wide]).await;
    });
}

#[test]
fn mariadb_statements_are_cancelled_by_sigint_and_sigterm() {
    runtime().block_on(async {
        let server = mariadb();
        let url = &server.url;
        let Some(mut db) = server.open().await else {
            return;
        };
        let (kv, wide) = table_names("cn");
        let staging = format!("{wide}__eavpivot_new");
        create_source(
            db.as_mut(),
            &kv,
            &mariadb_rows(3000),
            &[&kv, &wide, &staging],
        )
        .await;
        let dir = tempfile::tempdir().expect("temp dir");
        let exists = format!(
            "SELECT COUNT(*) FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '{wide}%'"
        );
        for case in CASES {
            let value = format!(
                "CONCAT(k.val, IF((SELECT INFO FROM information_schema.PROCESSLIST \
                 WHERE ID = CONNECTION_ID()) LIKE '{}%', SLEEP(0.01), ''))",
                case.0
            );
            let job = write_job(dir.path(), &kv, &wide, &value, "");
            std::fs::write(
                &job,
                std::fs::read_to_string(&job).expect("job") + "strategy: pushdown\n",
            )
            .expect("job");
            let running = format!(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() \
                 AND INFO LIKE '{}%' AND INFO LIKE '%{kv}%'",
                case.0
            );
            let slow = format!("{running} AND TIME_MS > {SLOW_MS}");
            interrupt_case(db.as_mut(), url, &job, &running, &slow, &exists, case).await;
        }
        drop_tables(db.as_mut(), &[&kv, &wide]).await;
    });
}
