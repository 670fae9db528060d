//! Issue 17's fault cases, each against the real binary: a table that only looks like a run's
//! leftover is never dropped (17.3), an interrupted COMMIT is reported as what really happened
//! (17.5), SQLite obeys `--lock-timeout` (17.6) and splits at its column limit (17.7), long
//! server work says how far it got (17.8), and MariaDB leaves nothing behind (17.9).
//!
//! Servers come from `EAVPIVOT_PG_URL` / `EAVPIVOT_MARIADB_URL` (default: the local ones);
//! unreachable ones are skipped with a message unless `EAVPIVOT_REQUIRE_SERVERS=1`.

#[path = "support/servers.rs"]
mod servers;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use eavpivot::backend::Backend;
use servers::*;

/// `name: faults` job over `source` into `target`, written to `dir`.
fn job(dir: &Path, file: &str, source: &str, target: &str, extra: &str) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(
        &path,
        format!(
            "name: faults\nsource: {{table: {source}, alias: s}}\nentity: [s.entity_id]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {target}{extra}}}\n"
        ),
    )
    .expect("write job");
    path
}

/// A source of `entities` × `attributes` rows (`a0001`…, values `v<e>-<a>`).
async fn make_source(db: &mut dyn Backend, source: &str, entities: i64, attributes: i64) {
    drop_if_exists(db, source).await;
    db.execute(&format!(
        "CREATE TABLE {source} (entity_id INT, attr VARCHAR(20), val VARCHAR(40))"
    ))
    .await
    .expect("create source");
    let mut values = Vec::new();
    for e in 1..=entities {
        for a in 1..=attributes {
            values.push(format!("({e}, 'a{a:04}', 'v{e}-{a}')"));
        }
    }
    for chunk in values.chunks(2_000) {
        db.execute(&format!("INSERT INTO {source} VALUES {}", chunk.join(", ")))
            .await
            .expect("fill source");
    }
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
    rt.block_on(make_source(conn.as_mut(), "kv", 5, 3));
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
            err.contains(&format!("lock_timeout {secs} s expired")) && err.contains(&file),
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
    rt.block_on(make_source(conn.as_mut(), "kv", entities, attributes));
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
