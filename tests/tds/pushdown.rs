//! The pushdown job over TDS: the exact statements the peer receives, in order (the same list
//! `--json` reports), a dry run that sends only reads, and an INSERT the server refuses — a
//! lock that times out, a server error — ending in one line and a rollback.

use eavpivot::dialect::prelude::*;
use eavpivot::dialect::MsSql;

use crate::fixture::*;
use crate::tds_peer::{starts_with, Received, Response, Script};

#[test]
fn full_run_sends_discovery_begin_create_insert_verify_commit() {
    let (peer, out) = run_on_peer("full run", eav_server(), &["--json"]);
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
            s if s.starts_with("EXEC sp_describe_first_result_set @tsql = N'SELECT s.v ") => {
                "describe value"
            }
            s if s.starts_with("EXEC sp_describe_first_result_set") => "describe keys",
            s if s.contains("OBJECT_ID(N'dbo.WIDE', N'U')") => "target exists?",
            "SELECT OBJECT_ID(N'dbo.WIDE')" => "target identity",
            s if s.starts_with("SELECT p.a, COUNT(*) AS pairs") => "survey pairs",
            "SET XACT_ABORT ON; SET NOCOUNT OFF; BEGIN TRANSACTION" => "BEGIN",
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
            // How the value is read (a MONEY as a DECIMAL), and whether MAX/MIN must be told
            // to compare texts by their bytes.
            "describe value",
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
    let create = &sent[9];
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
    let (peer, out) = run_on_peer("dry run", eav_server(), &["--dry-run"]);
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
    assert_eq!(sent.len(), 5, "{sent:#?}");
    assert!(sent[0].starts_with("EXEC sp_describe_first_result_set @tsql = N'SELECT s.v "));
    assert!(sent[1].contains("AS n_rows"));
    assert!(sent[2].starts_with("EXEC sp_describe_first_result_set @tsql = N'SELECT s.e0"));
    assert!(sent[3].contains("OBJECT_ID("));
    // The pushdown's survey is read-only: a dry run makes it, as the real run would.
    assert!(sent[4].starts_with("SELECT p.a, COUNT(*) AS pairs"));
    let printed = String::from_utf8_lossy(&out.stdout);
    for would in [
        "SET XACT_ABORT ON; SET NOCOUNT OFF; BEGIN TRANSACTION",
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

/// The run when the server answers the INSERT with error `number`: exit 1, each of `says`
/// and "rolled back" on stderr, never the password; returns the statements sent.
fn refused_insert(
    label: &str,
    number: u32,
    message: &str,
    flags: &[&str],
    says: &[&str],
) -> Vec<String> {
    // The INSERT rule must win over eav_server's row count: put it first.
    let refusal = Script::new().on(starts_with("INSERT INTO"), Response::error(number, message));
    let (peer, out) = run_on_peer(label, ahead(refusal, eav_server()), flags);
    assert_eq!(out.status.code(), Some(1));
    assert_no_password(&out, PASSWORD);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for said in says {
        assert!(stderr.contains(said), "{stderr}");
    }
    assert!(stderr.contains("rolled back"), "{stderr}");
    let sent = peer.statements();
    assert_eq!(sent.last(), Some(&MsSql.rollback()));
    assert!(!sent.iter().any(|s| s.contains("COMMIT")));
    sent
}

#[test]
fn a_lock_timeout_is_set_first_and_its_expiry_is_one_line_and_a_rollback() {
    let sent = refused_insert(
        "lock timeout",
        1222,
        "Lock request time out period exceeded.",
        &["--lock-timeout", "7"],
        &["lock_timeout 7 s expired waiting for a lock in `INSERT INTO dbo.WIDE"],
    );
    assert_eq!(sent[0], "SET LOCK_TIMEOUT 7000");
}

#[test]
fn server_error_mid_insert_rolls_back_and_shows_the_server_error() {
    let sent = refused_insert(
        "error mid-INSERT",
        8152,
        "String or binary data would be truncated.",
        &[],
        &[
            "SQL Server error 8152",
            "String or binary data would be truncated.",
        ],
    );
    let tail: Vec<&str> = sent[sent.len() - 4..].iter().map(String::as_str).collect();
    assert_eq!(
        tail[0],
        "SET XACT_ABORT ON; SET NOCOUNT OFF; BEGIN TRANSACTION"
    );
    assert!(tail[1].starts_with("CREATE TABLE dbo.WIDE"));
    assert!(tail[2].starts_with("INSERT INTO dbo.WIDE"));
    assert_eq!(tail[3], MsSql.rollback());
}
