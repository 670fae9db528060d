//! Source and target in two databases: every ordered pair of SQLite, PostgreSQL, MariaDB
//! and SQL Server (when `EAVPIVOT_MSSQL_URL` is set)
//! (the real binary, `--connection` for the source, `--target-connection` for the target)
//! gives, cell by cell, the same table as the single-database run on the target's database,
//! from the same source data, under names that need quoting, Unicode, empty strings and
//! NULLs. Also: a forced pushdown is refused, the dry run labels each statement with its
//! side, and the entity key's type is mapped to the target's spelling.

use crate::servers;

use eavpivot::backend::Backend;
use servers::*;

const ATTRIBUTES: [&str; 5] = ["Color", "Size", "it's", "naïve ☃", "with space"];

async fn fill_source(db: &mut dyn Backend, what: &str, table: &str, attributes: &[&str]) {
    drop_if_exists(db, table).await;
    // SQL Server keeps Unicode only in N types and N'' literals.
    let (text, n) = match what {
        "mssql" => ("NVARCHAR(40)", "N"),
        _ => ("VARCHAR(40)", ""),
    };
    db.execute(&format!(
        "CREATE TABLE {table} (id INT, attr {text}, val {text})"
    ))
    .await
    .expect("create source");
    let mut rows = Vec::new();
    for id in 1..=40 {
        for (a, attr) in attributes.iter().enumerate() {
            if (id + a) % 3 == 0 {
                continue; // sparse
            }
            let value = match (id + a) % 7 {
                0 => "NULL".to_string(),
                1 => format!("{n}''"),
                k => format!("{n}'v{id}-{k} ü'"),
            };
            rows.push(format!(
                "({id}, {n}'{}', {value})",
                attr.replace('\'', "''")
            ));
        }
    }
    db.execute(&format!("INSERT INTO {table} VALUES {}", rows.join(", ")))
        .await
        .expect("fill source");
}

fn job(dir: &std::path::Path, source: &str, target: &str) -> String {
    let path = dir.join(format!("{target}.yaml"));
    std::fs::write(
        &path,
        format!(
            "name: cross\nsource: {{table: {source}, alias: s}}\nentity: [s.id]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {target}, if_exists: replace}}\n"
        ),
    )
    .expect("write job");
    path.display().to_string()
}

#[test]
fn every_pair_of_databases_gives_the_single_database_table() {
    // SQL Server (Babelfish in CI) joins when EAVPIVOT_MSSQL_URL is set: as source and as
    // target with each of the others.
    let mut dbs = vec![sqlite(), postgres(), mariadb()];
    dbs.extend(mssql());
    let rt = runtime();
    let mut conns = Vec::new();
    for db in &dbs {
        match rt.block_on(db.open()) {
            Some(c) => conns.push((db, c)),
            None => return, // skipped with the reason printed
        }
    }
    let attributes = ATTRIBUTES.to_vec();
    let dir = tempfile::tempdir().expect("temp dir");
    let tag = format!("xdb{}", std::process::id());
    let source = format!("{tag}_kv");
    let single = format!("{tag}_single");
    let mut expected = Vec::new();
    for (db, conn) in conns.iter_mut() {
        rt.block_on(fill_source(conn.as_mut(), db.what, &source, &attributes));
        let out = run(&["run", &job(dir.path(), &source, &single)], &db.url);
        assert!(out.status.success(), "{} single: {}", db.what, stderr(&out));
        expected.push(rt.block_on(read_table(conn.as_mut(), db.what, &single)));
    }
    let mut pairs = 0;
    let n = conns.len();
    for s in 0..n {
        for t in 0..n {
            if s == t {
                continue;
            }
            let (from, to) = (conns[s].0, conns[t].0);
            let target = format!("{tag}_from_{}", from.what);
            for strategy in ["auto", "stream"] {
                let args = [
                    "run",
                    &job(dir.path(), &source, &target),
                    "--strategy",
                    strategy,
                    "--target-connection",
                    &to.url,
                ];
                let out = run(&args, &from.url);
                let err = stderr(&out);
                assert!(out.status.success(), "{} -> {}: {err}", from.what, to.what);
                assert!(err.contains("two databases"), "{err}");
            }
            let got = rt.block_on(read_table(conns[t].1.as_mut(), to.what, &target));
            assert_eq!(
                got, expected[t],
                "{} -> {}: differs from the single-database run on {}",
                from.what, to.what, to.what
            );
            assert_eq!(got.len(), 40);
            rt.block_on(drop_if_exists(conns[t].1.as_mut(), &target));
            pairs += 1;
        }
    }
    assert_eq!(pairs, n * (n - 1));

    // A forced pushdown cannot cross databases; a dry run says where each statement runs.
    let (pg, maria) = (&dbs[1], &dbs[2]);
    let job = job(dir.path(), &source, &format!("{tag}_dry"));
    let out = run(
        &[
            "run",
            &job,
            "--strategy",
            "pushdown",
            "--target-connection",
            &maria.url,
        ],
        &pg.url,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("pushdown runs inside one database"));
    let out = run(
        &["run", &job, "--dry-run", "--target-connection", &maria.url],
        &pg.url,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(
        script.contains("-- on the source database\n-- stream: read key-value rows"),
        "{script}"
    );
    assert!(
        script.contains("-- on the target database\nCREATE TABLE"),
        "{script}"
    );
    // The key's PostgreSQL INT is MariaDB's INT; the dry run's CREATE shows it.
    assert!(script.contains("`id` INT NOT NULL"), "{script}");

    for (_, conn) in conns.iter_mut() {
        for t in [&source, &single] {
            rt.block_on(drop_if_exists(conn.as_mut(), t));
        }
    }
}

/// MariaDB described a `DATETIME(6)` or `TIMESTAMP(3)` key without its fractional digits,
/// so the target's key column was a plain `DATETIME` (or PostgreSQL's `timestamp(0)`): every
/// key lost its fraction, silently, and two keys a fraction apart collided. Both strategies,
/// and across to PostgreSQL.
#[test]
fn mariadb_fractional_second_keys_keep_their_digits() {
    runtime().block_on(async {
        let (maria, pg) = (mariadb(), postgres());
        let Some(mut m) = maria.open().await else {
            return;
        };
        let Some(mut p) = pg.open().await else {
            return;
        };
        let tag = format!("xfrac{}", std::process::id());
        let (source, target) = (format!("{tag}_kv"), format!("{tag}_w"));
        drop_if_exists(m.as_mut(), &source).await;
        execute_all(
            m.as_mut(),
            &[
                format!("CREATE TABLE {source} (ts DATETIME(6), t3 TIMESTAMP(3) NULL, attr VARCHAR(10), val VARCHAR(10))"),
                format!("INSERT INTO {source} VALUES ('2020-01-02 03:04:05.123456', '2020-01-02 03:04:05.100', 'a', 'x'), ('2020-01-02 03:04:05.9', '2020-01-02 03:04:05.900', 'a', 'y')"),
            ],
        )
        .await;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("frac.yaml");
        std::fs::write(
            &path,
            format!("name: frac\nsource: {{table: {source}, alias: s}}\nentity: [s.ts, s.t3]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {target}, if_exists: replace}}\n"),
        )
        .expect("write job");
        let job = path.display().to_string();
        let want = [
            ["2020-01-02 03:04:05.123456", "2020-01-02 03:04:05.100", "x"],
            ["2020-01-02 03:04:05.900000", "2020-01-02 03:04:05.900", "y"],
        ];
        for strategy in ["pushdown", "stream"] {
            let out = run(&["run", &job, "--strategy", strategy], &maria.url);
            assert!(out.status.success(), "{strategy}: {}", stderr(&out));
            let read = format!("SELECT CAST(ts AS CHAR), CAST(t3 AS CHAR), a FROM {target} ORDER BY ts");
            assert_eq!(text_rows(m.as_mut(), &read).await, want, "{strategy}");
        }
        drop_if_exists(p.as_mut(), &target).await;
        let out = run(&["run", &job, "--target-connection", &pg.url], &maria.url);
        assert!(out.status.success(), "to postgres: {}", stderr(&out));
        let read = format!(
            "SELECT to_char(ts, 'YYYY-MM-DD HH24:MI:SS.US'), to_char(t3, 'YYYY-MM-DD HH24:MI:SS.MS'), a FROM {target} ORDER BY ts"
        );
        assert_eq!(text_rows(p.as_mut(), &read).await, want, "to postgres");
        drop_if_exists(p.as_mut(), &target).await;
        drop_if_exists(m.as_mut(), &target).await;
        drop_if_exists(m.as_mut(), &source).await;
    });
}
