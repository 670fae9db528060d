//! `aggregate: max` / `min` keep the same value of a conflicting pair in both strategies on
//! every engine: texts by their bytes, as the stream compares them. Under MariaDB's and SQL
//! Server's case-insensitive collations the pushdown's `MAX` used to keep `NULL` over `it's`
//! (`IT'S` < `NULL` there) where the stream kept `it's` (`i` > `N` in bytes), and a SQLite
//! value column declared `COLLATE NOCASE` did the same.

use crate::servers;

use servers::*;

/// The pairs, each of one entity and attribute `a`, and what max and min keep by bytes.
const PAIRS: [(i64, &str, &str, &str, &str); 4] = [
    (1, "it's", "NULL", "it's", "NULL"),
    (2, "10", "5", "5", "10"),
    (3, "b", "B", "b", "B"),
    (4, "ü", "z", "ü", "z"),
];

async fn kept(db: Db, value_type: &str, tag: &str) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let p = format!("cford{}_{}{tag}", std::process::id(), db.what);
    let (source, target) = (format!("{p}_src"), format!("{p}_wide"));
    for t in [&source, &target] {
        drop_if_exists(conn.as_mut(), t).await;
    }
    let create = format!(
        "CREATE TABLE {source} (id INT NOT NULL, attr VARCHAR(10) NOT NULL, val {value_type})"
    );
    conn.execute(&create).await.expect("create source");
    let d = conn.dialect();
    let rows: Vec<String> = PAIRS
        .iter()
        .flat_map(|(id, x, y, _, _)| [(id, x), (id, y)])
        .map(|(id, v)| format!("({id}, 'a', {})", d.quote_literal(v)))
        .collect();
    let insert = format!(
        "INSERT INTO {source} (id, attr, val) VALUES {}",
        rows.join(", ")
    );
    conn.execute(&insert).await.expect("load source");
    for aggregate in ["max", "min"] {
        for strategy in ["pushdown", "stream"] {
            let path = dir.path().join(format!("{aggregate}_{strategy}.yaml"));
            std::fs::write(
                &path,
                format!(
                    "name: {p}\nsource: {{table: {source}}}\nentity: [id]\nattribute: attr\nvalue: val\npivot: {{aggregate: {aggregate}}}\ntarget: {{table: {target}, if_exists: replace}}\n"
                ),
            )
            .expect("write job");
            let what = format!("{} {aggregate} {strategy}", db.what);
            let out = run(
                &[
                    "run",
                    &path.display().to_string(),
                    "--strategy",
                    strategy,
                    "--json",
                ],
                &db.url,
            );
            assert!(out.status.success(), "{what}: {}", stderr(&out));
            let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json");
            assert_eq!(report["conflicts"], 4, "{what}: conflicts counted");
            let mut got: Vec<(i64, String)> = read_keyed(conn.as_mut(), db.what, &target, 1)
                .await
                .into_iter()
                .map(|(key, cells)| {
                    let id = key[0].as_i64().expect("integer id");
                    (id, cells.get("a").cloned().unwrap_or_default())
                })
                .collect();
            got.sort();
            let want: Vec<(i64, String)> = PAIRS
                .iter()
                .map(|&(id, _, _, max, min)| {
                    (id, if aggregate == "max" { max } else { min }.to_string())
                })
                .collect();
            assert_eq!(got, want, "{what}: the value kept");
        }
    }
    for t in [&source, &target] {
        drop_if_exists(conn.as_mut(), t).await;
    }
}

#[tokio::test]
async fn sqlite_keeps_the_same_value_by_bytes() {
    kept(sqlite(), "TEXT COLLATE NOCASE", "").await;
}

#[tokio::test]
async fn postgres_keeps_the_same_value_by_bytes() {
    kept(postgres(), "VARCHAR(10)", "").await;
}

#[tokio::test]
async fn mariadb_keeps_the_same_value_by_bytes() {
    kept(mariadb(), "VARCHAR(10)", "").await;
}

#[tokio::test]
async fn mssql_keeps_the_same_value_by_bytes() {
    if let Some(db) = mssql() {
        kept(db, "NVARCHAR(10)", "n").await;
    }
    // A VARCHAR goes to NVARCHAR of its length before the binary collation.
    if let Some(db) = mssql() {
        kept(db, "VARCHAR(10)", "v").await;
    }
}

/// `citext` compares `b` and `B` as one whatever the collation: the pushdown counted no
/// conflict there (so `aggregate: error` let it through) and kept another value than the
/// stream. A nondeterministic collation on the value column is the other way to the same.
#[tokio::test]
async fn postgres_keeps_the_same_value_by_bytes_under_citext_and_a_ci_collation() {
    let setup = [CASE_INSENSITIVE_COLLATION, CITEXT];
    if let Some((_scratch, db)) = ScratchDatabase::create("cford", &setup).await {
        let again = Db {
            url: db.url.clone(),
            ..postgres()
        };
        kept(db, "citext", "citext").await;
        kept(again, "TEXT COLLATE ci", "ci").await;
    }
}
