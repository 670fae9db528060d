//! The commands against live servers where the job itself says where to go: `inspect` on the
//! database `source.connection` names (issue 21.8).

use std::path::Path;
use std::process::Output;

use crate::servers;

use servers::drop_if_exists;

/// A table name unique to this test process, so parallel runs never share one.
fn unique(stem: &str) -> String {
    format!("clicase_{stem}_{}", std::process::id())
}

/// The real binary in `dir`, with no connection from the environment.
fn eavpivot(dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_eavpivot"))
        .args(args)
        .current_dir(dir)
        .env_remove("EAVPIVOT_CONNECTION")
        .env_remove("EAVPIVOT_TARGET_CONNECTION")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run eavpivot")
}

/// A key-value source `kv` with two entities, created fresh on `db`.
async fn create_kv(db: &mut dyn eavpivot::backend::Backend, kv: &str) {
    drop_if_exists(db, kv).await;
    db.execute_script(&format!(
        "CREATE TABLE {kv} (entity_id INT, attr VARCHAR(50), val VARCHAR(50));
         INSERT INTO {kv} VALUES (1, 'color', 'red'), (1, 'size', 'M'), (2, 'color', 'blue');"
    ))
    .await
    .expect("create source");
}

/// `inspect JOB` with no `--connection` surveys the PostgreSQL source the job names, writes
/// nothing anywhere (no embedded `eavpivot.db` either); `--connection` still wins.
#[test]
fn inspect_uses_source_connection_on_postgres() {
    let pg = servers::postgres();
    let rt = servers::runtime();
    let Some(mut db) = rt.block_on(pg.open()) else {
        return;
    };
    let kv = unique("insp_kv");
    rt.block_on(create_kv(db.as_mut(), &kv));
    let dir = tempfile::tempdir().expect("tmp");
    let job = format!(
        "name: insp\nsource: {{table: {kv}, alias: s, connection: \"{}\"}}\nentity: [s.entity_id]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {kv}_wide}}\n",
        pg.url
    );
    std::fs::write(dir.path().join("job.yaml"), job).expect("write job");
    let out = eavpivot(dir.path(), &["inspect", "job.yaml", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["dialect"], "postgres", "{report}");
    assert_eq!(report["entities"], 2, "{report}");
    assert_eq!(report["attributes_found"], 2, "{report}");
    assert!(!dir.path().join("eavpivot.db").exists());
    // --connection wins: the embedded default has no such table.
    let out = eavpivot(
        dir.path(),
        &["inspect", "job.yaml", "--connection", "sqlite:missing.db"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&kv));
    assert!(!dir.path().join("missing.db").exists());
    rt.block_on(drop_if_exists(db.as_mut(), &kv));
}

/// The job's text: `kv` pivoted into `target`, keyed by `s.ENTITY_ID` written in upper case.
fn case_job(kv: &str, target: &str, if_exists: &str, strategy: &str) -> String {
    format!(
        "name: case\nsource: {{table: {kv}, alias: s}}\nentity: [s.ENTITY_ID]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {target}, if_exists: {if_exists}}}\nstrategy: {strategy}\n"
    )
}

/// Run `job` with `--json` on `url`; the report, or a panic with the error line.
fn run_json(dir: &Path, job: &str, url: &str) -> serde_json::Value {
    let path = dir.join("job.yaml");
    std::fs::write(&path, job).expect("write job");
    let path = path.to_str().expect("utf-8 path");
    let out = servers::run(&["run", path, "--json"], url);
    assert!(out.status.success(), "{job}\n{}", servers::stderr(&out));
    serde_json::from_slice(&out.stdout).expect("json report")
}

/// The table's column names as its database's catalog lists them.
async fn catalog_columns(db: &mut dyn eavpivot::backend::Backend, table: &str) -> Vec<String> {
    let table = eavpivot::config::TableRef::parse(table).expect("table name");
    let sql = db.dialect().table_columns(&table);
    servers::names(db, &sql).await
}

/// Issue 21.9: the key column a job names follows the same rule as its table name, so the
/// operator's own unquoted SQL (`SELECT entity_id … FROM clicase_case_wide`) finds both on
/// every database and by both strategies; attribute columns keep their exact names.
#[test]
fn key_columns_are_named_like_unquoted_identifiers_everywhere() {
    for db in [servers::sqlite(), servers::postgres(), servers::mariadb()] {
        let rt = servers::runtime();
        let Some(mut conn) = rt.block_on(db.open()) else {
            continue;
        };
        let kv = unique("case_kv");
        let target = unique("CASE_WIDE").to_uppercase();
        rt.block_on(create_kv(conn.as_mut(), &kv));
        let dir = tempfile::tempdir().expect("tmp");
        for strategy in ["pushdown", "stream"] {
            let job = case_job(&kv, &target, "replace", strategy);
            run_json(dir.path(), &job, &db.url);
            let rows = rt
                .block_on(conn.query(&format!(
                    "SELECT entity_id, color, size FROM {target} ORDER BY entity_id"
                )))
                .unwrap_or_else(|e| panic!("{} {strategy}: {e}", db.what));
            let rows: Vec<Vec<Option<String>>> = rows
                .iter()
                .map(|r| r.iter().map(|v| v.as_text()).collect())
                .collect();
            let cell = |s: &str| Some(s.to_string());
            assert_eq!(
                rows,
                [
                    vec![cell("1"), cell("red"), cell("M")],
                    vec![cell("2"), cell("blue"), None]
                ],
                "{} {strategy}",
                db.what
            );
            let columns = rt.block_on(catalog_columns(conn.as_mut(), &target));
            let key = match db.what {
                "postgres" => "entity_id",
                _ => "ENTITY_ID",
            };
            assert_eq!(columns, [key, "color", "size"], "{} {strategy}", db.what);
        }
        rt.block_on(drop_if_exists(conn.as_mut(), &target));
        rt.block_on(drop_if_exists(conn.as_mut(), &kv));
    }
}

/// A PostgreSQL target built before key columns were folded (`"ENTITY_ID"`) still takes
/// `append` and `merge` by both strategies: the existing column is matched (exact first,
/// then folded), kept, and the plan says so.
#[test]
fn older_targets_with_quoted_key_columns_still_append_and_merge_on_postgres() {
    let pg = servers::postgres();
    let rt = servers::runtime();
    let Some(mut conn) = rt.block_on(pg.open()) else {
        return;
    };
    let kv = unique("old_kv");
    let target = unique("old_wide");
    rt.block_on(create_kv(conn.as_mut(), &kv));
    let dir = tempfile::tempdir().expect("tmp");
    let cases = [
        ("merge", "(1, 'green', NULL), (3, 'x', NULL)", 3),
        ("append", "(9, 'x', 'S')", 3),
    ];
    for strategy in ["pushdown", "stream"] {
        for (if_exists, before, rows) in cases {
            rt.block_on(drop_if_exists(conn.as_mut(), &target));
            rt.block_on(conn.execute_script(&format!(
                "CREATE TABLE {target} (\"ENTITY_ID\" INT NOT NULL PRIMARY KEY, \"color\" TEXT, \"size\" TEXT);
                 INSERT INTO {target} VALUES {before};"
            )))
            .expect("older target");
            let job = case_job(&kv, &target, if_exists, strategy);
            let report = run_json(dir.path(), &job, &pg.url);
            let what = format!("{if_exists} {strategy}");
            assert_eq!(
                rt.block_on(catalog_columns(conn.as_mut(), &target)),
                ["ENTITY_ID", "color", "size"],
                "{what}"
            );
            let notes = report["notes"].to_string();
            assert!(
                notes.contains("entity column entity_id is the existing column \\\"ENTITY_ID\\\""),
                "{what}: {notes}"
            );
            let read = rt
                .block_on(conn.query(&format!(
                    "SELECT \"ENTITY_ID\", color, size FROM {target} ORDER BY 1"
                )))
                .expect("read target");
            assert_eq!(read.len(), rows, "{what}");
            let first: Vec<Option<String>> = read[0].iter().map(|v| v.as_text()).collect();
            assert_eq!(
                first,
                [Some("1".into()), Some("red".into()), Some("M".into())],
                "{what}"
            );
        }
    }
    rt.block_on(drop_if_exists(conn.as_mut(), &target));
    rt.block_on(drop_if_exists(conn.as_mut(), &kv));
}
