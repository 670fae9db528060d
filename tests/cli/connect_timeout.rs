//! `--connect-timeout` bounds connect AND login on every server backend: a listener that
//! accepts TCP and never says a word (a hung server, a black-holing proxy) must not hang
//! eavpivot. Each run must end within a few seconds with one line that names the server and
//! how long it waited, and never the password.

use crate::connect_job;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use assert_cmd::Command;

const PASSWORD: &str = "T1meout;pw@%";

/// A bound, listening socket nobody reads from: the kernel completes the TCP handshake, the
/// server never answers.
fn silent_listener() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("local address").port();
    (listener, port)
}

fn run_against(connection: &str) -> (String, Duration) {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = connect_job::write_job(dir.path());
    let started = Instant::now();
    let out = Command::cargo_bin("eavpivot")
        .expect("binary")
        .args([
            "run",
            "--dry-run",
            "--connect-timeout",
            "2",
            "--connection",
            connection,
        ])
        .arg(&job)
        .env_remove("EAVPIVOT_PASSWORD")
        .timeout(Duration::from_secs(20))
        .output()
        .expect("run eavpivot");
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (text, elapsed)
}

fn assert_bounded(connection: &str, port: u16) {
    let (text, elapsed) = run_against(connection);
    assert!(elapsed < Duration::from_secs(8), "took {elapsed:?}: {text}");
    assert!(
        elapsed >= Duration::from_millis(1500),
        "gave up early ({elapsed:?}): {text}"
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("eavpivot: error:"))
        .unwrap_or_else(|| panic!("no error line in {text}"));
    assert!(line.contains(&format!("127.0.0.1:{port}")), "{line}");
    assert!(line.contains("within 2 s"), "{line}");
    assert!(line.contains("login"), "{line}");
    assert!(
        !text.contains(PASSWORD) && !text.contains("T1meout"),
        "{text}"
    );
}

#[test]
fn postgres_obeys_the_timeout_during_the_startup_handshake() {
    let (_listener, port) = silent_listener();
    assert_bounded(
        &format!("postgres://postgres:T1meout%3Bpw%40%25@127.0.0.1:{port}/x"),
        port,
    );
}

#[test]
fn mariadb_obeys_the_timeout_during_the_handshake() {
    let (_listener, port) = silent_listener();
    assert_bounded(
        &format!("mysql://root:T1meout%3Bpw%40%25@127.0.0.1:{port}/x"),
        port,
    );
}

#[test]
fn sql_server_obeys_the_timeout_during_prelogin_and_login() {
    let (_listener, port) = silent_listener();
    assert_bounded(
        &format!("Server=tcp:127.0.0.1,{port};Database=x;User Id=sa;Password=\"{PASSWORD}\""),
        port,
    );
}
