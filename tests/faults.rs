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

#[path = "support/servers.rs"]
mod servers;

use std::path::PathBuf;

use eavpivot::backend::Backend;
use servers::*;

const ENTITIES: i64 = 300;
const ATTRIBUTES: i64 = 4;

/// A source of `ENTITIES` × `ATTRIBUTES` rows and the names of this test's tables.
struct Fixture {
    prefix: String,
    source: String,
    target: String,
    dir: tempfile::TempDir,
}

impl Fixture {
    /// `case` keeps the tables of tests running at the same time apart.
    async fn new(db: &mut dyn Backend, what: &str, case: &str) -> Fixture {
        let prefix = format!("flt{}_{what}_{case}", std::process::id());
        let source = format!("{prefix}_kv");
        let target = format!("{prefix}_wide");
        for t in [&source, &target] {
            drop_if_exists(db, t).await;
        }
        db.execute(&format!(
            "CREATE TABLE {source} (entity_id INT, attr VARCHAR(20), val VARCHAR(40))"
        ))
        .await
        .expect("create source");
        let mut values = Vec::new();
        for e in 1..=ENTITIES {
            for a in 1..=ATTRIBUTES {
                values.push(format!("({e}, 'a{a}', 'v{e}-{a}')"));
            }
        }
        db.execute(&format!(
            "INSERT INTO {source} VALUES {}",
            values.join(", ")
        ))
        .await
        .expect("fill source");
        Fixture {
            prefix,
            source,
            target,
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn job(&self, target: &str, if_exists: &str) -> PathBuf {
        let path = self.dir.path().join(format!("{if_exists}.yaml"));
        std::fs::write(
            &path,
            format!(
                "name: faults\nsource: {{table: {}, alias: s}}\nentity: [s.entity_id]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {target}, if_exists: {if_exists}}}\n",
                self.source
            ),
        )
        .expect("write job");
        path
    }
}

/// Defect 1: a target that is the source (by another spelling too) or a joined table is
/// refused with exit 2 before anything runs, and the source is untouched.
async fn target_is_source(db: &Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let fx = Fixture::new(conn.as_mut(), db.what, "src").await;
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
    let fx = Fixture::new(conn.as_mut(), db.what, "rep").await;
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
        for point in ["created", "loaded", "committed", "swapped"] {
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
    for t in [&fx.source, &fx.target] {
        drop_if_exists(conn.as_mut(), t).await;
    }
}

/// A killed first run of a new target leaves no target; the re-run says what it cleaned up
/// (MariaDB, where the staging table outlives the process) and succeeds.
async fn kill_during_first_load(db: &Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let fx = Fixture::new(conn.as_mut(), db.what, "new").await;
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
    for t in [&fx.source, &fx.target] {
        drop_if_exists(conn.as_mut(), t).await;
    }
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
        let fx = Fixture::new(conn.as_mut(), db.what, "own").await;
        let users = format!("{}__eavpivot_new", fx.target);
        drop_if_exists(conn.as_mut(), &users).await;
        conn.execute(&format!(
            "CREATE TABLE {users} (id INT PRIMARY KEY, x TEXT)"
        ))
        .await
        .expect("user table");
        conn.execute(&format!("INSERT INTO {users} VALUES (1, 'mine')"))
            .await
            .expect("user row");
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
