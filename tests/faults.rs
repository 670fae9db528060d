//! The fault suite: the real binary, run against SQLite, PostgreSQL and MariaDB, is refused,
//! killed with -9 at chosen points of its write path, or run twice at once, and afterwards:
//! the target is absent or the old target intact (or, once committed, the new one), the source
//! is unchanged (row count and checksum), and a re-run succeeds and leaves no staging table.
//!
//! Kill points are chosen by progress, not time: `EAVPIVOT_FAULT_PAUSE=<point>` makes the
//! binary stop at that point of the write path (created, loaded, committed, swapped), say so
//! on stderr and wait; the test kills it there.
//!
//! Servers come from `EAVPIVOT_PG_URL` / `EAVPIVOT_MARIADB_URL` (default: the local ones);
//! unreachable ones are skipped with a message unless `EAVPIVOT_REQUIRE_SERVERS=1`.
//!
//! Suite `faults` (this file's own tests, and the modules below): runs refused, killed,
//! interrupted, signalled, raced or made to wait for a lock — issue 17's fault cases, the
//! same-database guard, SIGINT/SIGTERM cancelling the server's statement, lock timeouts.
//!
//! Where a new test goes: into the suite of its concern, as `tests/<suite>/<file>.rs` with a
//! `mod` line here; it uses the support modules declared here (`crate::servers`, …), never its
//! own `#[path]` copy. Each binary links every driver, so a new binary costs a link on every
//! build: only a test that cannot share a process gets one (it sets environment variables or
//! the working directory, signals its own process, or uses process-wide state such as the
//! interrupt flag — see `interrupt.rs`). Tests of one binary run in parallel, across files too:
//! server table and database names carry a prefix of their file and `std::process::id()`.

#[path = "support/db_children.rs"]
mod db_children;
#[path = "support/kv_fixture.rs"]
mod kv_fixture;
#[path = "support/servers.rs"]
mod servers;

#[path = "faults/cancel_servers.rs"]
mod cancel_servers;
#[path = "faults/citus.rs"]
mod citus;
#[path = "faults/error_kinds.rs"]
mod error_kinds;
#[path = "faults/faults_more.rs"]
mod faults_more;
#[path = "faults/guard.rs"]
mod guard;
#[path = "faults/locks_servers.rs"]
mod locks_servers;

use std::io::{BufRead, BufReader};
use std::process::Command;
use std::time::Duration;

use eavpivot::backend::Backend;
use kv_fixture::{user_table, Fixture, Kv};
use servers::*;

const ENTITIES: i64 = 300;
const ATTRIBUTES: i64 = 4;

/// A source of `ENTITIES` × `ATTRIBUTES` rows and the names of this test's tables; `case`
/// keeps the tables of tests running at the same time apart.
async fn fixture(db: &mut dyn Backend, what: &str, case: &str) -> Fixture {
    let prefix = format!("flt{}_{what}_{case}", std::process::id());
    Fixture::new(db, prefix, Kv::new(ENTITIES, ATTRIBUTES)).await
}

/// Defect 1: a target that is the source (by another spelling too) or a joined table is
/// refused with exit 2 before anything runs, and the source is untouched.
async fn target_is_source(db: &Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let fx = fixture(conn.as_mut(), db.what, "src").await;
    let before = fingerprint(conn.as_mut(), &fx.source).await;
    let mut spellings = vec![fx.source.clone()];
    match db.what {
        // Unquoted names fold to lower case; `public` is on the search_path.
        "postgres" => spellings.extend([fx.source.to_uppercase(), format!("public.{}", fx.source)]),
        "sqlite" => spellings.extend([fx.source.to_uppercase(), format!("main.{}", fx.source)]),
        _ => spellings.push(format!("test.{}", fx.source)),
    }
    for target in &spellings {
        for if_exists in ["replace", "append", "fail"] {
            for strategy in ["pushdown", "stream"] {
                let job = fx.job(target, if_exists);
                let out = run(
                    &["run", job.to_str().expect("path"), "--strategy", strategy],
                    &db.url,
                );
                let err = stderr(&out);
                assert_eq!(
                    out.status.code(),
                    Some(2),
                    "{}: target {target} ({if_exists}, {strategy}) must be refused: {err}",
                    db.what
                );
                assert!(err.contains("is the source table"), "{err}");
                assert_eq!(
                    err.lines().filter(|l| l.contains("error")).count(),
                    1,
                    "one error line: {err}"
                );
            }
        }
    }
    assert_eq!(fingerprint(conn.as_mut(), &fx.source).await, before);
    drop_if_exists(conn.as_mut(), &fx.source).await;
}

/// Defect 7 and the write path's promise under kill -9: at every point of a `replace`, the
/// old target stays until the new one is committed, the source never changes, and the next
/// run cleans up whatever was left and succeeds.
async fn kill_during_replace(db: &Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let fx = fixture(conn.as_mut(), db.what, "rep").await;
    let source_before = fingerprint(conn.as_mut(), &fx.source).await;
    let job = fx.job(&fx.target, "replace");
    let job = job.to_str().expect("path");
    for strategy in ["pushdown", "stream"] {
        let args = ["run", job, "--strategy", strategy];
        // The old target: a first full run.
        drop_if_exists(conn.as_mut(), &fx.target).await;
        let first = run(&args, &db.url);
        assert!(first.status.success(), "first run: {}", stderr(&first));
        let old = fingerprint(conn.as_mut(), &fx.target).await;
        assert_eq!(old.0, ENTITIES as usize);
        // Make the old target recognisable: one row less than a fresh run writes.
        conn.execute(&format!("DELETE FROM {} WHERE entity_id = 1", fx.target))
            .await
            .expect("mark old target");
        let old = fingerprint(conn.as_mut(), &fx.target).await;
        // Between the write path's steps, and inside the stream at 30, 70 and 95 % of the
        // source rows (chosen by progress, not time).
        let mid_stream = ["stream:30", "stream:70", "stream:95"];
        let inside = if strategy == "stream" {
            &mid_stream[..]
        } else {
            &[]
        };
        for point in ["created", "loaded", "committed", "swapped"]
            .iter()
            .chain(inside)
            .copied()
        {
            let swapped_after_commit = db.what == "mariadb";
            if point == "swapped" && !swapped_after_commit {
                continue; // transactional DDL: the swap is part of the commit
            }
            let child = start_paused(&args, &db.url, point);
            kill_9(child);
            let now = fingerprint(conn.as_mut(), &fx.target).await;
            let committed = point == "committed" && !swapped_after_commit || point == "swapped";
            if committed {
                assert_eq!(
                    now.0, ENTITIES as usize,
                    "{}: new target after {point}",
                    db.what
                );
            } else {
                assert_eq!(
                    now, old,
                    "{} {strategy}: old target intact after kill at {point}",
                    db.what
                );
            }
            assert_eq!(fingerprint(conn.as_mut(), &fx.source).await, source_before);
            // The next run cleans up what the killed one left, and succeeds.
            let rerun = run(&args, &db.url);
            let err = stderr(&rerun);
            assert!(
                rerun.status.success(),
                "{} re-run after kill at {point}: {err}",
                db.what
            );
            let left = names(conn.as_mut(), &(db.list_staging)(&fx.prefix)).await;
            assert!(
                left.is_empty(),
                "{}: staging tables left after re-run: {left:?}",
                db.what
            );
            assert_eq!(
                fingerprint(conn.as_mut(), &fx.target).await.0,
                ENTITIES as usize
            );
            // Back to the recognisable old target for the next kill point.
            conn.execute(&format!("DELETE FROM {} WHERE entity_id = 1", fx.target))
                .await
                .expect("mark old target");
            assert_eq!(fingerprint(conn.as_mut(), &fx.target).await, old);
        }
    }
    fx.drop_tables(conn.as_mut()).await;
}

/// A killed first run of a new target leaves no target; the re-run says what it cleaned up
/// (MariaDB, where the staging table outlives the process) and succeeds.
async fn kill_during_first_load(db: &Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let fx = fixture(conn.as_mut(), db.what, "new").await;
    let job = fx.job(&fx.target, "fail");
    let args = ["run", job.to_str().expect("path"), "--strategy", "stream"];
    let child = start_paused(&args, &db.url, "loaded");
    kill_9(child);
    assert!(
        !exists(conn.as_mut(), &fx.target).await,
        "no target after kill"
    );
    let left = names(conn.as_mut(), &(db.list_staging)(&fx.prefix)).await;
    // Only where DDL is not transactional does a staging table outlive the killed process.
    assert_eq!(
        left.is_empty(),
        db.what != "mariadb",
        "{}: after kill: {left:?}",
        db.what
    );
    let rerun = run(&args, &db.url);
    let err = stderr(&rerun);
    assert!(rerun.status.success(), "re-run: {err}");
    for table in &left {
        assert!(
            err.contains(&format!("dropped {table}")),
            "the re-run says it dropped {table}: {err}"
        );
    }
    assert!(names(conn.as_mut(), &(db.list_staging)(&fx.prefix))
        .await
        .is_empty());
    fx.drop_tables(conn.as_mut()).await;
}

#[test]
fn sqlite_refuses_writing_its_source() {
    runtime().block_on(target_is_source(&sqlite()));
}

#[test]
fn postgres_refuses_writing_its_source() {
    runtime().block_on(target_is_source(&postgres()));
}

#[test]
fn mariadb_refuses_writing_its_source() {
    runtime().block_on(target_is_source(&mariadb()));
}

#[test]
fn sqlite_survives_kill_9_during_replace() {
    runtime().block_on(kill_during_replace(&sqlite()));
}

#[test]
fn postgres_survives_kill_9_during_replace() {
    runtime().block_on(kill_during_replace(&postgres()));
}

#[test]
fn mariadb_survives_kill_9_during_replace() {
    runtime().block_on(kill_during_replace(&mariadb()));
}

#[test]
fn sqlite_survives_kill_9_during_first_load() {
    runtime().block_on(kill_during_first_load(&sqlite()));
}

#[test]
fn postgres_survives_kill_9_during_first_load() {
    runtime().block_on(kill_during_first_load(&postgres()));
}

#[test]
fn mariadb_survives_kill_9_during_first_load() {
    runtime().block_on(kill_during_first_load(&mariadb()));
}

/// Defect 4: a user's table named like an old fixed staging name is never touched, and a
/// second run of the same target while one is running is refused at once, naming why.
#[test]
fn mariadb_never_drops_a_table_it_did_not_create_and_keeps_concurrent_runs_apart() {
    runtime().block_on(async {
        let db = mariadb();
        let Some(mut conn) = db.open().await else {
            return;
        };
        let fx = fixture(conn.as_mut(), db.what, "own").await;
        let users = format!("{}__eavpivot_new", fx.target);
        user_table(conn.as_mut(), &users).await;
        let job = fx.job(&fx.target, "fail");
        let job = job.to_str().expect("path");
        let out = run(&["run", job], &db.url);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            fingerprint(conn.as_mut(), &users).await.0,
            1,
            "user table kept"
        );

        let job = fx.job(&fx.target, "replace");
        let args = ["run", job.to_str().expect("path"), "--strategy", "stream"];
        let first = start_paused(&args, &db.url, "loaded");
        let second = run(&args, &db.url);
        let err = stderr(&second);
        assert_eq!(second.status.code(), Some(1), "{err}");
        assert!(err.contains("another eavpivot run"), "{err}");
        kill_9(first);
        let third = run(&args, &db.url);
        assert!(third.status.success(), "{}", stderr(&third));
        assert_eq!(
            fingerprint(conn.as_mut(), &users).await.0,
            1,
            "user table kept"
        );
        let left = names(conn.as_mut(), &(db.list_staging)(&fx.prefix)).await;
        assert_eq!(
            left,
            vec![users.clone()],
            "only the user's own table remains"
        );
        for t in [&fx.source, &fx.target, &users] {
            drop_if_exists(conn.as_mut(), t).await;
        }
    });
}

/// Disk full: SQLite on a small tmpfs (when the test runs as root and may mount; else skipped
/// with a message). The load fails with one line, the target is absent, the source unchanged,
/// and once there is room the same run succeeds.
#[test]
fn sqlite_disk_full_rolls_back_and_a_rerun_succeeds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).expect("mount point");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=7m", "tmpfs"])
        .arg(&mnt)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !mounted {
        eprintln!("skipped: cannot mount a small tmpfs here (needs root and mount rights)");
        return;
    }
    let unmount = |m: &std::path::Path| {
        let _ = Command::new("umount").arg(m).status();
    };
    let result = std::panic::catch_unwind(|| disk_full_case(&mnt));
    unmount(&mnt);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

fn disk_full_case(mnt: &std::path::Path) {
    let path = mnt.join("full.db");
    std::fs::write(&path, b"").expect("db file");
    let url = format!("sqlite:{}", path.display());
    let db = Db {
        what: "sqlite",
        url: url.clone(),
        list_staging: |p| format!("SELECT name FROM sqlite_master WHERE name LIKE '{p}%eavpivot%'"),
        _dir: None,
    };
    let rt = runtime();
    let mut conn = rt.block_on(db.open()).expect("sqlite opens");
    // ~5 MB of source: the wide copy cannot fit beside it in 12 MB.
    rt.block_on(conn.execute("CREATE TABLE kv (entity_id INT, attr TEXT, val TEXT)"))
        .expect("source");
    rt.block_on(conn.execute(
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 20000) \
         INSERT INTO kv SELECT n / 4, 'a' || (n % 4), printf('%.200c', 'x') || n FROM c",
    ))
    .expect("fill source");
    let before = rt.block_on(fingerprint(conn.as_mut(), "kv"));
    let job_dir = tempfile::tempdir().expect("job dir");
    let job = job_dir.path().join("full.yaml");
    std::fs::write(
        &job,
        "name: full\nsource: {table: kv, alias: s}\nentity: [s.entity_id]\nattribute: s.attr\nvalue: s.val\ntarget: {table: kv_wide}\n",
    )
    .expect("job");
    let job = job.display().to_string();
    for strategy in ["stream", "pushdown"] {
        let out = run(&["run", &job, "--strategy", strategy], &url);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{strategy}: {err}");
        assert!(
            err.contains("full"),
            "{strategy}: says the disk is full: {err}"
        );
        assert!(err.contains("rolled back"), "{err}");
        assert!(!rt.block_on(exists(conn.as_mut(), "kv_wide")), "no target");
        assert_eq!(rt.block_on(fingerprint(conn.as_mut(), "kv")), before);
        assert!(rt
            .block_on(names(conn.as_mut(), &(db.list_staging)("kv")))
            .is_empty());
    }
    // Room again: the same run succeeds.
    let grown = Command::new("mount")
        .args(["-o", "remount,size=64m"])
        .arg(mnt)
        .status()
        .expect("remount");
    assert!(grown.success());
    let out = run(&["run", &job], &url);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(rt.block_on(fingerprint(conn.as_mut(), "kv")), before);
}

/// The server ends one of the run's connections: the writer (while the load waits, after it
/// was loaded and verified, before commit) or the reader (mid-read, on a source made slow).
#[derive(Clone, Copy, Debug)]
enum Victim {
    Writer,
    Reader,
}

/// A server-side kill of the writer or the reader: the run fails with one line and exit 1,
/// the target is absent, the source unchanged, nothing is left behind, and a re-run succeeds.
async fn server_kill(db: &Db, victim: Victim) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let case = match victim {
        Victim::Writer => "kw",
        Victim::Reader => "kr",
    };
    let fx = fixture(conn.as_mut(), db.what, case).await;
    let before = fingerprint(conn.as_mut(), &fx.source).await;
    let job = fx.job(&fx.target, "fail");
    let job = job.to_str().expect("path");
    let slow = match db.what {
        // Correlated, so PostgreSQL cannot sleep once for all rows.
        "postgres" => "(SELECT s.val FROM pg_sleep(0.002 + 0 * length(s.val)))",
        _ => "IF(SLEEP(0.002) = 0, s.val, s.val)",
    };
    let mut killer = db.open().await.expect("a second connection");
    let resume = fx.dir.path().join("resume");
    let (mut child, said) = match victim {
        Victim::Writer => {
            let args = ["run", job, "--strategy", "stream"];
            let (child, said) = start_resumable(&args, &db.url, "loaded", Some(&resume));
            // The writer: idle in its open transaction, its last statement our verification.
            let find = match db.what {
                "postgres" => format!(
                    "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE '%FROM {}%'",
                    fx.target
                ),
                _ => format!(
                    "SELECT IS_USED_LOCK(CONCAT('eavpivot:', SHA1(CONCAT(DATABASE(), '.', '{}'))))",
                    fx.target
                ),
            };
            let id = first_id(killer.as_mut(), &find)
                .await
                .expect("the writer's session");
            terminate(killer.as_mut(), db.what, id).await;
            std::fs::write(&resume, b"").expect("resume");
            (child, said)
        }
        Victim::Reader => {
            let slow_job = std::fs::read_to_string(job)
                .expect("job")
                .replace("value: s.val", &format!("value: \"{slow}\""));
            std::fs::write(job, slow_job).expect("slow job");
            let child = eavpivot(&["run", job, "--strategy", "stream"], &db.url)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn");
            let find = match db.what {
                "postgres" => format!(
                    "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state = 'active' AND query LIKE '%ORDER BY s.e0%' AND query LIKE '%{}%'",
                    fx.source
                ),
                _ => format!(
                    "SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND info LIKE '%ORDER BY s.e0%' AND info LIKE '%{}%'",
                    fx.source
                ),
            };
            let mut id = None;
            for _ in 0..400 {
                id = first_id(killer.as_mut(), &find).await;
                if id.is_some() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            terminate(killer.as_mut(), db.what, id.expect("the ordered read ran")).await;
            let (tx, rx) = std::sync::mpsc::channel();
            let mut child = child;
            let err = child.stderr.take().expect("stderr");
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    let _ = tx.send(line);
                }
            });
            (child, rx)
        }
    };
    let status = child.wait().expect("eavpivot ends");
    // Everything it said: the reading thread ends with its stderr.
    let lines: Vec<String> = said.iter().collect();
    let errors: Vec<&String> = lines.iter().filter(|l| l.contains("error")).collect();
    assert_eq!(status.code(), Some(1), "{} {victim:?}: {lines:#?}", db.what);
    assert_eq!(errors.len(), 1, "one error line: {lines:#?}");
    assert!(
        errors[0].contains("rolled back") || errors[0].contains("dropped"),
        "says what was undone: {}",
        errors[0]
    );
    assert!(!exists(conn.as_mut(), &fx.target).await, "no target");
    assert_eq!(fingerprint(conn.as_mut(), &fx.source).await, before);
    let rerun = run(&["run", job, "--strategy", "stream"], &db.url);
    assert!(rerun.status.success(), "re-run: {}", stderr(&rerun));
    let left = names(conn.as_mut(), &(db.list_staging)(&fx.prefix)).await;
    assert!(left.is_empty(), "left behind: {left:?}");
    fx.drop_tables(conn.as_mut()).await;
}

async fn first_id(db: &mut dyn Backend, sql: &str) -> Option<i64> {
    db.query(sql)
        .await
        .ok()?
        .into_iter()
        .find_map(|r| r.first().and_then(eavpivot::value::Value::as_i64))
}

async fn terminate(db: &mut dyn Backend, what: &str, id: i64) {
    let sql = match what {
        "postgres" => format!("SELECT pg_terminate_backend({id})"),
        _ => format!("KILL {id}"),
    };
    db.execute(&sql).await.expect("server-side kill");
}

#[test]
fn postgres_server_kill_of_the_writer_rolls_back() {
    runtime().block_on(server_kill(&postgres(), Victim::Writer));
}

#[test]
fn postgres_server_kill_of_the_reader_rolls_back() {
    runtime().block_on(server_kill(&postgres(), Victim::Reader));
}

#[test]
fn mariadb_server_kill_of_the_writer_rolls_back() {
    runtime().block_on(server_kill(&mariadb(), Victim::Writer));
}

#[test]
fn mariadb_server_kill_of_the_reader_rolls_back() {
    runtime().block_on(server_kill(&mariadb(), Victim::Reader));
}
