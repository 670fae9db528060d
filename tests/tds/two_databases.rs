//! SQL Server on one side of a load between two databases (issue 12), over TDS: a SQLite
//! source streamed into SQL Server by bulk load, only the write path reaching the peer; and
//! SQL Server as the source of a load into SQLite, nothing written to it.

use crate::fixture::*;
use crate::tds_peer::TdsPeer;

/// Issue 12, SQL Server as the target of a load from another database: the source is read
/// from SQLite, and only the write path reaches the peer — CREATE, the bulk load and the
/// verification inside one transaction, nothing read from it but the target's own counts.
#[test]
fn a_sqlite_source_streams_into_sql_server_by_bulk_load() {
    let peer = TdsPeer::start(created(&["Color", "Size"], &COLOR_SIZE_ROWS));
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("source.db");
    let conn = sqlite_source(&db);
    let out = run_between(
        "sqlite -> sql server",
        &peer,
        &dir.path().join("cross.yaml"),
        ("table: dbo.EAV", "table: EAV"),
        &conn,
        &url(peer.port(), PASSWORD),
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json");
    assert_eq!(json["rows_written"], 3);
    assert_eq!(json["strategy"], "stream");
    let sent = peer.statements();
    assert!(
        !sent
            .iter()
            .any(|s| s.contains("AS n_rows") || s.contains("ORDER BY s.e0")),
        "the source is not read from SQL Server: {sent:#?}"
    );
    let create = sent
        .iter()
        .find(|s| s.starts_with("CREATE TABLE dbo.WIDE"))
        .expect("CREATE sent");
    // SQLite's INT is 64-bit INTEGER: SQL Server gets BIGINT.
    assert!(create.contains("[item_id] BIGINT NOT NULL"), "{create}");
    let (story, _) = load_connection(&peer);
    assert_eq!(story, bulk_story(1));
    let loads = bulk_loads(&peer);
    assert_eq!(loads[0].2, color_size_wide());
}

/// The COLOR_SIZE_ROWS source as a SQLite file, written through the library's own backend (no
/// sqlite3 shell assumed); returns its connection string.
fn sqlite_source(path: &std::path::Path) -> String {
    std::fs::write(path, b"").expect("create db file");
    let url = format!("sqlite:{}", path.display());
    let rows: Vec<String> = COLOR_SIZE_ROWS
        .iter()
        .map(|(e, a, v)| match v {
            Some(v) => format!("({e}, '{a}', '{v}')"),
            None => format!("({e}, '{a}', NULL)"),
        })
        .collect();
    let script = format!(
        "CREATE TABLE EAV (item_id INT, attr TEXT, val TEXT); INSERT INTO EAV VALUES {};",
        rows.join(", ")
    );
    let (rt, mut db) = open_sqlite(&url);
    rt.block_on(db.execute_script(&script))
        .expect("source rows");
    url
}

/// The SQLite database at `url`, opened through the library's own backend, and a runtime
/// to use it on.
fn open_sqlite(url: &str) -> (tokio::runtime::Runtime, Box<dyn eavpivot::backend::Backend>) {
    use eavpivot::backend::{self, ConnectOptions, ConnectionSpec};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let spec = ConnectionSpec::parse(Some(url)).expect("url");
    let db = rt
        .block_on(backend::connect(&spec, &ConnectOptions::default()))
        .expect("open sqlite");
    (rt, db)
}

/// JOB with `from` spelt `to` and `strategy: auto`, written to `job` and run with `--json`
/// from `source` into `--target-connection target`: it must succeed without printing the
/// password; what the peer received is printed under `label`.
fn run_between(
    label: &str,
    peer: &TdsPeer,
    job: &std::path::Path,
    (from, to): (&str, &str),
    source: &str,
    target: &str,
) -> std::process::Output {
    std::fs::write(
        job,
        JOB.replace(from, to)
            .replace("strategy: pushdown", "strategy: auto"),
    )
    .expect("write job");
    let out = eavpivot(
        &[
            "run",
            job.to_str().expect("utf-8 path"),
            "--json",
            "--target-connection",
            target,
        ],
        source,
    );
    show(label, peer, &out);
    assert!(out.status.success(), "exit {:?}", out.status.code());
    assert_no_password(&out, PASSWORD);
    out
}

/// And the other way: SQL Server as the source of a load into SQLite. Discovery, the key's
/// type and the ordered read come from the peer (the read on a connection of its own); the
/// table is written in SQLite, and holds the peer's rows cell by cell.
#[test]
fn sql_server_streams_into_a_sqlite_target() {
    let peer = TdsPeer::start(created(&["Color", "Size"], &COLOR_SIZE_ROWS));
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("target.db");
    let url_target = format!("sqlite:{}", target.display());
    run_between(
        "sql server -> sqlite",
        &peer,
        &dir.path().join("to_sqlite.yaml"),
        ("table: dbo.WIDE", "table: WIDE"),
        &url(peer.port(), PASSWORD),
        &url_target,
    );
    let sent = peer.statements();
    assert!(
        sent.iter().any(|s| s.contains("AS n_rows")),
        "discovery on the source"
    );
    assert!(
        sent.iter().any(|s| s.contains("ORDER BY s.e0")),
        "read on the source"
    );
    assert!(
        !sent
            .iter()
            .any(|s| s.starts_with("CREATE TABLE") || s.contains("BEGIN TRANSACTION")),
        "nothing is written to the source: {sent:#?}"
    );
    let (rt, mut db) = open_sqlite(&url_target);
    let rows = rt
        .block_on(db.query("SELECT item_id, Color, Size FROM WIDE ORDER BY item_id"))
        .expect("target rows");
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|v| v.to_string()).collect())
        .collect();
    assert_eq!(
        cells,
        [
            ["1", "Red", "M"],
            ["2", "Blue", "NULL"],
            ["3", "NULL", "NULL"]
        ]
    );
}
