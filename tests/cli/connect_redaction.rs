//! No password ever appears in what eavpivot prints: generated connection strings of every
//! form (PostgreSQL URL and libpq string, MySQL/MariaDB URL, `mssql://` URL with the password
//! in the user info or the query, ADO.NET with both quote styles, JDBC), and passwords given
//! by file or environment, with random passwords full of quotes, `;`, `@`, `%`, `{`, spaces,
//! run against servers that refuse, never answer, or cannot be reached. Neither the password,
//! its percent-encoding, nor any 6 characters of it in a row may appear in stdout (the
//! `--json` report included) or stderr.

use crate::connect_job;

use std::net::TcpListener;
use std::time::Duration;

use assert_cmd::Command;
use proptest::prelude::*;

/// Characters that break naive parsers: separators and quotes of every grammar.
const TRICKY: &[char] = &[
    ';', '"', '\'', '@', '%', ':', '/', '?', '#', '=', '{', '}', ' ', '\\', '&', '+', '!', '$',
    '*', ',',
];

fn password() -> impl Strategy<Value = String> {
    let char = prop_oneof![
        3 => proptest::char::range('a', 'z'),
        1 => proptest::char::range('A', 'Z'),
        1 => proptest::char::range('0', '9'),
        3 => proptest::sample::select(TRICKY),
    ];
    proptest::collection::vec(char, 10..20)
        .prop_map(|cs| format!("Zq{}", cs.into_iter().collect::<String>()))
}

fn pct(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Where the server is: refusing (a port just closed), silent (accepts, never answers), or
/// unreachable (TEST-NET-1, never routed).
#[derive(Debug, Clone, Copy)]
enum Server {
    Refusing,
    Silent,
    Unreachable,
}

fn place(server: Server) -> (Option<TcpListener>, String, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    match server {
        Server::Refusing => (None, "127.0.0.1".into(), port),
        Server::Silent => (Some(listener), "127.0.0.1".into(), port),
        Server::Unreachable => (None, "192.0.2.1".into(), 1433),
    }
}

/// The connection text and any environment or file the form puts the password in.
fn form(kind: usize, host: &str, port: u16, pw: &str) -> (String, Vec<(&'static str, String)>) {
    let libpq = pw.replace('\\', "\\\\").replace('\'', "\\'");
    let dq = pw.replace('"', "\"\"");
    let sq = pw.replace('\'', "''");
    let jdbc = pw.replace('}', "x");
    let p = pct(pw);
    match kind {
        0 => (format!("postgres://u:{p}@{host}:{port}/db?sslmode=disable"), vec![]),
        1 => (format!("host={host} port={port} user=u password='{libpq}' dbname=db"), vec![]),
        2 => (format!("mysql://u:{p}@{host}:{port}/db"), vec![]),
        3 => (format!("mariadb://u:{p}@{host}:{port}/db?ssl-mode=REQUIRED"), vec![]),
        4 => (format!("mssql://sa:{p}@{host}:{port}/db?encrypt=not_supported"), vec![]),
        5 => (format!("mssql://sa@{host}:{port}/db?password={p}&encrypt=not_supported"), vec![]),
        6 => (format!("Server=tcp:{host},{port};User Id=sa;Password=\"{dq}\";Database=db;Encrypt=DANGER_PLAINTEXT"), vec![]),
        7 => (format!("Server=tcp:{host},{port};User Id=sa;Password='{sq}';Database=db"), vec![]),
        8 => (format!("jdbc:sqlserver://{host}:{port};databaseName=db;user=sa;password={{{jdbc}}}"), vec![]),
        9 => (format!("postgres://u@{host}:{port}/db"), vec![("PGPASSWORD", pw.into())]),
        10 => (format!("mysql://u@{host}:{port}/db"), vec![("MYSQL_PWD", pw.into())]),
        11 => (format!("mssql://sa@{host}:{port}/db"), vec![("SQLCMDPASSWORD", pw.into())]),
        12 => (format!("postgres://u@{host}:{port}/db"), vec![("EAVPIVOT_PASSWORD", pw.into())]),
        _ => (format!("Server=tcp:{host},{port};User Id=sa;Database=db"), vec![("--password-file", pw.into())]),
    }
}

const FORMS: usize = 14;

fn leaks(output: &str, pw: &str) -> Option<String> {
    if output.contains(pw) || output.contains(&pct(pw)) {
        return Some(pw.to_string());
    }
    let chars: Vec<char> = pw.chars().collect();
    chars
        .windows(6)
        .map(|w| w.iter().collect::<String>())
        .find(|piece| output.contains(piece.as_str()))
}

fn run(kind: usize, server: Server, pw: &str) -> Result<(), TestCaseError> {
    let (_listener, host, port) = place(server);
    let (connection, extra) = form(kind, &host, port, pw);
    let dir = tempfile::tempdir().expect("temp dir");
    let job = connect_job::write_job(dir.path());
    let mut cmd = Command::cargo_bin("eavpivot").expect("binary");
    cmd.args([
        "run",
        "--json",
        "--dry-run",
        "--connect-timeout",
        "1",
        "--connection",
    ])
    .arg(&connection)
    .arg(&job)
    .env_remove("EAVPIVOT_PASSWORD")
    .env("CI", "true")
    .timeout(Duration::from_secs(20));
    for (name, value) in extra {
        if name == "--password-file" {
            let file = dir.path().join("pw");
            std::fs::write(&file, format!("{value}\n")).expect("write password file");
            cmd.arg("--password-file").arg(file);
        } else {
            cmd.env(name, value);
        }
    }
    let out = cmd.output().expect("run eavpivot");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    prop_assert!(
        !out.status.success(),
        "form {kind} {server:?} succeeded?\n{text}"
    );
    prop_assert!(
        text.contains("\"ok\":false"),
        "no --json failure object: {text}"
    );
    if let Some(piece) = leaks(&text, pw) {
        return Err(TestCaseError::fail(format!(
            "form {kind} against {server:?}: '{piece}' of the password shows in\n{text}"
        )));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 56, ..ProptestConfig::default() })]

    #[test]
    fn no_password_in_any_output(
        kind in 0..FORMS,
        server in prop_oneof![
            6 => Just(Server::Refusing),
            1 => Just(Server::Silent),
            1 => Just(Server::Unreachable),
        ],
        pw in password(),
    ) {
        run(kind, server, &pw)?;
    }
}

/// Every form at least once, whatever proptest draws: the forms are the point.
#[test]
fn every_form_against_a_refusing_server() {
    let pw = "Zq\"se;cret;pw'@%7B{x}=y";
    for kind in 0..FORMS {
        run(kind, Server::Refusing, pw).unwrap_or_else(|e| panic!("{e}"));
    }
}
