//! Issue 17's fault cases, each against the real binary: a table that only looks like a run's
//! leftover is never dropped (17.3), an interrupted COMMIT is reported as what really happened
//! (17.5), SQLite obeys `--lock-timeout` (17.6) and splits at its column limit (17.7), long
//! server work says how far it got (17.8), and MariaDB leaves nothing behind (17.9).
//!
//! Servers come from `EAVPIVOT_PG_URL` / `EAVPIVOT_MARIADB_URL` (default: the local ones);
//! unreachable ones are skipped with a message unless `EAVPIVOT_REQUIRE_SERVERS=1`.

use crate::kv_fixture::{job_yaml, make_source, user_table, write_job, Fixture, Kv};
use crate::servers;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use eavpivot::backend::Backend;
use servers::*;

/// `name: faults` job over `source` into `target`, written to `dir`.
fn job(dir: &Path, file: &str, source: &str, target: &str, extra: &str) -> PathBuf {
    write_job(dir, file, &job_yaml("faults", source, target, "", extra))
}

/// `entities` × `attributes` rows, attributes `a0001`…, values `v<e>-<a>`.
fn kv(entities: i64, attributes: i64) -> Kv {
    Kv::new(entities, attributes).padded(4)
}

fn exit_code(out: &std::process::Output) -> Option<i32> {
    out.status.code()
}

// ---------------------------------------------------------------------------------------
// 17.6: SQLite obeys --lock-timeout and names the database file.

#[test]
fn sqlite_obeys_lock_timeout_and_names_the_file() {
    let rt = runtime();
    let db = sqlite();
    let file = db.url.trim_start_matches("sqlite:").to_string();
    let mut conn = rt.block_on(db.open()).expect("sqlite opens");
    rt.block_on(make_source(conn.as_mut(), "kv", kv(5, 3)));
    let dir = tempfile::tempdir().expect("temp dir");
    let job = job(dir.path(), "j.yaml", "kv", "kv_wide", "");
    let job = job.to_str().expect("path");
    let mut holder = rt.block_on(db.open()).expect("second connection");
    rt.block_on(holder.execute("BEGIN EXCLUSIVE"))
        .expect("hold the lock");
    for secs in [2u64, 5] {
        let started = Instant::now();
        let out = run(&["run", job, "--lock-timeout", &secs.to_string()], &db.url);
        let took = started.elapsed();
        let err = stderr(&out);
        assert_eq!(exit_code(&out), Some(1), "{err}");
        let wanted = Duration::from_secs(secs);
        assert!(
            took >= wanted && took < wanted + Duration::from_millis(2_500),
            "--lock-timeout {secs}: failed after {took:?}: {err}"
        );
        assert!(
            err.contains(&format!(
                "lock_timeout expired waiting for a lock on the database file {file} (waited {secs} s"
            )),
            "names the wait and the database file: {err}"
        );
        assert_eq!(
            err.lines().filter(|l| l.contains("error")).count(),
            1,
            "{err}"
        );
    }
    rt.block_on(holder.execute("ROLLBACK")).expect("release");
    let out = run(&["run", job], &db.url);
    assert!(out.status.success(), "{}", stderr(&out));
}

// ---------------------------------------------------------------------------------------
// 17.7: SQLite splits at its column limit, key columns counted.

#[test]
fn sqlite_splits_5000_attributes_and_refuses_a_split_over_the_limit() {
    let rt = runtime();
    let db = sqlite();
    let mut conn = rt.block_on(db.open()).expect("sqlite opens");
    let (entities, attributes) = (3, 5_000);
    rt.block_on(make_source(conn.as_mut(), "kv", kv(entities, attributes)));
    let dir = tempfile::tempdir().expect("temp dir");
    for strategy in ["pushdown", "stream"] {
        let job = job(
            dir.path(),
            "auto.yaml",
            "kv",
            "kv_wide",
            ", if_exists: replace, split: auto",
        );
        let out = run(
            &["run", job.to_str().expect("path"), "--strategy", strategy],
            &db.url,
        );
        assert!(out.status.success(), "{strategy}: {}", stderr(&out));
        // Every cell, cell by cell against the source, over the split tables.
        let mut got = Table::new();
        let mut tables = 0;
        for name in ["kv_wide", "kv_wide_2", "kv_wide_3", "kv_wide_4"] {
            if !rt.block_on(exists(conn.as_mut(), name)) {
                continue;
            }
            tables += 1;
            for (id, cells) in rt.block_on(read_table(conn.as_mut(), "sqlite", name)) {
                got.entry(id).or_default().extend(cells);
            }
        }
        assert_eq!(
            tables, 3,
            "{strategy}: 5,000 columns need 3 tables of ≤ 1,999"
        );
        assert_eq!(got.len(), entities as usize);
        for e in 1..=entities {
            let row = &got[&e];
            assert_eq!(row.len(), attributes as usize, "{strategy}: entity {e}");
            for a in 1..=attributes {
                assert_eq!(row[&format!("a{a:04}")], format!("v{e}-{a}"));
            }
        }
    }
    // split: N with N + the key over the limit is refused up front, in one line.
    let job = job(
        dir.path(),
        "n.yaml",
        "kv",
        "kv_new",
        ", if_exists: replace, split: 2000",
    );
    let out = run(&["run", job.to_str().expect("path")], &db.url);
    let err = stderr(&out);
    assert_eq!(exit_code(&out), Some(1), "{err}");
    assert!(
        err.contains("split: 2000") && err.contains("at most 1999"),
        "{err}"
    );
    assert_eq!(
        err.lines().filter(|l| l.contains("error")).count(),
        1,
        "{err}"
    );
    assert!(!rt.block_on(exists(conn.as_mut(), "kv_new")));
    let job = job_1999(dir.path());
    let out = run(&["run", job.to_str().expect("path")], &db.url);
    assert!(out.status.success(), "split: 1999: {}", stderr(&out));
}

fn job_1999(dir: &Path) -> PathBuf {
    job(
        dir,
        "n1999.yaml",
        "kv",
        "kv_new",
        ", if_exists: replace, split: 1999",
    )
}

// ---------------------------------------------------------------------------------------
// 17.5 and 17.9 (a): an interrupt that lands while the COMMIT (and, on MariaDB, the swap
// after it) runs: the commit is finished, what is left is cleaned up, and the message says
// what really happened, with exit 130.

/// Send SIGINT to the child.
fn sigint(child: &std::process::Child) {
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(sent.success());
}

/// Everything the child says until it exits, and its exit code.
fn finish(
    mut child: std::process::Child,
    said: std::sync::mpsc::Receiver<String>,
) -> (Option<i32>, String) {
    let status = child.wait().expect("eavpivot ends");
    let lines: Vec<String> = said.iter().collect();
    (status.code(), lines.join("\n"))
}

async fn interrupt_during_commit(db: &Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let prefix = format!("fm{}_{}_ic", std::process::id(), db.what);
    let fx = Fixture::new(conn.as_mut(), prefix, kv(50, 4)).await;
    let Fixture {
        prefix,
        source,
        target,
        dir,
    } = &fx;
    let job = job(dir.path(), "j.yaml", source, target, ", if_exists: replace");
    let job = job.to_str().expect("path");
    for strategy in ["pushdown", "stream"] {
        let args = ["run", job, "--strategy", strategy];
        let first = run(&args, &db.url);
        assert!(first.status.success(), "{}", stderr(&first));
        // The old target, recognisable: one entity fewer than the run writes.
        conn.execute(&format!("DELETE FROM {target} WHERE entity_id = 1"))
            .await
            .expect("mark old");
        let resume = dir.path().join(format!("resume-{strategy}"));
        let (child, said) = start_resumable(&args, &db.url, "commit", Some(&resume));
        sigint(&child);
        std::thread::sleep(Duration::from_millis(300));
        std::fs::write(&resume, b"").expect("resume");
        let (code, err) = finish(child, said);
        let now = fingerprint(conn.as_mut(), target).await;
        assert_eq!(code, Some(130), "{}: {err}", db.what);
        assert!(
            err.contains("the commit went through")
                && err.contains(&format!("{target} is the new table")),
            "{} {strategy}: says the commit went through: {err}",
            db.what
        );
        assert!(!err.contains("rolled back"), "{err}");
        assert_eq!(
            now.0, 50,
            "{} {strategy}: the new table is in place",
            db.what
        );
        let left = names(conn.as_mut(), &(db.list_staging)(prefix)).await;
        assert!(left.is_empty(), "{}: left behind: {left:?}", db.what);
        std::fs::remove_file(&resume).expect("reset resume");
    }
    fx.drop_tables(conn.as_mut()).await;
}

#[test]
fn sqlite_interrupt_during_commit_says_the_commit_went_through() {
    runtime().block_on(interrupt_during_commit(&sqlite()));
}

#[test]
fn postgres_interrupt_during_commit_says_the_commit_went_through() {
    runtime().block_on(interrupt_during_commit(&postgres()));
}

#[test]
fn mariadb_interrupt_during_commit_and_swap_finishes_and_leaves_nothing() {
    runtime().block_on(interrupt_during_commit(&mariadb()));
}

/// 17.5: the connection is lost while the COMMIT is on its way (the server ends it): the
/// run cannot know, says so, and claims neither outcome; the target is as it was.
#[test]
fn postgres_commit_on_a_lost_connection_is_reported_as_unknown() {
    runtime().block_on(async {
        let db = postgres();
        let Some(mut conn) = db.open().await else {
            return;
        };
        let prefix = format!("fm{}_pg_lost", std::process::id());
        let fx = Fixture::new(conn.as_mut(), prefix, kv(20, 3)).await;
        let Fixture { prefix, source, target, dir } = &fx;
        let job = job(dir.path(), "j.yaml", source, target, ", if_exists: replace");
        let args = ["run", job.to_str().expect("path")];
        let first = run(&args, &db.url);
        assert!(first.status.success(), "{}", stderr(&first));
        let old = fingerprint(conn.as_mut(), target).await;
        let resume = dir.path().join("resume");
        let (child, said) = start_resumable(&args, &db.url, "commit", Some(&resume));
        let rows = conn
            .query(&format!(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_xid IS NOT NULL AND query LIKE '%{prefix}%'"
            ))
            .await
            .expect("terminate the writer");
        assert_eq!(rows.len(), 1, "the writer's session");
        std::fs::write(&resume, b"").expect("resume");
        let (code, err) = finish(child, said);
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains("whether it happened was checked again: unknown: check"),
            "{err}"
        );
        assert!(!err.contains("rolled back: nothing was written"), "{err}");
        assert_eq!(fingerprint(conn.as_mut(), target).await, old);
        fx.drop_tables(conn.as_mut()).await;
    });
}

// ---------------------------------------------------------------------------------------
// 17.3: MariaDB drops a replaced table only when it can prove a run of this job made it.

#[test]
fn mariadb_never_drops_a_users_table_named_like_a_replaced_one() {
    runtime().block_on(async {
        let db = mariadb();
        let Some(mut conn) = db.open().await else {
            return;
        };
        let prefix = format!("fm{}_my_old", std::process::id());
        let fx = Fixture::new(conn.as_mut(), prefix, kv(20, 3)).await;
        let Fixture {
            prefix,
            source,
            target,
            dir,
        } = &fx;
        let users = format!("{target}__eavpivot_old_deadbeef");
        user_table(conn.as_mut(), &users).await;
        let job = job(dir.path(), "j.yaml", source, target, ", if_exists: replace");
        let args = ["run", job.to_str().expect("path")];
        for _ in 0..2 {
            let out = run(&args, &db.url);
            let err = stderr(&out);
            assert!(out.status.success(), "{err}");
            assert!(
                !err.contains(&users),
                "the user's table is not mentioned: {err}"
            );
        }
        assert_eq!(
            fingerprint(conn.as_mut(), &users).await.0,
            1,
            "user table kept"
        );
        // A real leftover (killed between RENAME and DROP) is still dropped by the next run.
        let child = start_paused(&args, &db.url, "swapped");
        kill_9(child);
        let left = names(conn.as_mut(), &(db.list_staging)(prefix)).await;
        assert_eq!(left.len(), 2, "the replaced table and the user's: {left:?}");
        let out = run(&args, &db.url);
        let err = stderr(&out);
        assert!(out.status.success(), "{err}");
        assert!(err.contains("replaced and did not get to drop"), "{err}");
        let left = names(conn.as_mut(), &(db.list_staging)(prefix)).await;
        assert_eq!(left, vec![users.clone()], "only the user's table remains");
        assert_eq!(
            fingerprint(conn.as_mut(), &users).await.0,
            1,
            "user table kept"
        );
        fx.drop_tables(conn.as_mut()).await;
        drop_if_exists(conn.as_mut(), &users).await;
    });
}

// ---------------------------------------------------------------------------------------
// 17.9 (d): a view as the target of `replace` or `merge` is refused before any work, on
// every backend, and stays as it was.

async fn view_as_target(db: &Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let prefix = format!("fm{}_{}_view", std::process::id(), db.what);
    let (source, view) = (format!("{prefix}_kv"), format!("{prefix}_v"));
    let other = format!("{prefix}_other");
    make_source(conn.as_mut(), &source, kv(10, 3)).await;
    make_source(conn.as_mut(), &other, kv(10, 3)).await;
    let _ = conn.execute(&format!("DROP VIEW IF EXISTS {view}")).await;
    // A view of another table: not the source, so only its being a view is at fault.
    conn.execute(&format!("CREATE VIEW {view} AS SELECT * FROM {other}"))
        .await
        .expect("create view");
    let dir = tempfile::tempdir().expect("temp dir");
    for if_exists in ["replace", "merge"] {
        let extra = format!(", if_exists: {if_exists}");
        let job = job(dir.path(), "j.yaml", &source, &view, &extra);
        for strategy in ["pushdown", "stream"] {
            let out = run(
                &["run", job.to_str().expect("path"), "--strategy", strategy],
                &db.url,
            );
            let err = stderr(&out);
            assert_eq!(exit_code(&out), Some(2), "{} {if_exists}: {err}", db.what);
            assert!(
                err.contains(&format!("{view} is a view")),
                "{} {if_exists}: {err}",
                db.what
            );
            assert_eq!(
                err.lines().filter(|l| l.contains("error")).count(),
                1,
                "{err}"
            );
        }
    }
    // The view is still the view, and nothing was left beside it.
    assert_eq!(fingerprint(conn.as_mut(), &view).await.0, 30);
    let left = names(conn.as_mut(), &(db.list_staging)(&prefix)).await;
    assert!(left.is_empty(), "{}: {left:?}", db.what);
    let _ = conn.execute(&format!("DROP VIEW IF EXISTS {view}")).await;
    drop_if_exists(conn.as_mut(), &source).await;
    drop_if_exists(conn.as_mut(), &other).await;
}

#[test]
fn sqlite_refuses_a_view_as_the_target() {
    runtime().block_on(view_as_target(&sqlite()));
}

#[test]
fn postgres_refuses_a_view_as_the_target() {
    runtime().block_on(view_as_target(&postgres()));
}

#[test]
fn mariadb_refuses_a_view_as_the_target() {
    runtime().block_on(view_as_target(&mariadb()));
}

// ---------------------------------------------------------------------------------------
// 17.8: a pushdown of several statements says how far it got, one line per statement
// (without -v), and nothing with -q.

async fn pushdown_progress(db: &Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let prefix = format!("fm{}_{}_prog", std::process::id(), db.what);
    let fx = Fixture::new(conn.as_mut(), prefix, kv(20, 12)).await;
    let Fixture {
        source,
        target,
        dir,
        ..
    } = &fx;
    let job = job(
        dir.path(),
        "j.yaml",
        source,
        target,
        ", if_exists: replace, split: 4",
    );
    let job = job.to_str().expect("path");
    let out = run(&["run", job, "--strategy", "pushdown"], &db.url);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("statement "))
        .collect();
    assert_eq!(lines.len(), 3, "{}: one line per INSERT: {err}", db.what);
    for (i, (line, table)) in lines
        .iter()
        .zip([target.clone(), format!("{target}_2"), format!("{target}_3")])
        .enumerate()
    {
        let want = format!("statement {}/3: INSERT INTO {table} (", i + 1);
        assert!(line.starts_with(&want) && line.ends_with(" s)"), "{line}");
    }
    let quiet = run(&["run", job, "--strategy", "pushdown", "-q"], &db.url);
    let err = stderr(&quiet);
    assert!(quiet.status.success(), "{err}");
    assert!(!err.contains("statement "), "-q: {err}");
    // The stream shows its own progress (rows), not this.
    let stream = run(&["run", job, "--strategy", "stream"], &db.url);
    assert!(!stderr(&stream).contains("statement 1/"));
    for t in [
        source.clone(),
        target.clone(),
        format!("{target}_2"),
        format!("{target}_3"),
    ] {
        drop_if_exists(conn.as_mut(), &t).await;
    }
}

#[test]
fn sqlite_pushdown_says_each_statement() {
    runtime().block_on(pushdown_progress(&sqlite()));
}

#[test]
fn postgres_pushdown_says_each_statement() {
    runtime().block_on(pushdown_progress(&postgres()));
}

#[test]
fn mariadb_pushdown_says_each_statement() {
    runtime().block_on(pushdown_progress(&mariadb()));
}

// ---------------------------------------------------------------------------------------
// 17.9 (c): a run killed with -9 during a long pushdown INSERT leaves the server running it,
// holding the run lock: the next run says exactly what holds it and how to end it.

#[test]
fn mariadb_names_the_statement_a_killed_run_left_holding_the_lock() {
    runtime().block_on(async {
        let db = mariadb();
        let Some(mut conn) = db.open().await else {
            return;
        };
        let prefix = format!("fm{}_my_held", std::process::id());
        let fx = Fixture::new(conn.as_mut(), prefix, kv(300, 4)).await;
        let Fixture { prefix, target, .. } = &fx;
        let (fast, child, id) =
            start_slow_pushdown(conn.as_mut(), &db, &fx, std::process::Stdio::null()).await;
        kill_9(child);
        let out = run(&["run", fast.to_str().expect("path")], &db.url);
        let err = stderr(&out);
        assert_eq!(exit_code(&out), Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "connection {id}, running `INSERT INTO {target}__eavpivot_"
            )) && err.contains(&format!("end it with KILL {id}")),
            "names the holder, its statement and how to end it: {err}"
        );
        conn.execute(&format!("KILL {id}")).await.expect("KILL");
        let mut rerun = None;
        for _ in 0..100 {
            let out = run(&["run", fast.to_str().expect("path")], &db.url);
            if out.status.success() {
                rerun = Some(out);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let rerun = rerun.expect("a run after KILL succeeds");
        assert!(stderr(&rerun).contains("dropped"), "{}", stderr(&rerun));
        assert!(names(conn.as_mut(), &(db.list_staging)(prefix))
            .await
            .is_empty());
        fx.drop_tables(conn.as_mut()).await;
    });
}

/// `fx`'s job as `fast.yaml`, and started in the background as `slow.yaml`: the same job
/// slow inside the load's transaction only (discovery outside it stays fast), under pushdown
/// on MariaDB, with `stderr`. Returns the fast job, the child and the id of the server
/// connection running its INSERT.
async fn start_slow_pushdown(
    conn: &mut dyn Backend,
    db: &Db,
    fx: &Fixture,
    stderr: std::process::Stdio,
) -> (PathBuf, std::process::Child, i64) {
    let fast = job(
        fx.dir.path(),
        "fast.yaml",
        &fx.source,
        &fx.target,
        ", if_exists: replace",
    );
    let slow = fx.dir.path().join("slow.yaml");
    let text = std::fs::read_to_string(&fast).expect("job");
    std::fs::write(
        &slow,
        text.replace(
            "value: s.val",
            "value: \"IF(@@in_transaction = 1 AND SLEEP(0.02) = 0, s.val, s.val)\"",
        ),
    )
    .expect("slow job");
    let child = eavpivot(
        &[
            "run",
            slow.to_str().expect("path"),
            "--strategy",
            "pushdown",
        ],
        &db.url,
    )
    .stderr(stderr)
    .spawn()
    .expect("spawn");
    let find = format!(
        "SELECT id FROM information_schema.processlist WHERE info LIKE 'INSERT INTO {}__eavpivot%' AND id <> CONNECTION_ID()",
        fx.target
    );
    let mut id = None;
    for _ in 0..1_200 {
        let rows = conn.query(&find).await.expect("processlist");
        id = rows.first().and_then(|r| r[0].as_i64());
        if id.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (fast, child, id.expect("the pushdown INSERT runs"))
}

// ---------------------------------------------------------------------------------------
// 17.9 (e): a 10 MB attribute name under pushdown: the statement is over the server's
// max_allowed_packet; it is refused unsent, the connection stays, the staging table is
// dropped, one line names the limit.

#[test]
fn mariadb_refuses_a_statement_over_max_allowed_packet_and_cleans_up() {
    runtime().block_on(async {
        let db = mariadb();
        let Some(mut conn) = db.open().await else {
            return;
        };
        let prefix = format!("fm{}_my_pkt", std::process::id());
        let fx = Fixture::empty(conn.as_mut(), prefix).await;
        let Fixture { prefix, source, target, dir } = &fx;
        conn.execute(&format!(
            "CREATE TABLE {source} (entity_id INT, attr LONGTEXT, val VARCHAR(40))"
        ))
        .await
        .expect("source");
        conn.execute(&format!(
            "INSERT INTO {source} VALUES (1, 'a', 'x'), (2, 'b', 'y'), (1, REPEAT('n', 10485760), 'big')"
        ))
        .await
        .expect("rows");
        let packet = conn
            .query("SELECT @@max_allowed_packet")
            .await
            .expect("packet")[0][0]
            .as_i64()
            .expect("number");
        assert!(packet < 20 << 20, "the server's packet limit is below the statement");
        let job = job(dir.path(), "j.yaml", source, target, ", if_exists: replace");
        let out = run(
            &["run", job.to_str().expect("path"), "--strategy", "pushdown"],
            &db.url,
        );
        let err = stderr(&out);
        assert_eq!(exit_code(&out), Some(1), "{err}");
        assert!(
            err.contains(&format!("max_allowed_packet of {packet} bytes and was not sent"))
                && err.contains("was dropped"),
            "{}",
            &err[..err.len().min(600)]
        );
        assert!(!exists(conn.as_mut(), target).await);
        assert!(names(conn.as_mut(), &(db.list_staging)(prefix)).await.is_empty());
        fx.drop_tables(conn.as_mut()).await;
    });
}

// ---------------------------------------------------------------------------------------
// 17.9 (b): a double SIGINT during a long pushdown INSERT: before exiting, the run's session
// is ended on the server (the INSERT stops) and its staging tables dropped, within 5 s.

#[test]
fn mariadb_double_sigint_ends_the_server_statement_and_drops_staging() {
    runtime().block_on(async {
        let db = mariadb();
        let Some(mut conn) = db.open().await else {
            return;
        };
        let prefix = format!("fm{}_my_dbl", std::process::id());
        let fx = Fixture::new(conn.as_mut(), prefix, kv(300, 4)).await;
        let prefix = &fx.prefix;
        let (_, mut child, id) =
            start_slow_pushdown(conn.as_mut(), &db, &fx, std::process::Stdio::piped()).await;
        // Keep the run's own rollback from finishing before the second signal: another
        // session holds a metadata lock on the staging table, so its DROP waits.
        let staging = names(conn.as_mut(), &(db.list_staging)(prefix)).await;
        assert_eq!(staging.len(), 1, "{staging:?}");
        let mut holder = db.open().await.expect("a second connection");
        holder.execute("START TRANSACTION").await.expect("begin");
        holder
            .query(&format!("SELECT COUNT(*) FROM {}", staging[0]))
            .await
            .expect("read the staging table");
        sigint(&child);
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let started = Instant::now();
        sigint(&child);
        // The forced exit's own DROP waits for the lock too: release it.
        tokio::time::sleep(Duration::from_millis(500)).await;
        holder.execute("COMMIT").await.expect("release");
        let status = child.wait().expect("exits");
        let took = started.elapsed();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut err)
            .expect("stderr");
        assert_eq!(status.code(), Some(130), "{err}");
        assert!(took < Duration::from_secs(6), "bounded: {took:?}: {err}");
        assert!(
            err.contains(&format!("staging table {} was dropped", staging[0])),
            "{err}"
        );
        let alive = conn
            .query(&format!(
                "SELECT COUNT(*) FROM information_schema.processlist WHERE id = {id}"
            ))
            .await
            .expect("processlist")[0][0]
            .as_i64();
        assert_eq!(
            alive,
            Some(0),
            "the run's session is ended on the server: {err}"
        );
        let left = names(conn.as_mut(), &(db.list_staging)(prefix)).await;
        assert!(left.is_empty(), "staging tables left: {left:?}: {err}");
        fx.drop_tables(conn.as_mut()).await;
    });
}

/// SQL Server (Babelfish too), when `EAVPIVOT_MSSQL_URL` names one (the password may come
/// from `EAVPIVOT_PASSWORD`, which the binary reads too).
#[test]
fn mssql_refuses_a_view_as_the_target() {
    let Some(url) = mssql_url() else {
        return;
    };
    let Some((rt, mut conn)) = server("mssql", &url) else {
        return;
    };
    let prefix = format!("fm{}_ms_view", std::process::id());
    let (source, view, other) = (
        format!("{prefix}_kv"),
        format!("{prefix}_v"),
        format!("{prefix}_other"),
    );
    let _ = rt.block_on(conn.execute(&format!("DROP VIEW IF EXISTS {view}")));
    rt.block_on(make_source(conn.as_mut(), &source, kv(10, 3)));
    rt.block_on(make_source(conn.as_mut(), &other, kv(10, 3)));
    rt.block_on(conn.execute(&format!("CREATE VIEW {view} AS SELECT * FROM {other}")))
        .expect("create view");
    let dir = tempfile::tempdir().expect("temp dir");
    for if_exists in ["replace", "merge"] {
        let extra = format!(", if_exists: {if_exists}");
        let job = job(dir.path(), "j.yaml", &source, &view, &extra);
        let out = run(&["run", job.to_str().expect("path")], &url);
        let err = stderr(&out);
        assert_eq!(exit_code(&out), Some(2), "{if_exists}: {err}");
        assert!(err.contains(&format!("{view} is a view")), "{err}");
    }
    assert_eq!(rt.block_on(fingerprint(conn.as_mut(), &view)).0, 30);
    let _ = rt.block_on(conn.execute(&format!("DROP VIEW IF EXISTS {view}")));
    rt.block_on(drop_if_exists(conn.as_mut(), &source));
    rt.block_on(drop_if_exists(conn.as_mut(), &other));
}
