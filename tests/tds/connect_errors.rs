//! Connecting over TDS fails in one clear line, never showing the password: a refused
//! connection, a failed login (after which nothing is sent), an unknown database.

use assert_cmd::Command;

use crate::fixture::*;
use crate::tds_peer::{Script, TdsPeer};

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
