//! Issue 10, defect 3: a 10 MB attribute name is named in linear time, and whatever is printed
//! about it (renames, notes, errors) shows the name cut, with its length, never the 10 MB.
#![cfg(feature = "postgres")] // needs the postgres driver in the build

use std::time::{Duration, Instant};

use assert_cmd::Command;
use rusqlite::Connection;

use crate::postgres;

const TEN_MB: usize = 10 * 1024 * 1024;
/// Longest stderr line allowed: room for a message and a cut name, nowhere near a long name.
const MAX_LINE: usize = 2_000;

fn job(dir: &std::path::Path, extra: &str) -> std::path::PathBuf {
    let path = dir.join("job.yaml");
    std::fs::write(
        &path,
        format!("{{name: j, source: {{table: kv, alias: s}}, entity: [s.entity_id], attribute: s.attr, value: s.val, target: {{table: kv_wide}}{extra}}}\n"),
    )
    .expect("write job");
    path
}

fn run(
    job: &std::path::Path,
    connection: &str,
    strategy: &str,
) -> (std::process::Output, Duration) {
    let started = Instant::now();
    let out = Command::cargo_bin("eavpivot")
        .expect("binary")
        .env_remove("EAVPIVOT_CONNECTION")
        .args([
            "run",
            job.to_str().expect("utf-8"),
            "--connection",
            connection,
        ])
        .args(["--strategy", strategy, "--preview", "3"])
        .timeout(Duration::from_secs(120))
        .output()
        .expect("run");
    (out, started.elapsed())
}

/// A SQLite database in `dir` whose table kv holds `rows` (`(…), (…)`); with its URL.
fn sqlite_kv(dir: &std::path::Path, rows: &str) -> (Connection, String) {
    let db = dir.join("s.db");
    let conn = Connection::open(&db).expect("db");
    conn.execute_batch(&format!(
        "CREATE TABLE kv(entity_id INT, attr TEXT, val TEXT); INSERT INTO kv VALUES {rows};"
    ))
    .expect("setup");
    (conn, format!("sqlite:{}", db.display()))
}

/// SQL for a 10 MB text of `c` (SQLite has no repeat()).
fn ten_mb_of(c: char) -> String {
    format!("replace(hex(zeroblob({})), '0', '{c}')", TEN_MB / 2)
}

fn assert_succeeded(out: &std::process::Output, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let start: String = stderr.chars().take(3000).collect();
    assert!(out.status.success(), "{what}: {start}");
}

fn longest_line(bytes: &[u8]) -> usize {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::len)
        .max()
        .unwrap_or(0)
}

fn assert_short_output(out: &std::process::Output, took: Duration) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(
        longest_line(&out.stderr) <= MAX_LINE,
        "a stderr line of {} bytes",
        longest_line(&out.stderr)
    );
    assert!(
        longest_line(&out.stdout) <= MAX_LINE,
        "a stdout line of {} bytes",
        longest_line(&out.stdout)
    );
    assert!(stderr.contains(&format!("({TEN_MB} bytes)")), "{stderr}");
}

/// On SQLite (no identifier limit) the name is the column; its case twin is renamed, and the
/// rename line shows both names cut.
#[test]
fn sqlite_ten_megabyte_names_in_seconds_with_short_lines() {
    let dir = tempfile::tempdir().expect("tmp");
    let (conn, connection) = sqlite_kv(
        dir.path(),
        &format!(
            "(1, {}, 'x'), (1, {}, 'y'), (2, 'short', 'z')",
            ten_mb_of('N'),
            ten_mb_of('n')
        ),
    );
    for strategy in ["pushdown", "stream"] {
        conn.execute_batch("DROP TABLE IF EXISTS kv_wide")
            .expect("drop");
        let (out, took) = run(&job(dir.path(), ""), &connection, strategy);
        assert_succeeded(&out, strategy);
        assert_short_output(&out, took);
    }
    // Under on_collision: error the refusal is one short line naming the length.
    conn.execute_batch("DROP TABLE IF EXISTS kv_wide")
        .expect("drop");
    let (out, took) = run(
        &job(dir.path(), ", pivot: {on_collision: error}"),
        &connection,
        "stream",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_short_output(&out, took);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains("error"))
            .count(),
        1
    );
}

/// On PostgreSQL the name is over the 63-byte limit and is cut to fit: the path that was
/// quadratic.
#[test]
fn postgres_ten_megabyte_name_in_seconds() {
    let Some(pg) = postgres::connect() else {
        return;
    };
    let id = std::process::id();
    let (kv, wide) = (format!("kv_long_{id}"), format!("kv_long_wide_{id}"));
    pg.batch(&format!(
        "DROP TABLE IF EXISTS {kv}; DROP TABLE IF EXISTS {wide};
         CREATE TABLE {kv}(entity_id int, attr text, val text);
         INSERT INTO {kv} VALUES (1, repeat('N', {TEN_MB}), 'x'), (2, 'short', 'y');"
    ));
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("job.yaml");
    std::fs::write(
        &path,
        format!("{{name: j, source: {{table: {kv}, alias: s}}, entity: [s.entity_id], attribute: s.attr, value: s.val, target: {{table: {wide}}}}}\n"),
    )
    .expect("job");
    let mut results = Vec::new();
    for strategy in ["pushdown", "stream"] {
        pg.batch(&format!("DROP TABLE IF EXISTS {wide}"));
        results.push(run(&path, &pg.url, strategy));
    }
    pg.batch(&format!("DROP TABLE {kv}; DROP TABLE IF EXISTS {wide}"));
    for (out, took) in results {
        assert_succeeded(&out, "postgres");
        assert_short_output(&out, took);
    }
}

/// `aggregate: error` lists conflicting pairs: a 10 MB value in one is shown cut, in both
/// strategies.
#[test]
fn sqlite_conflicts_over_ten_megabyte_values_are_one_short_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let (_conn, connection) = sqlite_kv(
        dir.path(),
        &format!("(1, 'a', {}), (1, 'a', 'w')", ten_mb_of('V')),
    );
    let job = job(dir.path(), ", pivot: {aggregate: error}");
    for strategy in ["pushdown", "stream"] {
        let (out, took) = run(&job, &connection, strategy);
        assert_eq!(out.status.code(), Some(1), "{strategy}");
        assert_short_output(&out, took);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "{strategy}: {stderr}");
        assert!(errors[0].contains("'a': 'VVVV"), "{strategy}: {stderr}");
    }
}
