//! `aggregate: max` / `min` keep the same value of a conflicting pair in both strategies on
//! every engine: texts by their bytes, as the stream compares them. Under MariaDB's and SQL
//! Server's case-insensitive collations the pushdown's `MAX` used to keep `NULL` over `it's`
//! (`IT'S` < `NULL` there) where the stream kept `it's` (`i` > `N` in bytes), and a SQLite
//! value column declared `COLLATE NOCASE` did the same. Numbers by value: a DECIMAL (or
//! PostgreSQL's NUMERIC) reaches the stream as its text, and the stream kept `9` over `10.5`
//! where the pushdown's MAX kept `10.5`.

use crate::servers;

use servers::*;

/// The pairs, each of one entity and attribute `a`, and what max and min keep by bytes.
const PAIRS: [(i64, &str, &str, &str, &str); 4] = [
    (1, "it's", "NULL", "it's", "NULL"),
    (2, "10", "5", "5", "10"),
    (3, "b", "B", "b", "B"),
    (4, "ü", "z", "ü", "z"),
];

/// Decimal pairs, and what max and min keep by value.
const DECIMALS: [(i64, &str, &str, &str, &str); 4] = [
    (1, "9", "10.5", "10.5", "9"),
    (2, "-2", "-10", "-2", "-10"),
    (3, "0.5", "0.49", "0.5", "0.49"),
    (4, "-0.5", "0", "0", "-0.5"),
];

async fn kept(db: Db, value_type: &str, tag: &str) {
    kept_of(db, value_type, tag, &PAIRS).await
}

/// `pairs` in a value column of `value_type`; a decimal one's cells compare by value (each
/// engine prints its scale: `10.50`).
async fn kept_of(db: Db, value_type: &str, tag: &str, pairs: &[(i64, &str, &str, &str, &str)]) {
    let by_value = value_type.starts_with("DECIMAL");
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
    let rows: Vec<String> = pairs
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
            let want: Vec<(i64, String)> = pairs
                .iter()
                .map(|&(id, _, _, max, min)| {
                    (id, if aggregate == "max" { max } else { min }.to_string())
                })
                .collect();
            let number = |text: &String| text.parse::<f64>().ok();
            if by_value {
                let got: Vec<_> = got.iter().map(|(id, v)| (*id, number(v))).collect();
                let want: Vec<_> = want.iter().map(|(id, v)| (*id, number(v))).collect();
                assert_eq!(got, want, "{what}: the value kept");
                continue;
            }
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
async fn decimals_keep_the_same_value_by_value() {
    kept_of(postgres(), "DECIMAL(10,2)", "dec", &DECIMALS).await;
    kept_of(mariadb(), "DECIMAL(10,2)", "dec", &DECIMALS).await;
    if let Some(db) = mssql() {
        kept_of(db, "DECIMAL(10,2)", "dec", &DECIMALS).await;
    }
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
