//! No secret shown (issue 17.10, 17.11): a connection string written under the wrong job-file
//! key is described, never echoed, by `check`, `run`, `inspect` and `script`, with and
//! without `--json`, while the message still names the file and the key; a raw `#` in a URL
//! password is refused in one line that says to percent-encode it, without the secret; and
//! MariaDB takes `?password=` as the README says.

use crate::servers;

use servers::*;

/// Four grammars of connection string, each with its own password.
const SECRETS: [(&str, &str); 4] = [
    ("postgres://u:Zq9urlPw@h/db", "Zq9urlPw"),
    ("host=h dbname=d password=Zq9libpqPw", "Zq9libpqPw"),
    ("Server=h;Database=d;Password=Zq9adoPw;", "Zq9adoPw"),
    (
        "jdbc:sqlserver://h:1433;databaseName=d;password=Zq9jdbcPw",
        "Zq9jdbcPw",
    ),
];

/// A job with `value` (a YAML string) under one key, and that key's path in messages.
fn jobs(value: &str) -> Vec<(&'static str, String)> {
    let v = format!("'{}'", value.replace('\'', "''"));
    let head = "name: g\nentity: [s.id]\nattribute: s.attr\nvalue: s.val\n";
    let source = "source: {table: ks, alias: s}\n";
    let target = "target: {table: t}\n";
    vec![
        ("source", format!("{head}source: {v}\n{target}")),
        ("target", format!("{head}{source}target: {v}\n")),
        (
            "lock_timeout",
            format!("{head}{source}{target}lock_timeout: {v}\n"),
        ),
        (
            "target.if_exists",
            format!("{head}{source}target: {{table: t, if_exists: {v}}}\n"),
        ),
        (
            "target.split",
            format!("{head}{source}target: {{table: t, split: {v}}}\n"),
        ),
        (
            "source.table",
            format!("{head}source: {{table: {v}, alias: s}}\n{target}"),
        ),
    ]
}

/// Every command that reads a job file, with `--json` where it has one.
const CLI: [(&str, bool); 6] = [
    ("check", false),
    ("run", false),
    ("run", true),
    ("inspect", false),
    ("inspect", true),
    ("script", false),
];

/// The real binary: `command file`, `--connection db` where the command connects.
fn cli(command: &str, file: &str, json: bool, db: &str) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_eavpivot"));
    cmd.args([command, file])
        .env_remove("EAVPIVOT_CONNECTION")
        .env_remove("EAVPIVOT_PASSWORD")
        .stdin(std::process::Stdio::null());
    if matches!(command, "run" | "inspect") {
        cmd.args(["--connection", db]);
    }
    if json {
        cmd.arg("--json");
    }
    cmd.output().expect("run eavpivot")
}

#[test]
fn job_file_errors_never_echo_a_password() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = format!("sqlite:{}", dir.path().join("s.db").display());
    let mut cases = 0;
    for (secret, password) in SECRETS {
        for (key, yaml) in jobs(secret) {
            let file = dir.path().join("secret_job.yaml");
            std::fs::write(&file, yaml).expect("write job");
            let file = file.display().to_string();
            for (command, json) in CLI {
                let out = cli(command, &file, json, &db);
                let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
                let what = format!("{command} json={json} {key} {secret}: {all}");
                assert_eq!(out.status.code(), Some(2), "{what}");
                assert!(!all.contains(password), "password shown: {what}");
                assert!(all.contains("secret_job.yaml"), "file not named: {what}");
                assert!(all.contains(&format!("{key}:")), "key not named: {what}");
                if key != "source.table" {
                    assert!(all.contains("line "), "line not named: {what}");
                }
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 4 * 6 * CLI.len());
}

#[test]
fn a_raw_hash_in_a_url_password_is_refused_without_the_secret() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = dir.path().join("j.yaml");
    std::fs::write(
        &job,
        "name: g\nsource: {table: ks, alias: s}\nentity: [s.id]\nattribute: s.attr\nvalue: s.val\ntarget: {table: t}\n",
    )
    .expect("write job");
    let job = job.display().to_string();
    for url in [
        "postgres://u@127.0.0.1:1/db?password=Zq9a#Zq9b",
        "postgres://u:Zq9a#Zq9b@127.0.0.1:1/db",
        "mysql://u@127.0.0.1:1/db?password=Zq9a#Zq9b",
        "mariadb://u:Zq9a#Zq9b@127.0.0.1:1/db",
        "mssql://u@127.0.0.1:1/db?password=Zq9a#Zq9b",
    ] {
        for json in [false, true] {
            let mut args = vec!["run", job.as_str()];
            if json {
                args.push("--json");
            }
            let out = run(&args, url);
            let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
            assert_eq!(out.status.code(), Some(2), "{url}: {all}");
            assert!(!all.contains("Zq9"), "secret shown: {url}: {all}");
            assert!(all.contains("must be percent-encoded"), "{url}: {all}");
            assert!(all.contains("'#'"), "{url}: {all}");
            if !json {
                assert_eq!(stderr(&out).lines().count(), 1, "{url}: {all}");
            }
        }
    }
}

/// README "Where the password comes from": `?password=` works on MariaDB, and `#@%` in a
/// password are percent-encoded, in the query or before the `@`.
#[test]
fn mariadb_takes_a_percent_encoded_password_in_the_query() {
    let db = mariadb();
    let rt = runtime();
    let Some(mut conn) = rt.block_on(db.open()) else {
        return;
    };
    let user = "eavpivot_guard_pw";
    let _ = rt.block_on(conn.execute(&format!("DROP USER IF EXISTS {user}")));
    rt.block_on(conn.execute(&format!("CREATE USER {user}@'%' IDENTIFIED BY 'p#w@x%y'")))
        .expect("create user");
    let parsed = url::Url::parse(&db.url).expect("url");
    let host = parsed.host_str().unwrap_or("127.0.0.1").to_string();
    let port = parsed.port().unwrap_or(3306);
    let dir = tempfile::tempdir().expect("temp dir");
    let job = dir.path().join("j.yaml");
    // A source that does not exist: the login is what is tested, and it comes first.
    std::fs::write(
        &job,
        "name: g\nsource: {table: guard_pw_missing, alias: s}\nentity: [s.id]\nattribute: s.attr\nvalue: s.val\ntarget: {table: t}\n",
    )
    .expect("write job");
    let job = job.display().to_string();
    let mut outcomes = Vec::new();
    for scheme in ["mysql", "mariadb"] {
        for url in [
            format!("{scheme}://{user}@{host}:{port}/?password=p%23w%40x%25y"),
            format!("{scheme}://{user}:p%23w%40x%25y@{host}:{port}/"),
        ] {
            let out = cli("inspect", &job, false, &url);
            outcomes.push((url, out));
        }
    }
    let wrong = format!("mysql://{user}@{host}:{port}/?password=wrong");
    let refused = cli("inspect", &job, false, &wrong);
    let _ = rt.block_on(conn.execute(&format!("DROP USER IF EXISTS {user}")));
    for (url, out) in outcomes {
        let err = stderr(&out);
        assert!(!err.contains("Access denied"), "{url}: {err}");
        assert!(
            !err.contains("p#w") && !err.contains("p%23w"),
            "{url}: {err}"
        );
    }
    assert!(
        stderr(&refused).contains("Access denied"),
        "{}",
        stderr(&refused)
    );
}
