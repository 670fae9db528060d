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
    let attrs = ["Color", "Size"];
    let peer = TdsPeer::start(stream_server(
        &attrs,
        &COLOR_SIZE_ROWS,
        created_columns(&attrs),
    ));
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("source.db");
    let conn = sqlite_source(&db);
    let job = dir.path().join("cross.yaml");
    std::fs::write(
        &job,
        JOB.replace("table: dbo.EAV", "table: EAV")
            .replace("strategy: pushdown", "strategy: auto"),
    )
    .expect("write job");
    let out = eavpivot(
        &[
            "run",
            job.to_str().expect("utf-8 path"),
            "--json",
            "--target-connection",
            &url(peer.port(), PASSWORD),
        ],
        &conn,
    );
    show("sqlite -> sql server", &peer, &out);
    assert!(out.status.success(), "exit {:?}", out.status.code());
    assert_no_password(&out, PASSWORD);
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
    use eavpivot::backend::{self, ConnectOptions, ConnectionSpec};
    std::fs::write(path, b"").expect("create db file");
    let url = format!("sqlite:{}", path.display());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let spec = ConnectionSpec::parse(Some(&url)).expect("url");
        let mut db = backend::connect(&spec, &ConnectOptions::default())
            .await
            .expect("open sqlite");
        let rows: Vec<String> = COLOR_SIZE_ROWS
            .iter()
            .map(|(e, a, v)| match v {
                Some(v) => format!("({e}, '{a}', '{v}')"),
                None => format!("({e}, '{a}', NULL)"),
            })
            .collect();
        db.execute_script(&format!(
            "CREATE TABLE EAV (item_id INT, attr TEXT, val TEXT); INSERT INTO EAV VALUES {};",
            rows.join(", ")
        ))
        .await
        .expect("source rows");
    });
    url
}

/// And the other way: SQL Server as the source of a load into SQLite. Discovery, the key's
/// type and the ordered read come from the peer (the read on a connection of its own); the
/// table is written in SQLite, and holds the peer's rows cell by cell.
#[test]
fn sql_server_streams_into_a_sqlite_target() {
    let attrs = ["Color", "Size"];
    let peer = TdsPeer::start(stream_server(
        &attrs,
        &COLOR_SIZE_ROWS,
        created_columns(&attrs),
    ));
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("target.db");
    let job = dir.path().join("to_sqlite.yaml");
    std::fs::write(
        &job,
        JOB.replace("table: dbo.WIDE", "table: WIDE")
            .replace("strategy: pushdown", "strategy: auto"),
    )
    .expect("write job");
    let out = eavpivot(
        &[
            "run",
            job.to_str().expect("utf-8 path"),
            "--json",
            "--target-connection",
            &format!("sqlite:{}", target.display()),
        ],
        &url(peer.port(), PASSWORD),
    );
    show("sql server -> sqlite", &peer, &out);
    assert!(out.status.success(), "exit {:?}", out.status.code());
    assert_no_password(&out, PASSWORD);
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
    let url = format!("sqlite:{}", target.display());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let rows = rt.block_on(async {
        use eavpivot::backend::{self, ConnectOptions, ConnectionSpec};
        let spec = ConnectionSpec::parse(Some(&url)).expect("url");
        let mut db = backend::connect(&spec, &ConnectOptions::default())
            .await
            .expect("open target");
        db.query("SELECT item_id, Color, Size FROM WIDE ORDER BY item_id")
            .await
            .expect("target rows")
    });
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
