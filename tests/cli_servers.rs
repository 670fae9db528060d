//! The commands against live servers where the job itself says where to go: `inspect` on the
//! database `source.connection` names (issue 21.8).

use std::path::Path;
use std::process::Output;

#[path = "support/servers.rs"]
mod servers;

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
