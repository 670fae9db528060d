//! The fault suite's SQL Server leg (Babelfish in CI; any server at `EAVPIVOT_MSSQL_URL`):
//! the real binary killed with -9 at every point of its write path (both strategies, and
//! inside the stream), a server-side `KILL` of the writer's session before it commits, a
//! lock held by another session met with `--lock-timeout`, and Ctrl-C cancelling the running
//! statement. Afterwards the target is absent or the old one intact (or, once committed, the
//! new one), the source is unchanged, nothing is left behind and a re-run succeeds.
//!
//! The parts run in turn in one test: a run takes seconds on Babelfish, and one server's
//! sessions are easier to read one part at a time.
#![cfg(feature = "mssql")] // needs the mssql driver in the build

use crate::kv_fixture::{Fixture, Kv};
use crate::servers;

use std::process::Command;
use std::time::{Duration, Instant};

use eavpivot::backend::Backend;
use servers::*;

const ENTITIES: i64 = 300;
const ATTRIBUTES: i64 = 4;

/// A source of `ENTITIES` × `ATTRIBUTES` rows in `NVARCHAR` columns and the names of this
/// part's tables; `case` keeps the parts' tables apart.
async fn fixture(db: &mut dyn Backend, case: &str) -> Fixture {
    let prefix = format!("bbf_flt{}_{case}", std::process::id());
    Fixture::new(db, prefix, Kv::new(ENTITIES, ATTRIBUTES).national()).await
}

async fn staging_left(conn: &mut dyn Backend, db: &Db, fx: &Fixture) -> Vec<String> {
    names(conn, &(db.list_staging)(&fx.prefix)).await
}

/// One test, its parts in turn.
#[test]
fn mssql_faults_in_turn() {
    let Some(db) = mssql() else { return };
    let rt = runtime();
    let started = Instant::now();
    rt.block_on(kill_9_at_every_point(&db));
    rt.block_on(server_kill_of_the_writer(&db));
    rt.block_on(lock_held_by_another_session(&db));
    rt.block_on(ctrl_c_cancels_the_running_statement(&db));
    eprintln!(
        "mssql faults: {:.1} s, {} known Babelfish gap(s)",
        started.elapsed().as_secs_f64(),
        known_gaps()
    );
}

async fn kill_9_at_every_point(db: &Db) {
    {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let fx = fixture(conn.as_mut(), "rep").await;
        let source_before = fingerprint(conn.as_mut(), &fx.source).await;
        let job = fx.job(&fx.target, "replace");
        let job = job.to_str().expect("path");
        for strategy in ["pushdown", "stream"] {
            let args = ["run", job, "--strategy", strategy];
            drop_if_exists(conn.as_mut(), &fx.target).await;
            let first = run(&args, &db.url);
            assert!(first.status.success(), "first run: {}", stderr(&first));
            let mark = format!("DELETE FROM {} WHERE entity_id = 1", fx.target);
            conn.execute(&mark).await.expect("mark old target");
            let old = fingerprint(conn.as_mut(), &fx.target).await;
            let inside: &[&str] = match strategy {
                "stream" => &["stream:30", "stream:70", "stream:95"],
                _ => &[],
            };
            // DDL is transactional: the swap is part of the commit, no "swapped" point.
            for point in ["created", "loaded", "committed"].iter().chain(inside) {
                kill_9(start_paused(&args, &db.url, point));
                let now = fingerprint(conn.as_mut(), &fx.target).await;
                if *point == "committed" {
                    assert_eq!(now.0, ENTITIES as usize, "new target after {point}");
                } else {
                    assert_eq!(
                        now, old,
                        "{strategy}: old target intact after kill at {point}"
                    );
                }
                assert_eq!(fingerprint(conn.as_mut(), &fx.source).await, source_before);
                // Transactional DDL: the killed run's staging table went with its
                // transaction. (One re-run per strategy, below: a run takes seconds here.)
                let left = staging_left(conn.as_mut(), db, &fx).await;
                assert!(
                    left.is_empty(),
                    "staging tables left after kill at {point}: {left:?}"
                );
                if *point == "committed" {
                    conn.execute(&mark).await.expect("mark old target");
                }
            }
            let rerun = run(&args, &db.url);
            assert!(rerun.status.success(), "re-run: {}", stderr(&rerun));
            assert_eq!(
                fingerprint(conn.as_mut(), &fx.target).await.0,
                ENTITIES as usize
            );
        }
        // A killed first load of a new target leaves no target and no staging table.
        drop_if_exists(conn.as_mut(), &fx.target).await;
        let job = fx.job(&fx.target, "fail");
        let args = ["run", job.to_str().expect("path"), "--strategy", "stream"];
        kill_9(start_paused(&args, &db.url, "loaded"));
        assert!(
            !exists(conn.as_mut(), &fx.target).await,
            "no target after kill"
        );
        assert!(staging_left(conn.as_mut(), db, &fx).await.is_empty());
        let rerun = run(&args, &db.url);
        assert!(rerun.status.success(), "re-run: {}", stderr(&rerun));
        fx.drop_tables(conn.as_mut()).await;
    }
}

/// The sessions in database `name` other than `@@SPID`.
async fn sessions_in(conn: &mut dyn Backend, name: &str) -> Vec<i64> {
    conn.query(&format!(
        "SELECT session_id FROM sys.dm_exec_sessions WHERE session_id IS NOT NULL AND session_id <> @@SPID AND database_id = DB_ID(N'{name}')"
    ))
    .await
    .expect("sys.dm_exec_sessions")
    .into_iter()
    .filter_map(|r| r.first().and_then(|v| v.as_i64()))
    .collect()
}

/// The same server, database `name`.
fn in_database(url: &str, name: &str) -> String {
    let mut parsed = url::Url::parse(url).expect("EAVPIVOT_MSSQL_URL is a URL");
    parsed.set_path(name);
    parsed.to_string()
}

/// The writer's session is the one in a database of this test's own, where nothing else
/// connects (Babelfish has no `sys.dm_exec_requests` and keeps no client program name).
async fn server_kill_of_the_writer(db: &Db) {
    let Some(mut admin) = db.open().await else {
        return;
    };
    let name = format!("bbf_kw_{}", std::process::id());
    let _ = admin.execute(&format!("DROP DATABASE [{name}]")).await;
    admin
        .execute(&format!("CREATE DATABASE [{name}]"))
        .await
        .expect("CREATE DATABASE");
    let url = in_database(&db.url, &name);
    {
        let mut conn = connect_or_skip("mssql", &url)
            .await
            .expect("the scratch database");
        let fx = fixture(conn.as_mut(), "kw").await;
        let before = fingerprint(conn.as_mut(), &fx.source).await;
        let job = fx.job(&fx.target, "fail");
        let job = job.to_str().expect("path");
        let resume = fx.dir.path().join("resume");
        let args = ["run", job, "--strategy", "pushdown"];
        let (mut child, said) = start_resumable(&args, &url, "loaded", Some(&resume));
        let writer = sessions_in(conn.as_mut(), &name).await;
        assert_eq!(
            writer.len(),
            1,
            "one session besides ours, the writer's: {writer:?}"
        );
        conn.execute(&format!("KILL {}", writer[0]))
            .await
            .expect("KILL");
        std::fs::write(&resume, b"").expect("resume");
        let status = child.wait().expect("eavpivot ends");
        let lines: Vec<String> = said.iter().collect();
        let errors: Vec<&String> = lines.iter().filter(|l| l.contains("error")).collect();
        assert_eq!(status.code(), Some(1), "{lines:#?}");
        assert_eq!(errors.len(), 1, "one error line: {lines:#?}");
        assert!(!exists(conn.as_mut(), &fx.target).await, "no target");
        assert_eq!(fingerprint(conn.as_mut(), &fx.source).await, before);
        let rerun = run(&args, &url);
        assert!(rerun.status.success(), "re-run: {}", stderr(&rerun));
    }
    // Sessions of the ended runs may linger a moment (the killed one until the server has
    // rolled it back): end those still in the database, then drop it.
    let mut dropped = Err(String::new());
    for _ in 0..20 {
        dropped = admin
            .execute(&format!("DROP DATABASE [{name}]"))
            .await
            .map_err(|e| e.to_string());
        if dropped.is_ok() {
            break;
        }
        for id in sessions_in(admin.as_mut(), &name).await {
            let _ = admin.execute(&format!("KILL {id}")).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    if let Err(e) = dropped {
        panic!("DROP DATABASE {name}: {e}");
    }
}

async fn lock_held_by_another_session(db: &Db) {
    {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let fx = fixture(conn.as_mut(), "lk").await;
        let job = fx.job(&fx.target, "replace");
        let job = job.to_str().expect("path");
        let first = run(&["run", job], &db.url);
        assert!(first.status.success(), "first run: {}", stderr(&first));
        let old = fingerprint(conn.as_mut(), &fx.target).await;
        // Another session holds an exclusive lock on the target in an open transaction.
        let mut holder = db.open().await.expect("a second connection");
        holder
            .execute(&format!(
                "BEGIN TRANSACTION; UPDATE {} SET entity_id = entity_id WHERE entity_id = 1",
                fx.target
            ))
            .await
            .expect("take the lock");
        let started = Instant::now();
        let out = run(&["run", job, "--lock-timeout", "2"], &db.url);
        let took = started.elapsed();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(took < Duration::from_secs(30), "waited {took:?}: {err}");
        let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "one error line: {err}");
        assert!(errors[0].contains("lock"), "names the lock: {err}");
        holder
            .execute("IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION")
            .await
            .expect("release");
        drop(holder);
        assert_eq!(
            fingerprint(conn.as_mut(), &fx.target).await,
            old,
            "old target intact"
        );
        fx.drop_tables(conn.as_mut()).await;
    }
}

/// SIGINT while a slow statement runs: the binary sends an ATTENTION, the server stops the
/// statement, and the run exits 130 within seconds, leaving no target; the source is
/// readable at once (no statement of the run still holds it).
async fn ctrl_c_cancels_the_running_statement(db: &Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let babelfish = is_babelfish(conn.as_mut()).await;
    let fx = fixture(conn.as_mut(), "cc").await;
    // About two seconds per source row on Babelfish: a correlated count over 10^5 rows.
    let digits = "(VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9))";
    let cross: Vec<String> = (0..5).map(|k| format!("{digits} d{k}(v)")).collect();
    let slow = format!(
        "CAST((SELECT COUNT_BIG(*) FROM {} WHERE d0.v + s.entity_id > 0) AS NVARCHAR(20))",
        cross.join(" CROSS JOIN ")
    );
    let job = fx.job(&fx.target, "fail");
    let text = std::fs::read_to_string(&job)
        .expect("job")
        .replace("value: s.val", &format!("value: \"{slow}\""));
    std::fs::write(&job, text).expect("slow job");
    let job = job.to_str().expect("path");
    let mut child = eavpivot(&["run", job, "--strategy", "pushdown"], &db.url)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Connected and into its first statement.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let signalled = Instant::now();
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(sent.success());
    let status = child.wait().expect("eavpivot ends");
    let took = signalled.elapsed();
    let mut said = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut err, &mut said);
    }
    assert_eq!(status.code(), Some(130), "{said}");
    // Never both: a cancel that failed is not reported as done.
    assert!(
        !(said.contains("could not cancel") && said.contains("was cancelled on the server")),
        "{said}"
    );
    // Babelfish leaves the ATTENTION unacknowledged: the token stream ends without the DONE
    // (tiberius: "Never got a DONE token acknowledging the Attention") or, while the statement
    // still runs, nothing comes within eavpivot's bound on that wait (10 s).
    let unacknowledged = said.contains("acknowledging the Attention")
        || said.contains("did not acknowledge the cancel (TDS ATTENTION) within 10 s");
    if babelfish && said.contains("could not cancel the running statement") && unacknowledged {
        assert!(
            took < Duration::from_secs(15),
            "took {took:?} after SIGINT: {said}"
        );
        known_babelfish_gap(
            &format!("faults: Ctrl-C cancelling the running statement ({took:.1?})"),
            "Babelfish 4.2 does not acknowledge a TDS ATTENTION with a DONE token carrying the attention flag while the statement runs; eavpivot stops waiting after 10 s and closes the connection",
        );
    } else {
        assert!(
            took < Duration::from_secs(5),
            "took {took:?} after SIGINT: {said}"
        );
    }
    assert!(!exists(conn.as_mut(), &fx.target).await, "no target");
    let started = Instant::now();
    fingerprint(conn.as_mut(), &fx.source).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the source is free"
    );
    fx.drop_tables(conn.as_mut()).await;
}
