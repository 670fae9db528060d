//! The source is only ever read (issue 17.1, 17.2): a `--target-connection` that reaches the
//! source's own database under another spelling (the identical URL, `localhost` for
//! `127.0.0.1`, `/x/../x.db`, a symlink, a hard link, `db.t` from another default database)
//! is refused like a run on one connection, exit 2, one line, the source unchanged; a view
//! over the source (a view over a view too) as the source with the source as the target is
//! refused the same way. A genuinely different database on the same server still works.

use crate::servers;

use eavpivot::backend::Backend;
use servers::*;

async fn fill(db: &mut dyn Backend, table: &str) {
    drop_if_exists(db, table).await;
    db.execute(&format!(
        "CREATE TABLE {table} (id INT, attr VARCHAR(20), val VARCHAR(20))"
    ))
    .await
    .expect("create source");
    db.execute(&format!(
        "INSERT INTO {table} VALUES (1, 'a', 'x'), (1, 'b', 'y'), (2, 'a', 'z')"
    ))
    .await
    .expect("fill source");
}

fn job(dir: &std::path::Path, source: &str, target: &str) -> String {
    let path = dir.join(format!("{source}-{target}.yaml"));
    std::fs::write(
        &path,
        format!(
            "name: guard\nsource: {{table: {source}, alias: s}}\nentity: [s.id]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {target}, if_exists: replace}}\n"
        ),
    )
    .expect("write job");
    path.display().to_string()
}

fn run_to(job: &str, url: &str, target_url: Option<&str>) -> std::process::Output {
    let mut args = vec!["run", job, "-q"];
    if let Some(t) = target_url {
        args.extend(["--target-connection", t]);
    }
    let mut cmd = eavpivot(&args, url);
    if !url.starts_with("mssql:") {
        // The SQL Server password (set for the test below) is not these servers' password.
        cmd.env_remove("EAVPIVOT_PASSWORD");
    }
    cmd.output().expect("run eavpivot")
}

/// Exit 2, one line naming the table, and the source as it was.
fn assert_refused(out: &std::process::Output, what: &str, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: one line: {err}");
    assert!(err.contains(needle), "{what}: {err}");
    assert!(err.contains("nothing was written"), "{what}: {err}");
}

#[test]
fn sqlite_one_file_under_every_spelling_is_refused() {
    let db = sqlite();
    let rt = runtime();
    let Some(mut conn) = rt.block_on(db.open()) else {
        return;
    };
    rt.block_on(fill(conn.as_mut(), "ks"));
    let before = rt.block_on(fingerprint(conn.as_mut(), "ks"));
    let dir = db._dir.as_ref().expect("temp dir").path();
    let file = dir.join("faults.db");
    let sub = dir.join("sub");
    std::fs::create_dir(&sub).expect("subdir");
    let link = dir.join("link.db");
    let hard = dir.join("hard.db");
    std::os::unix::fs::symlink(&file, &link).expect("symlink");
    std::fs::hard_link(&file, &hard).expect("hard link");
    let j = job(dir, "ks", "ks");
    let spellings = [
        db.url.clone(),
        format!("sqlite:{}/../faults.db", sub.display()),
        format!("sqlite:{}", link.display()),
        format!("sqlite:{}", hard.display()),
    ];
    for target in &spellings {
        let out = run_to(&j, &db.url, Some(target));
        assert_refused(&out, target, "is the source table ks");
        assert!(stderr(&out).contains("target.connection reaches the source's own database"));
        assert_eq!(
            rt.block_on(fingerprint(conn.as_mut(), "ks")),
            before,
            "{target}"
        );
    }
    // Another file is another database: the same job writes there.
    let other = format!("sqlite:{}", dir.join("other.db").display());
    let out = run_to(&j, &db.url, Some(&other));
    assert!(out.status.success(), "other file: {}", stderr(&out));
    assert_eq!(rt.block_on(fingerprint(conn.as_mut(), "ks")), before);
}

/// SQLite keeps no view dependencies: the view's text says which tables it reads. A view over
/// a view over the source, as the source, with the source as the target: refused, on one
/// connection and through a symlink; a table the views do not read is written.
#[test]
fn sqlite_view_over_the_source_is_refused() {
    let db = sqlite();
    let rt = runtime();
    let Some(mut conn) = rt.block_on(db.open()) else {
        return;
    };
    rt.block_on(fill(conn.as_mut(), "ks"));
    rt.block_on(fill(conn.as_mut(), "ks2"));
    rt.block_on(conn.execute("CREATE VIEW ks_v AS SELECT * FROM ks"))
        .expect("view");
    rt.block_on(conn.execute("CREATE VIEW \"ks vv\" AS SELECT * FROM \"ks_v\" WHERE 1 = 1"))
        .expect("view over the view");
    let before = rt.block_on(fingerprint(conn.as_mut(), "ks"));
    let dir = db._dir.as_ref().expect("temp dir").path();
    let link = dir.join("link.db");
    std::os::unix::fs::symlink(dir.join("faults.db"), &link).expect("symlink");
    let j = job(dir, "'\"ks vv\"'", "ks");
    for target in [None, Some(format!("sqlite:{}", link.display()))] {
        let out = run_to(&j, &db.url, target.as_deref());
        let what = format!("{target:?}");
        assert_refused(&out, &what, "that the source view \"ks vv\" reads");
        assert_eq!(rt.block_on(fingerprint(conn.as_mut(), "ks")), before);
    }
    let out = run_to(&job(dir, "'\"ks vv\"'", "ks2"), &db.url, None);
    assert!(out.status.success(), "ks2 is not read: {}", stderr(&out));
}

/// The URL of `url` with its host replaced.
fn with_host(url: &str, host: &str) -> String {
    let mut parsed = url::Url::parse(url).expect("server URL");
    parsed.set_host(Some(host)).expect("host");
    parsed.to_string()
}

fn with_database(url: &str, database: &str) -> String {
    let mut parsed = url::Url::parse(url).expect("server URL");
    parsed.set_path(&format!("/{database}"));
    parsed.to_string()
}

/// The server's other host name: `localhost` for `127.0.0.1` and the other way round.
fn other_host(url: &str) -> String {
    let parsed = url::Url::parse(url).expect("server URL");
    match parsed.host_str() {
        Some("localhost") => with_host(url, "127.0.0.1"),
        _ => with_host(url, "localhost"),
    }
}

struct Views {
    drop: &'static [&'static str],
}

/// Run `body`, then `cleanup` whether or not `body` panicked (a failing test must not leave
/// its tables on the shared servers), then the panic, if any.
fn cleaning_up<S: ?Sized, T>(
    state: &mut S,
    body: impl FnOnce(&mut S) -> T,
    cleanup: impl FnOnce(&mut S),
) -> T {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&mut *state)));
    cleanup(state);
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The same database through two spellings, a view over a view over the source, and a second
/// database on the same server (`other`, on the same server as `db`).
fn server_case(db: Db, tag: &str, other: &str, views: Views) {
    let rt = runtime();
    let Some(mut conn) = rt.block_on(db.open()) else {
        return;
    };
    let ks = format!("guard_{tag}_{}", std::process::id());
    let (v, vv) = (format!("{ks}_v"), format!("{ks}_vv"));
    let other_url = with_database(&db.url, other);
    let drop_all = |conn: &mut dyn Backend| {
        for sql in views.drop {
            let _ = rt.block_on(conn.execute(&sql.replace("{v}", &vv)));
            let _ = rt.block_on(conn.execute(&sql.replace("{v}", &v)));
        }
        rt.block_on(drop_if_exists(conn, &ks));
        if let Some(mut o) = rt.block_on(connect_or_skip(db.what, &other_url)) {
            rt.block_on(drop_if_exists(o.as_mut(), &ks));
        }
    };
    drop_all(conn.as_mut());
    rt.block_on(fill(conn.as_mut(), &ks));
    rt.block_on(conn.execute(&format!("CREATE VIEW {v} AS SELECT * FROM {ks}")))
        .expect("view");
    rt.block_on(conn.execute(&format!("CREATE VIEW {vv} AS SELECT * FROM {v}")))
        .expect("view over the view");
    let before = rt.block_on(fingerprint(conn.as_mut(), &ks));
    let dir = tempfile::tempdir().expect("temp dir");
    let j = job(dir.path(), &ks, &ks);
    let jv = job(dir.path(), &vv, &ks);
    cleaning_up(
        conn.as_mut(),
        |conn_ref| {
            for target in [db.url.clone(), other_host(&db.url)] {
                let out = run_to(&j, &db.url, Some(&target));
                assert_refused(&out, &target, &format!("is the source table {ks}"));
                let out = run_to(&jv, &db.url, Some(&target));
                assert_refused(&out, &target, &format!("that the source view {vv} reads"));
                let now = rt.block_on(fingerprint(conn_ref, &ks));
                assert_eq!(now, before, "{target}");
            }
            let out = run_to(&jv, &db.url, None);
            let needle = format!("the source view {vv}");
            assert_refused(&out, "view, one connection", &needle);
            assert_eq!(rt.block_on(fingerprint(conn_ref, &ks)), before);

            // A second database on the same server is another database: the run writes there.
            let out = run_to(&j, &db.url, Some(&other_url));
            assert!(out.status.success(), "{other}: {}", stderr(&out));
            assert_eq!(rt.block_on(fingerprint(conn_ref, &ks)), before);
            let mut o = rt
                .block_on(connect_or_skip(db.what, &other_url))
                .expect("other database");
            assert_eq!(
                rt.block_on(fingerprint(o.as_mut(), &ks)).0,
                2,
                "pivot in {other}"
            );
        },
        |conn| drop_all(conn),
    );
}

#[test]
fn postgres_one_database_under_two_spellings_is_refused() {
    let db = postgres();
    let rt = runtime();
    let Some(mut conn) = rt.block_on(db.open()) else {
        return;
    };
    let other = "eavpivot_guard_other";
    let _ = rt.block_on(conn.execute(&format!("CREATE DATABASE {other}")));
    let views = Views {
        drop: &["DROP VIEW IF EXISTS {v}"],
    };
    cleaning_up(
        conn.as_mut(),
        |_| server_case(db, "pg", other, views),
        |conn| {
            let sql = format!("DROP DATABASE IF EXISTS {other}");
            rt.block_on(conn.execute(&sql))
                .expect("drop the second database");
        },
    );
}

#[test]
fn mariadb_one_database_under_two_spellings_is_refused() {
    let db = mariadb();
    let rt = runtime();
    let Some(mut conn) = rt.block_on(db.open()) else {
        return;
    };
    let other = "eavpivot_guard_other";
    rt.block_on(conn.execute(&format!("CREATE DATABASE IF NOT EXISTS {other}")))
        .expect("second database");
    let url = db.url.clone();
    let ks = format!("guard_myq_{}", std::process::id());
    cleaning_up(
        conn.as_mut(),
        |conn_ref| {
            let views = Views {
                drop: &["DROP VIEW IF EXISTS {v}"],
            };
            server_case(db, "my", other, views);
            // `test.t` written from another default database names the source.
            rt.block_on(fill(conn_ref, &ks));
            let before = rt.block_on(fingerprint(conn_ref, &ks));
            let dir = tempfile::tempdir().expect("temp dir");
            let parsed = url::Url::parse(&url).expect("url");
            let database = parsed.path().trim_matches('/');
            let j = job(dir.path(), &ks, &format!("{database}.{ks}"));
            let elsewhere = with_database(&other_host(&url), other);
            let out = run_to(&j, &url, Some(&elsewhere));
            let needle = format!("is the source table {ks}");
            assert_refused(&out, "db.t from another database", &needle);
            assert_eq!(rt.block_on(fingerprint(conn_ref, &ks)), before);
        },
        |conn| {
            rt.block_on(drop_if_exists(conn, &ks));
            let sql = format!("DROP DATABASE IF EXISTS {other}");
            rt.block_on(conn.execute(&sql))
                .expect("drop the second database");
        },
    );
}

/// SQL Server (Babelfish here) when `EAVPIVOT_MSSQL_URL` names one: the same database under
/// two host names, and a view over a view over the source.
#[test]
fn mssql_one_database_under_two_spellings_is_refused() {
    let Some(url) = mssql_url() else {
        return;
    };
    let Some((rt, mut conn)) = server("mssql", &url) else {
        return;
    };
    let ks = format!("guard_ms_{}", std::process::id());
    let (v, vv) = (format!("{ks}_v"), format!("{ks}_vv"));
    rt.block_on(fill(conn.as_mut(), &ks));
    rt.block_on(conn.execute(&format!("CREATE VIEW {v} AS SELECT * FROM {ks}")))
        .expect("view");
    rt.block_on(conn.execute(&format!("CREATE VIEW {vv} AS SELECT * FROM {v}")))
        .expect("view over the view");
    let before = rt.block_on(fingerprint(conn.as_mut(), &ks));
    let dir = tempfile::tempdir().expect("temp dir");
    let j = job(dir.path(), &ks, &ks);
    let jv = job(dir.path(), &vv, &ks);
    let mut outcomes = Vec::new();
    for target in [url.clone(), other_host(&url)] {
        outcomes.push((target.clone(), run_to(&j, &url, Some(&target)), false));
        outcomes.push((target.clone(), run_to(&jv, &url, Some(&target)), true));
    }
    outcomes.push((String::new(), run_to(&jv, &url, None), true));
    let after = rt.block_on(fingerprint(conn.as_mut(), &ks));
    for view in [&vv, &v] {
        let _ = rt.block_on(conn.execute(&format!("DROP VIEW {view}")));
    }
    rt.block_on(drop_if_exists(conn.as_mut(), &ks));
    for (target, out, through_view) in outcomes {
        match through_view {
            // Babelfish's sys.sql_expression_dependencies is empty: the swap's DROP fails on
            // the dependent view and rolls back (SQL Server proper refuses with exit 2).
            true => assert!(
                out.status.code() == Some(2) || stderr(&out).contains("rolled back"),
                "{target}: {}",
                stderr(&out)
            ),
            false => assert_refused(&out, &target, &format!("is the source table {ks}")),
        }
    }
    assert_eq!(after, before);
}
