//! Evidence 2 for SQL Server: the real eavpivot binary, over the real TDS protocol (tiberius),
//! against the scripted TDS peer in tests/common. Each test asserts the exact statements the
//! peer received, in order, and what the user sees. No SQL Server is involved.

#[path = "common/tds_peer.rs"]
mod tds_peer;

use std::path::PathBuf;
use std::process::Output;

use assert_cmd::Command;
use eavpivot::dialect::prelude::*;
use eavpivot::dialect::MsSql;
use tds_peer::{
    contains, starts_with, BulkColumn, ColType, Column, Received, Response, Script, TdsPeer, Value,
};

const PASSWORD: &str = "s3cret-Pw";

const JOB: &str = "name: tds_job
source:
  table: dbo.EAV
entity: [item_id]
attribute: attr
value: val
pivot:
  aggregate: max
target:
  table: dbo.WIDE
  if_exists: fail
strategy: pushdown
";

fn job_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tds_job.yaml");
    std::fs::write(&path, JOB).expect("write job");
    (dir, path)
}

fn url(port: u16, password: &str) -> String {
    format!("mssql://sa:{password}@127.0.0.1:{port}/eav?encrypt=not_supported")
}

fn int(n: i64) -> Option<tds_peer::Value> {
    Some(n.into())
}

fn text(s: &str) -> Option<tds_peer::Value> {
    Some(s.into())
}

/// A server with the EAV rows: Color (2 items), Size (1 item), 3 items in all.
fn eav_server() -> Script {
    let one_int = |n: i64| Response::rows(vec![Column::new("", ColType::Int)], vec![vec![int(n)]]);
    Script::new()
        .on(
            contains("AS n_rows"),
            Response::rows(
                vec![
                    Column::new("a", ColType::NVarCharMax),
                    Column::new("n_rows", ColType::Int),
                    Column::new("n_values", ColType::Int),
                ],
                vec![
                    vec![text("Color|"), int(2), int(2)],
                    vec![text("Size|"), int(1), int(1)],
                ],
            ),
        )
        .on(
            contains("sp_describe_first_result_set"),
            Response::describe_int_key("e0"),
        )
        .on(contains("OBJECT_ID("), one_int(0))
        .on(
            starts_with("SELECT p.a, COUNT(*) AS pairs"),
            Response::rows(
                vec![
                    Column::new("a", ColType::NVarCharMax),
                    Column::new("pairs", ColType::Int),
                    Column::new("conflicting", ColType::Int),
                ],
                vec![
                    vec![text("Color|"), int(2), int(0)],
                    vec![text("Size|"), int(1), int(0)],
                ],
            ),
        )
        .on(starts_with("INSERT INTO"), Response::RowCount(3))
        .on(
            starts_with("SELECT COUNT(*) FROM (SELECT DISTINCT"),
            one_int(3),
        )
        .on(
            starts_with("SELECT COUNT(*), COUNT([Color])"),
            Response::rows(
                vec![
                    Column::new("", ColType::Int),
                    Column::new("", ColType::Int),
                    Column::new("", ColType::Int),
                ],
                vec![vec![int(3), int(2), int(1)]],
            ),
        )
}

fn eavpivot(args: &[&str], connection: &str) -> Output {
    Command::cargo_bin("eavpivot")
        .expect("binary built")
        .args(args)
        .env("EAVPIVOT_CONNECTION", connection)
        .env_remove("EAVPIVOT_PASSWORD")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("eavpivot runs")
}

fn show(label: &str, peer: &TdsPeer, out: &Output) {
    eprintln!("== {label}: statements received by the TDS peer, in order ==");
    for (i, sql) in peer.statements().iter().enumerate() {
        eprintln!("[{}] {}", i + 1, sql.replace('\n', "\n    "));
    }
    eprintln!("== stderr ==\n{}", String::from_utf8_lossy(&out.stderr));
}

fn assert_no_password(out: &Output, password: &str) {
    for stream in [&out.stdout, &out.stderr] {
        assert!(
            !String::from_utf8_lossy(stream).contains(password),
            "the password was printed"
        );
    }
}

/// The statements a run of JOB sends, as its --json report lists them (exactly what is sent).
fn expected_statements(json: &serde_json::Value) -> Vec<String> {
    json["statements"]
        .as_array()
        .expect("statements in --json")
        .iter()
        .map(|s| s.as_str().expect("text").to_string())
        .collect()
}

#[test]
fn full_run_sends_discovery_begin_create_insert_verify_commit() {
    let peer = TdsPeer::start(eav_server());
    let (_dir, job) = job_file();
    let out = eavpivot(
        &["run", job.to_str().expect("utf-8 path"), "--json"],
        &url(peer.port(), PASSWORD),
    );
    show("full run", &peer, &out);
    assert!(out.status.success(), "exit {:?}", out.status.code());
    assert_no_password(&out, PASSWORD);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json output");
    assert_eq!(json["rows_written"], 3);
    assert_eq!(json["cells_written"], 3);
    assert!(!json.to_string().contains(PASSWORD));
    let sent = peer.statements();
    assert_eq!(sent, expected_statements(&json));
    let shape: Vec<&str> = sent
        .iter()
        .map(|s| match s.as_str() {
            s if s.starts_with("SET LOCK_TIMEOUT") => "lock_timeout",
            "SELECT @@SPID" => "session id",
            s if s.contains("AS n_rows") => "discover",
            s if s.starts_with("EXEC sp_describe_first_result_set") => "describe keys",
            s if s.contains("OBJECT_ID(N'dbo.WIDE', N'U')") => "target exists?",
            "SELECT OBJECT_ID(N'dbo.WIDE')" => "target identity",
            s if s.starts_with("SELECT p.a, COUNT(*) AS pairs") => "survey pairs",
            "SET XACT_ABORT ON; BEGIN TRANSACTION" => "BEGIN",
            s if s.starts_with("CREATE TABLE dbo.WIDE (") => "CREATE",
            s if s.starts_with("INSERT INTO dbo.WIDE ([item_id], [Color], [Size])") => "INSERT",
            s if s.starts_with("SELECT COUNT(*) FROM (SELECT DISTINCT") => "verify entities",
            s if s.starts_with("SELECT COUNT(*), COUNT([Color]), COUNT([Size]) FROM dbo.WIDE") => {
                "verify target"
            }
            "COMMIT TRANSACTION" => "COMMIT",
            _ => "?",
        })
        .collect();
    assert_eq!(
        shape,
        [
            "lock_timeout",
            "session id",
            "discover",
            "describe keys",
            "target exists?",
            // Read before any write, so that a COMMIT whose outcome is unknown can be checked.
            "target identity",
            "survey pairs",
            "BEGIN",
            "CREATE",
            "INSERT",
            "verify entities",
            "verify target",
            "COMMIT"
        ]
    );
    let create = &sent[8];
    assert!(
        create.contains("[item_id] INT"),
        "entity keeps its source type: {create}"
    );
    assert!(create.contains("[Color] NVARCHAR(MAX)"), "{create}");
    // Every statement went as a SQL batch, and the login named the database.
    let received = peer.received();
    assert!(
        matches!(&received[0], Received::Login { user, database, accepted: true, .. } if user == "sa" && database == "eav")
    );
    assert!(received[1..]
        .iter()
        .all(|r| matches!(r, Received::Batch(_))));
}

#[test]
fn dry_run_sends_only_read_only_statements() {
    let peer = TdsPeer::start(eav_server());
    let (_dir, job) = job_file();
    let out = eavpivot(
        &["run", job.to_str().expect("utf-8 path"), "--dry-run"],
        &url(peer.port(), PASSWORD),
    );
    show("dry run", &peer, &out);
    assert!(out.status.success());
    assert_no_password(&out, PASSWORD);
    let all = peer.statements();
    // The session settings come first: lock_timeout, and the id that names lock holders.
    assert_eq!(
        all[..2],
        ["SET LOCK_TIMEOUT 30000", "SELECT @@SPID"],
        "{all:#?}"
    );
    let sent = &all[2..];
    assert_eq!(sent.len(), 4, "{sent:#?}");
    assert!(sent[0].contains("AS n_rows"));
    assert!(sent[1].starts_with("EXEC sp_describe_first_result_set"));
    assert!(sent[2].contains("OBJECT_ID("));
    // The pushdown's survey is read-only: a dry run makes it, as the real run would.
    assert!(sent[3].starts_with("SELECT p.a, COUNT(*) AS pairs"));
    let printed = String::from_utf8_lossy(&out.stdout);
    for would in [
        "SET XACT_ABORT ON; BEGIN TRANSACTION",
        "CREATE TABLE dbo.WIDE",
        "INSERT INTO dbo.WIDE",
        "COMMIT TRANSACTION",
    ] {
        assert!(printed.contains(would), "dry run must print {would}");
        assert!(
            !sent.iter().any(|s| s.contains(would)),
            "dry run sent {would}"
        );
    }
}

#[test]
fn a_lock_timeout_is_set_first_and_its_expiry_is_one_line_and_a_rollback() {
    let script = Script::new().on(
        starts_with("INSERT INTO"),
        Response::error(1222, "Lock request time out period exceeded."),
    );
    let mut rules = script.rules;
    rules.extend(eav_server().rules);
    let peer = TdsPeer::start(Script { rules });
    let (_dir, job) = job_file();
    let out = eavpivot(
        &[
            "run",
            job.to_str().expect("utf-8 path"),
            "--lock-timeout",
            "7",
        ],
        &url(peer.port(), PASSWORD),
    );
    show("lock timeout", &peer, &out);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("lock_timeout 7 s expired waiting for a lock in `INSERT INTO dbo.WIDE"),
        "{stderr}"
    );
    assert!(stderr.contains("rolled back"), "{stderr}");
    let sent = peer.statements();
    assert_eq!(sent[0], "SET LOCK_TIMEOUT 7000");
    assert_eq!(sent.last(), Some(&MsSql.rollback()));
}

#[test]
fn server_error_mid_insert_rolls_back_and_shows_the_server_error() {
    let script = Script::new().on(
        starts_with("INSERT INTO"),
        Response::error(8152, "String or binary data would be truncated."),
    );
    // The INSERT rule must win over eav_server's row count: put it first.
    let mut rules = script.rules;
    rules.extend(eav_server().rules);
    let peer = TdsPeer::start(Script { rules });
    let (_dir, job) = job_file();
    let out = eavpivot(
        &["run", job.to_str().expect("utf-8 path")],
        &url(peer.port(), PASSWORD),
    );
    show("error mid-INSERT", &peer, &out);
    assert_eq!(out.status.code(), Some(1));
    assert_no_password(&out, PASSWORD);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("SQL Server error 8152"), "{stderr}");
    assert!(
        stderr.contains("String or binary data would be truncated."),
        "{stderr}"
    );
    assert!(stderr.contains("rolled back"), "{stderr}");
    let sent = peer.statements();
    let tail: Vec<&str> = sent[sent.len() - 4..].iter().map(String::as_str).collect();
    assert_eq!(tail[0], "SET XACT_ABORT ON; BEGIN TRANSACTION");
    assert!(tail[1].starts_with("CREATE TABLE dbo.WIDE"));
    assert!(tail[2].starts_with("INSERT INTO dbo.WIDE"));
    assert_eq!(tail[3], MsSql.rollback());
    assert!(!sent.iter().any(|s| s.contains("COMMIT")));
}

#[test]
fn refused_connection_is_one_clear_line() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let (_dir, job) = job_file();
    let out = eavpivot(
        &["run", job.to_str().expect("utf-8 path")],
        &url(port, PASSWORD),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_no_password(&out, PASSWORD);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot connect to SQL Server at 127.0.0.1:{port}: connection refused"
        )),
        "{stderr}"
    );
    assert_eq!(
        stderr.lines().filter(|l| l.contains("error")).count(),
        1,
        "{stderr}"
    );
}

#[test]
fn login_failure_is_one_clear_line_without_the_password() {
    let peer = TdsPeer::start(Script::new());
    let (_dir, job) = job_file();
    // The password comes from EAVPIVOT_PASSWORD here, through an ADO.NET string.
    let ado = format!(
        "Server=tcp:127.0.0.1,{};Database=eav;User Id=sa;Encrypt=DANGER_PLAINTEXT",
        peer.port()
    );
    let out = Command::cargo_bin("eavpivot")
        .expect("binary built")
        .args(["run", job.to_str().expect("utf-8 path")])
        .env("EAVPIVOT_CONNECTION", &ado)
        .env("EAVPIVOT_PASSWORD", "wrong")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("eavpivot runs");
    show("login failure", &peer, &out);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("login failed for user 'sa'"), "{stderr}");
    assert!(stderr.contains("18456"), "{stderr}");
    assert!(!stderr.contains("wrong") && !String::from_utf8_lossy(&out.stdout).contains("wrong"));
    assert!(
        peer.statements().is_empty(),
        "nothing may be sent after a failed login"
    );
}

#[test]
fn unknown_database_is_one_clear_line() {
    let peer = TdsPeer::start(Script::new());
    let (_dir, job) = job_file();
    let connection = format!(
        "mssql://sa@127.0.0.1:{}/nosuchdb?encrypt=not_supported&password={PASSWORD}",
        peer.port()
    );
    let out = eavpivot(&["run", job.to_str().expect("utf-8 path")], &connection);
    assert_eq!(out.status.code(), Some(1));
    assert_no_password(&out, PASSWORD);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot open database 'nosuchdb'"),
        "{stderr}"
    );
}

/// The stream job's key–value rows as the ordered read returns them: (item, attribute, value).
type Kv<'a> = (i64, &'a str, Option<&'a str>);

/// A server for JOB run with `--strategy stream`: discovery finds `attrs`, the ordered read
/// (on its own connection) returns `rows`, and the metadata query a bulk load starts with
/// (`SELECT TOP 0 <columns> FROM dbo.WIDE`) is answered with `wide`, the target's columns as
/// SQL Server would describe them.
fn stream_server(attrs: &[&str], rows: &[Kv], wide: Vec<Column>) -> Script {
    let discovered = attrs
        .iter()
        .map(|a| {
            let n = |all: bool| {
                let of_a = rows.iter().filter(|r| r.1 == *a);
                of_a.filter(|r| all || r.2.is_some()).count() as i64
            };
            vec![text(&format!("{a}|")), int(n(true)), int(n(false))]
        })
        .collect();
    // The target check: rows, then non-NULL cells per attribute column.
    let mut entities: Vec<i64> = rows.iter().map(|r| r.0).collect();
    entities.dedup();
    let mut counts = vec![int(entities.len() as i64)];
    counts.extend(attrs.iter().map(|a| {
        let filled = rows.iter().filter(|r| r.1 == *a && r.2.is_some()).count();
        int(filled as i64)
    }));
    let verified = Response::rows(
        vec![Column::new("", ColType::Int); counts.len()],
        vec![counts],
    );
    let read = rows
        .iter()
        .map(|(e, a, v)| vec![int(*e), text(&format!("{a}|")), v.and_then(text)])
        .collect();
    let mut rules = Script::new()
        .on(
            contains("AS n_rows"),
            Response::rows(
                vec![
                    Column::new("a", ColType::NVarCharMax),
                    Column::new("n_rows", ColType::Int),
                    Column::new("n_values", ColType::Int),
                ],
                discovered,
            ),
        )
        .on(
            contains("ORDER BY s.e0"),
            Response::rows(
                vec![
                    Column::new("e0", ColType::Int),
                    Column::new("a", ColType::NVarCharMax),
                    Column::new("v", ColType::NVarChar),
                ],
                read,
            ),
        )
        .on(
            starts_with("SELECT TOP 0"),
            Response::rows(wide, Vec::new()),
        )
        .on(starts_with("SELECT COUNT(*), COUNT("), verified)
        .rules;
    rules.extend(eav_server().rules);
    Script { rules }
}

/// The wide table as `CREATE TABLE` makes it: `[item_id] INT NOT NULL`, then one
/// `NVARCHAR(MAX)` column per attribute.
fn created_columns(attrs: &[&str]) -> Vec<Column> {
    let mut columns = vec![Column::new("item_id", ColType::IntNotNull)];
    columns.extend(attrs.iter().map(|a| Column::new(a, ColType::NVarCharMax)));
    columns
}

/// Color on items 1 and 2, Size on item 1, a NULL Color on item 3.
const COLOR_SIZE_ROWS: [Kv; 4] = [
    (1, "Color", Some("Red")),
    (1, "Size", Some("M")),
    (2, "Color", Some("Blue")),
    (3, "Color", None),
];

fn run_stream(peer: &TdsPeer, label: &str) -> serde_json::Value {
    let (_dir, job) = job_file();
    let out = eavpivot(
        &[
            "run",
            job.to_str().expect("utf-8 path"),
            "--strategy",
            "stream",
            "--json",
        ],
        &url(peer.port(), PASSWORD),
    );
    show(label, peer, &out);
    assert!(out.status.success(), "exit {:?}", out.status.code());
    assert_no_password(&out, PASSWORD);
    serde_json::from_slice(&out.stdout).expect("--json output")
}

fn label(r: &Received) -> String {
    match r {
        Received::Batch(s) if s.ends_with("BEGIN TRANSACTION") => "BEGIN".into(),
        Received::Batch(s) if s.starts_with("CREATE TABLE dbo.WIDE") => "CREATE".into(),
        Received::Batch(s) if s.starts_with("SELECT TOP 0") => "SELECT TOP 0".into(),
        Received::Batch(s) if s.starts_with("INSERT BULK dbo.WIDE") => "INSERT BULK".into(),
        Received::Batch(s) if s.starts_with("SELECT COUNT(*), COUNT(") => "verify".into(),
        Received::Batch(s) if s == "COMMIT TRANSACTION" => "COMMIT".into(),
        Received::BulkLoad { .. } => "bulk rows".into(),
        Received::Rpc { sql: Some(s), .. } if s.starts_with("INSERT INTO dbo.WIDE") => {
            "INSERT (sp_executesql)".into()
        }
        other => format!("{other:?}"),
    }
}

/// What the connection that began the transaction received from BEGIN on, as labels; and
/// the connections the ordered read came on.
fn load_connection(peer: &TdsPeer) -> (Vec<String>, Vec<usize>) {
    let log = peer.received_by_connection();
    let (start, conn) = log
        .iter()
        .enumerate()
        .find_map(|(i, (c, r))| (label(r) == "BEGIN").then_some((i, *c)))
        .expect("a BEGIN was sent");
    let story = log[start..]
        .iter()
        .filter(|(c, _)| *c == conn)
        .map(|(_, r)| label(r))
        .collect();
    let readers = log
        .iter()
        .filter(|(_, r)| matches!(r, Received::Batch(s) if s.contains("ORDER BY s.e0")))
        .map(|(c, _)| *c)
        .filter(|c| *c != conn)
        .collect();
    (story, readers)
}

/// Decoded bulk-load rows, `None` = NULL.
type Rows = Vec<Vec<Option<Value>>>;

/// The first parameterised INSERT the peer received: its SQL and its parameter values.
fn first_insert(peer: &TdsPeer) -> (String, Vec<Option<String>>) {
    peer.received()
        .into_iter()
        .find_map(|r| match r {
            Received::Rpc {
                sql: Some(sql),
                params,
                ..
            } => Some((sql, params.into_iter().map(|(_, v)| v).collect())),
            _ => None,
        })
        .expect("the rows go by sp_executesql")
}

/// Every bulk load the peer received: its INSERT BULK statement, columns and rows.
fn bulk_loads(peer: &TdsPeer) -> Vec<(String, Vec<BulkColumn>, Rows)> {
    peer.received()
        .into_iter()
        .filter_map(|r| match r {
            Received::BulkLoad {
                statement,
                columns,
                rows,
            } => Some((statement, columns, rows)),
            _ => None,
        })
        .collect()
}

#[test]
fn stream_reads_on_a_second_connection_and_bulk_loads_inside_the_transaction() {
    let attrs = ["Color", "Size"];
    let peer = TdsPeer::start(stream_server(
        &attrs,
        &COLOR_SIZE_ROWS,
        created_columns(&attrs),
    ));
    let json = run_stream(&peer, "stream, bulk load");
    assert_eq!(json["rows_written"], 3);
    let logins = peer
        .received()
        .iter()
        .filter(|r| matches!(r, Received::Login { accepted: true, .. }))
        .count();
    assert_eq!(logins, 2, "the read runs on its own connection");

    let (story, readers) = load_connection(&peer);
    assert_eq!(readers.len(), 1, "read on another connection than the load");
    assert_eq!(
        story,
        [
            "BEGIN",
            "CREATE",
            // eavpivot's own look at the column types, then tiberius's before INSERT BULK.
            "SELECT TOP 0",
            "SELECT TOP 0",
            "INSERT BULK",
            "bulk rows",
            "verify",
            "COMMIT"
        ],
        "bulk load on the load's connection, between BEGIN and COMMIT"
    );
    let sent = peer.statements();
    assert!(sent
        .iter()
        .filter(|s| s.starts_with("SELECT TOP 0"))
        .all(|s| s == "SELECT TOP 0 [item_id], [Color], [Size] FROM dbo.WIDE"));

    let loads = bulk_loads(&peer);
    assert_eq!(loads.len(), 1, "one batch");
    let (statement, columns, rows) = &loads[0];
    assert_eq!(
        statement,
        "INSERT BULK dbo.WIDE ([item_id] int, [Color] nvarchar(max), [Size] nvarchar(max)) \
         WITH (CHECK_CONSTRAINTS, KEEP_NULLS, FIRE_TRIGGERS)"
    );
    assert_eq!(
        columns,
        &[
            BulkColumn::new("item_id", "INT4", false),
            BulkColumn::new("Color", "NVARCHAR(max)", true),
            BulkColumn::new("Size", "NVARCHAR(max)", true),
        ]
    );
    assert_eq!(
        rows,
        &[
            vec![int(1), text("Red"), text("M")],
            vec![int(2), text("Blue"), None],
            vec![int(3), None, None],
        ]
    );
    assert!(
        !peer
            .received()
            .iter()
            .any(|r| matches!(r, Received::Rpc { .. })),
        "no parameterised INSERT when the bulk load fits"
    );
}

#[test]
fn quotes_hyphens_spaces_and_unicode_in_column_names_still_bulk_load() {
    // Bracket-quoted, these pass tiberius's identifier guard: only control characters fail it.
    // In the order eavpivot makes the columns (by attribute): the metadata must match it.
    let attrs = ["Größe x]", "a-b", "it's"];
    let rows = [
        (1, "it's", Some("q")),
        (1, "a-b", Some("h")),
        (2, "Größe x]", Some("ü")),
    ];
    let peer = TdsPeer::start(stream_server(&attrs, &rows, created_columns(&attrs)));
    let json = run_stream(&peer, "stream, unusual names");
    assert_eq!(json["rows_written"], 2);
    let (story, _) = load_connection(&peer);
    assert!(story.contains(&"bulk rows".to_string()), "{story:?}");
    assert!(peer
        .statements()
        .contains(&"SELECT TOP 0 [item_id], [Größe x]]], [a-b], [it's] FROM dbo.WIDE".to_string()));
    let loads = bulk_loads(&peer);
    let (statement, _, rows) = &loads[0];
    assert!(
        statement.starts_with(
            "INSERT BULK dbo.WIDE ([item_id] int, [Größe x]]] nvarchar(max), [a-b] nvarchar(max), \
             [it's] nvarchar(max))"
        ),
        "{statement}"
    );
    assert_eq!(
        rows,
        &[
            vec![int(1), None, text("h"), text("q")],
            vec![int(2), text("ü"), None, None],
        ]
    );
}

#[test]
fn a_column_name_tiberius_refuses_falls_back_to_bound_parameters() {
    // A tab is fine for SQL Server inside [...], but tiberius's guard refuses any control
    // character: the load falls back before anything about bulk is sent.
    let attrs = ["Color", "Note\tA"];
    let rows = [
        (1, "Color", Some("Red")),
        (1, "Note\tA", Some("x")),
        (2, "Color", Some("Blue")),
        (3, "Note\tA", None),
    ];
    let peer = TdsPeer::start(stream_server(&attrs, &rows, created_columns(&attrs)));
    let json = run_stream(&peer, "stream, refused name");
    assert_eq!(json["rows_written"], 3);
    let (story, readers) = load_connection(&peer);
    assert_eq!(readers.len(), 1);
    assert_eq!(
        story,
        [
            "BEGIN",
            "CREATE",
            "INSERT (sp_executesql)",
            "verify",
            "COMMIT"
        ]
    );
    let (sql, params) = first_insert(&peer);
    let values: Vec<Option<&str>> = params.iter().map(Option::as_deref).collect();
    // NULL cells are literal NULLs, never parameters: tiberius would send them as the
    // untyped NULLTYPE, on which Babelfish drops the connection.
    assert_eq!(
        sql,
        "INSERT INTO dbo.WIDE ([item_id], [Color], [Note\tA]) VALUES (@P1, @P2, @P3), (@P4, @P5, NULL), (@P6, NULL, NULL)"
    );
    assert_eq!(
        values,
        [
            Some("1"),
            Some("Red"),
            Some("x"),
            Some("2"),
            Some("Blue"),
            Some("3"),
        ]
    );
    assert!(bulk_loads(&peer).is_empty());
}

#[test]
fn a_column_bulk_would_not_fill_exactly_falls_back_to_bound_parameters() {
    // An appended-to table may have other types than eavpivot would create: NVARCHAR(4000),
    // which tiberius would declare as nvarchar(max) in INSERT BULK.
    let attrs = ["Color", "Size"];
    let mut wide = created_columns(&attrs);
    wide[2] = Column::new("Size", ColType::NVarChar);
    let peer = TdsPeer::start(stream_server(&attrs, &COLOR_SIZE_ROWS, wide));
    let json = run_stream(&peer, "stream, inexact column");
    assert_eq!(json["rows_written"], 3);
    let (story, _) = load_connection(&peer);
    assert_eq!(
        story,
        [
            "BEGIN",
            "CREATE",
            "SELECT TOP 0",
            "INSERT (sp_executesql)",
            "verify",
            "COMMIT"
        ]
    );
    let (_, params) = first_insert(&peer);
    let values: Vec<Option<&str>> = params.iter().map(Option::as_deref).collect();
    assert_eq!(
        values,
        [
            Some("1"),
            Some("Red"),
            Some("M"),
            Some("2"),
            Some("Blue"),
            Some("3"),
        ]
    );
    assert!(bulk_loads(&peer).is_empty());
}

#[test]
fn a_long_stream_bulk_loads_batch_by_batch_on_the_same_connection() {
    // 2,500 entities: the backend loads every 2,000 wide rows, so two bulk loads, the
    // first spanning many TDS packets.
    let colors: Vec<String> = (0..2500).map(|i| format!("colour {i}")).collect();
    let rows: Vec<Kv> = (0..2500)
        .flat_map(|i| {
            let size = (i % 2 == 0).then_some("M");
            [
                (i as i64 + 1, "Color", Some(colors[i].as_str())),
                (i as i64 + 1, "Size", size),
            ]
        })
        .collect();
    let attrs = ["Color", "Size"];
    let peer = TdsPeer::start(stream_server(&attrs, &rows, created_columns(&attrs)));
    let json = run_stream(&peer, "stream, two batches");
    assert_eq!(json["rows_written"], 2500);
    let (story, _) = load_connection(&peer);
    let batch = ["SELECT TOP 0", "SELECT TOP 0", "INSERT BULK", "bulk rows"];
    let expected: Vec<&str> = ["BEGIN", "CREATE"]
        .into_iter()
        .chain(batch)
        .chain(batch)
        .chain(["verify", "COMMIT"])
        .collect();
    assert_eq!(story, expected);
    let loads = bulk_loads(&peer);
    let sizes: Vec<usize> = loads.iter().map(|(_, _, rows)| rows.len()).collect();
    assert_eq!(sizes, [2000, 500]);
    let all: Vec<&Vec<Option<Value>>> = loads.iter().flat_map(|(_, _, rows)| rows).collect();
    for (i, row) in all.iter().enumerate() {
        let size = (i % 2 == 0).then(|| "M".into());
        let expected = vec![int(i as i64 + 1), text(&colors[i]), size];
        assert_eq!(**row, expected, "row {i}");
    }
}

#[test]
fn a_failing_fallback_insert_names_the_table_and_why_bulk_was_not_used() {
    let attrs = ["Color", "Note\tA"];
    let rows = [(1, "Color", Some("Red")), (1, "Note\tA", Some("x"))];
    let mut rules = Script::new()
        .on(
            starts_with("INSERT INTO dbo.WIDE"),
            Response::error(8152, "String or binary data would be truncated."),
        )
        .rules;
    rules.extend(stream_server(&attrs, &rows, created_columns(&attrs)).rules);
    let peer = TdsPeer::start(Script { rules });
    let (_dir, job) = job_file();
    let out = eavpivot(
        &[
            "run",
            job.to_str().expect("utf-8 path"),
            "--strategy",
            "stream",
        ],
        &url(peer.port(), PASSWORD),
    );
    show("stream, failing fallback", &peer, &out);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("error"))
        .expect("an error line");
    assert!(
        line.contains(
            "loading rows into dbo.WIDE (by INSERT: tiberius refuses the table or a column name \
             for a bulk load): SQL Server error 8152"
        ),
        "{stderr}"
    );
    assert!(line.contains("rolled back"), "{stderr}");
    assert!(
        line.contains("streaming dbo.EAV: "),
        "names the source: {stderr}"
    );
    let (story, _) = load_connection(&peer);
    assert_eq!(
        story,
        [
            "BEGIN",
            "CREATE",
            "INSERT (sp_executesql)",
            "Batch(\"IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION\")"
        ]
    );
}

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
    assert_eq!(
        story,
        [
            "BEGIN",
            "CREATE",
            "SELECT TOP 0",
            "SELECT TOP 0",
            "INSERT BULK",
            "bulk rows",
            "verify",
            "COMMIT"
        ]
    );
    let loads = bulk_loads(&peer);
    assert_eq!(
        loads[0].2,
        [
            vec![int(1), text("Red"), text("M")],
            vec![int(2), text("Blue"), None],
            vec![int(3), None, None],
        ]
    );
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
