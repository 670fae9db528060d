//! For the lock and cancel tests, on top of `servers.rs` (where the servers are, skipping):
//! job files, the real binary run as a child process while the test keeps its own
//! connections alive and served, and the few queries those tests poll.
#![allow(dead_code)] // each test binary uses part of this file

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use eavpivot::backend::Backend;

use super::servers::{drop_if_exists, eavpivot, Db};

/// Two connections to one server: the test's own and a lock holder's (`None`: skipped).
pub async fn two_connections(db: &Db) -> Option<(Box<dyn Backend>, Box<dyn Backend>)> {
    Some((db.open().await?, db.open().await?))
}

/// A job pivoting `source (id, attr, val)` into `target`, with `value` as the value expression.
pub fn write_job(dir: &Path, source: &str, target: &str, value: &str, extra: &str) -> PathBuf {
    let path = dir.join(format!("{target}.yaml"));
    let text = format!(
        "name: {target}\nsource: {{ table: {source}, alias: k }}\nentity: [k.id]\n\
         attribute: k.attr\nvalue: \"{value}\"\ntarget: {{ table: {target} {extra} }}\n"
    );
    std::fs::write(&path, text).expect("job file");
    path
}

/// `eavpivot run JOB --connection URL ARGS…`, started and left running.
pub fn start(job: &Path, url: &str, args: &[&str]) -> Child {
    let job = job.to_str().expect("utf-8 path");
    eavpivot(&[&["run", job], args].concat(), url)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start eavpivot")
}

/// Wait (yielding to the runtime, so the test's own connections stay served) for the child to
/// end, at most `limit`; its status, stderr, and the time it took.
pub async fn finish(mut child: Child, limit: Duration) -> (ExitStatus, String, Duration) {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for eavpivot") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("eavpivot still running after {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let took = started.elapsed();
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        use std::io::Read;
        pipe.read_to_string(&mut stderr).expect("stderr");
    }
    (status, stderr, took)
}

/// The first integer of `sql`'s first row.
pub async fn count(db: &mut dyn Backend, sql: &str) -> i64 {
    let rows = db.query(sql).await.expect(sql);
    rows.first()
        .and_then(|r| r.first())
        .and_then(|v| v.as_i64())
        .unwrap_or(0)
}

/// Poll until `sql` counts at least one row; false after `limit`.
pub async fn wait_until(db: &mut dyn Backend, sql: &str, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if count(db, sql).await > 0 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Send `signal` (`INT`, `TERM`) to the child with the system's `kill`.
pub fn signal(child: &Child, signal: &str) {
    let ok = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .expect("run kill")
        .success();
    assert!(ok, "kill -{signal} failed");
}

/// `<prefix>_kv_<pid>` and `<prefix>_wide_<pid>`: this process's source and target tables.
pub fn table_names(prefix: &str) -> (String, String) {
    let pid = std::process::id();
    (format!("{prefix}_kv_{pid}"), format!("{prefix}_wide_{pid}"))
}

/// `(id, attr, val)` rows 1..=n, three attributes per entity, in PostgreSQL.
pub fn pg_rows(n: u32) -> String {
    format!("SELECT g / 3, 'a' || g % 3, 'v' || g FROM generate_series(1, {n}) g")
}

/// The same rows in MariaDB (its `seq_1_to_N` sequence engine).
pub fn mariadb_rows(n: u32) -> String {
    format!("SELECT seq DIV 3, CONCAT('a', seq MOD 3), CONCAT('v', seq) FROM seq_1_to_{n}")
}

/// Drop `stale` (leftovers of an earlier run) and create the source `kv` filled by `rows`.
pub async fn create_source(db: &mut dyn Backend, kv: &str, rows: &str, stale: &[&str]) {
    drop_tables(db, stale).await;
    db.execute(&format!(
        "CREATE TABLE {kv} (id int, attr varchar(10), val varchar(20))"
    ))
    .await
    .expect("source table");
    db.execute(&format!("INSERT INTO {kv} {rows}"))
        .await
        .expect("source rows");
}

pub async fn drop_tables(db: &mut dyn Backend, tables: &[&str]) {
    for table in tables {
        drop_if_exists(db, table).await;
    }
}
