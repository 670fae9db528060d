//! `run --conflicts FILE` on every reachable backend: the same source, the same CSV (every
//! conflicting pair with all its distinct values, in order), exact attribute comparison
//! (`color` and `Color` are two attributes, not a conflict) and exact value comparison (`b` and
//! `B` are a conflict, under MariaDB's and SQL Server's case-insensitive collations too). Through the real binary, with
//! `--dry-run` so nothing but the test's own source table is ever created.
//!
//! Servers: `EAVPIVOT_PG_URL`, `EAVPIVOT_MARIADB_URL` (default: the local ones) and
//! `EAVPIVOT_MSSQL_URL` (only when set); an unreachable one is skipped with its reason,
//! unless `EAVPIVOT_REQUIRE_SERVERS=1`.

use std::process::Command;

use crate::servers;

use servers::server;

const EXPECTED: &str = "id,grp,attribute,values,value_1,value_2,value_3\r\n\
                        1,a,Color,2,Blue,\"Red, dark\"\r\n\
                        2,b,Size,3,L,S,XL\r\n\
                        4,d,Color,2,B,b\r\n";

fn check(label: &str, url: &str) {
    let table = format!("ux_conflicts_{}", std::process::id());
    let setup = format!(
        "CREATE TABLE {table} (id INT, grp VARCHAR(10), attr VARCHAR(50), val VARCHAR(50));
         INSERT INTO {table} VALUES (1, 'a', 'Color', 'Red, dark'), (1, 'a', 'Color', 'Blue'),
           (1, 'a', 'Color', 'Red, dark'), (1, 'a', 'Size', 'M'), (2, 'b', 'Color', 'Green'),
           (2, 'b', 'Size', 'L'), (2, 'b', 'Size', 'XL'), (2, 'b', 'Size', 'S'),
           (3, 'c', 'color', 'x'), (3, 'c', 'Color', 'y'), (3, 'c', 'Size', NULL),
           (4, 'd', 'Color', 'b'), (4, 'd', 'Color', 'B');"
    );
    let Some((runtime, mut db)) = server(label, url) else {
        return;
    };
    runtime
        .block_on(db.execute_script(&setup))
        .expect("create the source");

    let dir = tempfile::tempdir().expect("tmp");
    let job = dir.path().join("job.yaml");
    std::fs::write(
        &job,
        format!(
            "name: conflicts\nsource: {{ table: {table} }}\nentity: [id, grp]\nattribute: attr\n\
             value: val\ntarget: {{ table: {table}_wide }}\n"
        ),
    )
    .expect("job");
    let csv = dir.path().join("conflicts.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_eavpivot"))
        .args(["run", "--dry-run", "--connection", url, "--conflicts"])
        .arg(&csv)
        .arg(&job)
        .output()
        .expect("run");
    let drop = runtime.block_on(db.execute(&format!("DROP TABLE {table}")));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{label}: {stderr}");
    assert!(
        stderr.contains("conflicts: 3 entity/attribute pairs"),
        "{label}: {stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&csv).expect("csv"),
        EXPECTED,
        "{label}"
    );
    drop.expect("drop the source");
}

#[test]
fn sqlite() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("c.db");
    std::fs::write(&path, b"").expect("db file");
    check("sqlite", &format!("sqlite:{}", path.display()));
}

/// The server a variable names, else the local one.
fn url_of(var: &str, local: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| local.to_string())
}

#[test]
fn postgres() {
    let url = url_of("EAVPIVOT_PG_URL", "postgres://postgres@127.0.0.1:5432/test");
    check("postgres", &url);
}

#[test]
fn mariadb() {
    check(
        "mariadb",
        &url_of("EAVPIVOT_MARIADB_URL", "mariadb://root@127.0.0.1:3306/test"),
    );
}

#[test]
fn mssql() {
    match std::env::var("EAVPIVOT_MSSQL_URL") {
        Ok(url) => check("mssql", &url),
        Err(_) => eprintln!("skipped: EAVPIVOT_MSSQL_URL is not set"),
    }
}
