//! Evidence 2 for SQL Server: the real eavpivot binary, over the real TDS protocol (tiberius),
//! against the scripted TDS peer in tests/common. Each test asserts the exact statements the
//! peer received, in order, and what the user sees. No SQL Server is involved.

#[path = "common/tds_peer.rs"]
mod tds_peer;

use std::path::PathBuf;
use std::process::Output;

use assert_cmd::Command;
use eavpivot::dialect::{Dialect, MsSql};
use tds_peer::{contains, starts_with, ColType, Column, Received, Response, Script, TdsPeer};

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
            Response::rows(
                vec![
                    Column::new("is_hidden", ColType::Bit),
                    Column::new("column_ordinal", ColType::Int),
                    Column::new("name", ColType::NVarChar),
                    Column::new("is_nullable", ColType::Bit),
                    Column::new("system_type_id", ColType::Int),
                    Column::new("system_type_name", ColType::NVarChar),
                ],
                vec![vec![
                    Some(false.into()),
                    int(1),
                    text("e0"),
                    Some(false.into()),
                    int(56),
                    text("int"),
                ]],
            ),
        )
        .on(contains("OBJECT_ID("), one_int(0))
        .on(contains("HAVING MIN(s.v) <> MAX(s.v)"), one_int(0))
        .on(starts_with("INSERT INTO"), Response::RowCount(3))
        .on(
            starts_with("SELECT COUNT(*) FROM (SELECT DISTINCT"),
            one_int(3),
        )
        .on(
            starts_with("SELECT d.a, COUNT(*)"),
            Response::rows(
                vec![
                    Column::new("a", ColType::NVarCharMax),
                    Column::new("", ColType::Int),
                ],
                vec![vec![text("Color|"), int(2)], vec![text("Size|"), int(1)]],
            ),
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
            s if s.contains("AS n_rows") => "discover",
            s if s.starts_with("EXEC sp_describe_first_result_set") => "describe keys",
            s if s.contains("OBJECT_ID(N'dbo.WIDE', N'U')") => "target exists?",
            s if s.contains("HAVING MIN(s.v) <> MAX(s.v)") => "count conflicts",
            "SET XACT_ABORT ON; BEGIN TRANSACTION" => "BEGIN",
            s if s.starts_with("CREATE TABLE dbo.WIDE (") => "CREATE",
            s if s.starts_with("INSERT INTO dbo.WIDE ([item_id], [Color], [Size])") => "INSERT",
            s if s.starts_with("SELECT COUNT(*) FROM (SELECT DISTINCT") => "verify entities",
            s if s.starts_with("SELECT d.a, COUNT(*)") => "verify cells",
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
            "discover",
            "describe keys",
            "target exists?",
            "count conflicts",
            "BEGIN",
            "CREATE",
            "INSERT",
            "verify entities",
            "verify cells",
            "verify target",
            "COMMIT"
        ]
    );
    let create = &sent[5];
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
    let sent = peer.statements();
    assert_eq!(sent.len(), 3, "{sent:#?}");
    assert!(sent[0].contains("AS n_rows"));
    assert!(sent[1].starts_with("EXEC sp_describe_first_result_set"));
    assert!(sent[2].contains("OBJECT_ID("));
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

#[test]
fn stream_reads_on_a_second_connection_and_loads_with_bound_parameters() {
    let mut rules = Script::new()
        .on(
            contains("ORDER BY s.e0"),
            Response::rows(
                vec![
                    Column::new("e0", ColType::Int),
                    Column::new("a", ColType::NVarCharMax),
                    Column::new("v", ColType::NVarChar),
                ],
                vec![
                    vec![int(1), text("Color|"), text("Red")],
                    vec![int(1), text("Size|"), text("M")],
                    vec![int(2), text("Color|"), text("Blue")],
                    vec![int(3), text("Color|"), None],
                ],
            ),
        )
        .rules;
    rules.extend(eav_server().rules);
    let peer = TdsPeer::start(Script { rules });
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
    show("stream", &peer, &out);
    assert!(out.status.success());
    let received = peer.received();
    let logins = received
        .iter()
        .filter(|r| matches!(r, Received::Login { accepted: true, .. }))
        .count();
    assert_eq!(logins, 2, "the read runs on its own connection");
    let load = received
        .iter()
        .find_map(|r| match r {
            Received::Rpc {
                sql: Some(sql),
                params,
                ..
            } if sql.starts_with("INSERT INTO dbo.WIDE") => Some((sql, params)),
            _ => None,
        })
        .expect("the wide rows are loaded with sp_executesql");
    assert_eq!(
        load.0,
        &MsSql.insert_values(
            &eavpivot::config::TableRef::parse("dbo.WIDE").expect("table"),
            &["item_id".into(), "Color".into(), "Size".into()],
            3
        )
    );
    let values: Vec<Option<&str>> = load.1.iter().map(|(_, v)| v.as_deref()).collect();
    assert_eq!(
        values,
        [
            Some("1"),
            Some("Red"),
            Some("M"),
            Some("2"),
            Some("Blue"),
            None,
            Some("3"),
            None,
            None
        ]
    );
    let sent = peer.statements();
    assert_eq!(sent.last().map(String::as_str), Some("COMMIT TRANSACTION"));
}
