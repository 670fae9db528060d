//! Issue 10, defects 2 and 9: what SQLite text can hold that Rust's `String` cannot (bytes that
//! are not UTF-8) or that SQL text cannot (a NUL) must come out of both strategies byte for
//! byte and with the same storage class, or be refused the same way by both.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use rusqlite::Connection;

const JOB: &str = "{name: j, source: {table: kv, alias: s}, entity: [s.entity_id], attribute: s.attr, value: s.val, target: {table: kv_wide}}\n";

/// A database per strategy, each holding `setup`, and the job file.
fn fixture(dir: &Path, setup: &str) -> (PathBuf, [PathBuf; 2]) {
    let job = dir.join("job.yaml");
    std::fs::write(&job, JOB).expect("write job");
    let dbs = ["pushdown", "stream"].map(|s| {
        let path = dir.join(format!("{s}.db"));
        let conn = Connection::open(&path).expect("create db");
        conn.execute_batch("CREATE TABLE kv(entity_id INT, attr TEXT, val TEXT);")
            .expect("create kv");
        conn.execute_batch(setup).expect("setup");
        path
    });
    (job, dbs)
}

fn run(job: &Path, db: &Path, strategy: &str) -> std::process::Output {
    Command::cargo_bin("eavpivot")
        .expect("binary")
        .env_remove("EAVPIVOT_CONNECTION")
        .args(["run", job.to_str().expect("utf-8"), "--preview", "0"])
        .arg("--connection")
        .arg(format!("sqlite:{}", db.display()))
        .args(["--strategy", strategy])
        .output()
        .expect("run")
}

/// Every cell of kv_wide as `hex/typeof`, with the column names' hex as the first row.
fn cells(db: &Path) -> Vec<Vec<String>> {
    let conn = Connection::open(db).expect("open");
    let columns: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('kv_wide') ORDER BY cid")
        .expect("catalog")
        .query_map([], |r| r.get::<_, String>(0))
        .expect("names")
        .collect::<Result<_, _>>()
        .expect("names");
    let select: Vec<String> = columns
        .iter()
        .map(|c| {
            let q = format!("\"{}\"", c.replace('"', "\"\""));
            format!("hex({q}) || '/' || typeof({q})")
        })
        .collect();
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {} FROM kv_wide ORDER BY 1",
            select.join(", ")
        ))
        .expect("select");
    let mut out = vec![columns.iter().map(|c| hex(c.as_bytes())).collect()];
    let rows = stmt
        .query_map([], |r| {
            (0..columns.len())
                .map(|i| r.get::<_, String>(i))
                .collect::<Result<Vec<_>, _>>()
        })
        .expect("rows");
    out.extend(rows.map(|r| r.expect("row")));
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// Both strategies succeed and leave byte-identical tables; the pushdown's table is returned.
fn both_agree(setup: &str) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().expect("tmp");
    let (job, dbs) = fixture(dir.path(), setup);
    let mut tables = Vec::new();
    for (db, strategy) in dbs.iter().zip(["pushdown", "stream"]) {
        let out = run(&job, db, strategy);
        assert!(
            out.status.success(),
            "{strategy}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tables.push(cells(db));
    }
    assert_eq!(tables[0], tables[1], "pushdown vs stream");
    tables.swap_remove(0)
}

#[test]
fn invalid_utf8_values_are_stored_byte_exact_by_both_strategies() {
    let table = both_agree(
        "INSERT INTO kv VALUES (1,'a','x'),(1,'b','y');
         INSERT INTO kv VALUES (2,'a',CAST(X'80FEC3' AS TEXT));
         INSERT INTO kv VALUES (3,'b',X'00FF');",
    );
    let a = table[0].iter().position(|c| c == "61").expect("column a");
    let b = table[0].iter().position(|c| c == "62").expect("column b");
    assert_eq!(table[2][a], "80FEC3/text", "{table:?}");
    assert_eq!(table[3][b], "00FF/blob", "{table:?}");
}

#[test]
fn a_nul_in_an_attribute_name_gives_the_same_table_in_both_strategies() {
    let table = both_agree(
        "INSERT INTO kv VALUES (1, CAST(X'6100620063' AS TEXT), 'v');
         INSERT INTO kv VALUES (2, CAST(X'6100620063' AS TEXT), CAST(X'7600' AS TEXT));",
    );
    assert_eq!(table[1][1], "76/text");
    assert_eq!(table[2][1], "7600/text", "a NUL in a value is kept too");
    assert!(!table[0][1].contains("00"), "column name has no NUL");
}

#[test]
fn invalid_utf8_attribute_names_are_refused_by_both_strategies_alike() {
    let dir = tempfile::tempdir().expect("tmp");
    let (job, dbs) = fixture(
        dir.path(),
        "INSERT INTO kv VALUES (1,'a','x'), (7, CAST(X'61FF62' AS TEXT), 'y');",
    );
    let mut errors = Vec::new();
    for (db, strategy) in dbs.iter().zip(["pushdown", "stream"]) {
        let out = run(&job, db, strategy);
        assert_eq!(out.status.code(), Some(1), "{strategy}");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(lines[0].contains("61FF62"), "names the hex: {stderr}");
        assert!(lines[0].contains("entity 7"), "names the entity: {stderr}");
        assert!(!stderr.contains('\u{FFFD}'), "{stderr}");
        errors.push(lines[0].to_string());
        let conn = Connection::open(db).expect("open");
        let n: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 'kv_wide'",
                [],
                |r| r.get(0),
            )
            .expect("catalog");
        assert_eq!(n, 0, "{strategy} created the target");
    }
    assert_eq!(errors[0], errors[1]);
}
