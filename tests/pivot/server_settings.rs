//! A server's legacy settings change no name or value eavpivot writes. PostgreSQL with
//! `standard_conforming_strings = off` (a database or role set so by an old application) reads
//! a backslash in `'…'` as an escape: the pushdown's `CASE WHEN attr = 'back\slash'` matched
//! nothing, so the run failed its verification. Through the real binary, both strategies, a
//! replace and then a merge; cells read back as the source holds them.
//!
//! And SQL Server's own rules where Babelfish differs (SQL Server's documentation is the
//! contract): its conversions to text, a login's NOCOUNT, column names equal under the
//! database's collation, a target in another database.

use crate::servers;

use eavpivot::backend::Backend;
use eavpivot::dialect::{MsSql, Quoting};
use servers::*;

#[test]
fn postgres_standard_conforming_strings_off_changes_no_name_or_value() {
    runtime().block_on(async {
        let setup = ["DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET standard_conforming_strings = off', current_database()); END $$"];
        let Some((_scratch, db)) = ScratchDatabase::create("scsoff", &setup).await else {
            return;
        };
        let mut conn = db.open().await.expect("the scratch database");
        let c = conn.as_mut();
        // A new session, as eavpivot's are: the setting is in force (the test is not vacuous).
        let setting = text_rows(c, "SHOW standard_conforming_strings").await;
        assert_eq!(setting, [["off"]]);
        let dir = tempfile::tempdir().expect("temp dir");
        let replace = kv_job(dir.path(), "kv", "kv_wide", "replace");
        let merge = kv_job(dir.path(), "kv", "kv_wide", "merge");
        let read = "SELECT id::text, \"back\\slash\", \"it's\" FROM kv_wide ORDER BY id";
        for strategy in ["pushdown", "stream"] {
            // E'' literals: the same under either setting.
            execute_all(
                c,
                &[
                    "DROP TABLE IF EXISTS kv, kv_wide".into(),
                    "CREATE TABLE kv (id INT, attr TEXT, val TEXT)".into(),
                    "INSERT INTO kv VALUES (1, E'back\\\\slash', E'x\\\\y'), (1, E'it''s', E'a\\\\''b'), (2, E'it''s', 'p')".into(),
                ],
            )
            .await;
            let out = run_strategy(&replace, strategy, &db.url);
            assert!(out.status.success(), "{strategy} replace: {}", stderr(&out));
            let want = [["1", "x\\y", "a\\'b"], ["2", "", "p"]];
            assert_eq!(text_rows(c, read).await, want, "{strategy} replace");
            execute_all(c, &["INSERT INTO kv VALUES (2, E'back\\\\slash', E'\\\\\\\\')".into()]).await;
            let out = run_strategy(&merge, strategy, &db.url);
            assert!(out.status.success(), "{strategy} merge: {}", stderr(&out));
            let want = [["1", "x\\y", "a\\'b"], ["2", "\\\\", "p"]];
            assert_eq!(text_rows(c, read).await, want, "{strategy} merge");
        }
    });
}

/// A SQL Server source `(id INT, attr NVARCHAR(20), val <value_type>)` holding `rows` (a
/// `VALUES` list), made anew.
async fn mssql_source(c: &mut dyn Backend, source: &str, value_type: &str, rows: &str) {
    drop_if_exists(c, source).await;
    execute_all(
        c,
        &[
            format!("CREATE TABLE {source} (id INT, attr NVARCHAR(20), val {value_type})"),
            format!("INSERT INTO {source} VALUES {rows}"),
        ],
    )
    .await;
}

/// SQL Server converts a FLOAT, MONEY or DATETIME to text with its default style — 6
/// significant digits, 2 decimals, no seconds (CAST and CONVERT's documentation) — and a
/// VARBINARY by reading its bytes as UTF-16, and the pushdown writes a text column's values
/// through that conversion. Babelfish converts the first three exactly (and a VARBINARY to the
/// bytes' integer), so the choice is held here by type: `auto` streams such values (their exact text,
/// said in the report), and an asked-for pushdown is refused before any write. (A MONEY is
/// read as a DECIMAL(19,4), which converts exactly: value_types.rs.)
#[test]
fn mssql_float_and_datetime_values_keep_their_digits_in_text_columns() {
    let Some(db) = mssql() else {
        return;
    };
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let p = format!("digits{}", std::process::id());
        let dir = tempfile::tempdir().expect("temp dir");
        // (type, two literals, the texts they must arrive as). DATETIME literals in the
        // `T` form, which SQL Server reads the same under any DATEFORMAT.
        let cases = [
            (
                "FLOAT",
                ["3.14159265358979", "1234567.891"],
                ["3.14159265358979", "1234567.891"],
            ),
            (
                "DATETIME",
                ["'2020-03-01T10:11:12.007'", "'2020-01-13T00:00:00.997'"],
                ["2020-03-01 10:11:12.007", "2020-01-13 00:00:00.997"],
            ),
            // Read as UTF-16 by SQL Server (0x4142 as N'䉁'), as the bytes' integer by
            // Babelfish: the stream writes the bytes as text.
            ("VARBINARY(10)", ["0x616263", "0x4142"], ["abc", "AB"]),
        ];
        for (i, (declared, [a, b], [text_a, text_b])) in cases.into_iter().enumerate() {
            let (source, target) = (format!("{p}_{i}_kv"), format!("{p}_{i}_w"));
            drop_if_exists(c, &target).await;
            let rows = format!("(1, N'a', {a}), (1, N'b', {b}), (2, N'a', {b})");
            mssql_source(c, &source, declared, &rows).await;
            let job = kv_job(dir.path(), &source, &target, "replace");
            let out = run(&["run", &job.display().to_string(), "--json"], &db.url);
            assert!(out.status.success(), "{declared} auto: {}", stderr(&out));
            let report: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("the --json report");
            assert_eq!(report["strategy"], "stream", "{declared}: {report}");
            let reason = report["strategy_reason"].as_str().unwrap_or_default();
            assert!(
                reason.contains("exact text") && reason.to_uppercase().contains(declared),
                "{declared}: {reason}"
            );
            let read = format!(
                "SELECT CAST(id AS NVARCHAR(10)), a, COALESCE(b, N'') FROM {target} ORDER BY id"
            );
            let want = [["1", text_a, text_b], ["2", text_b, ""]];
            assert_eq!(text_rows(c, &read).await, want, "{declared} auto");
            let out = run_strategy(&job, "pushdown", &db.url);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{declared} pushdown: {err}");
            assert!(
                err.contains("strategy: pushdown would write"),
                "{declared} pushdown: {err}"
            );
            assert_eq!(
                text_rows(c, &read).await,
                want,
                "{declared}: the target as it was"
            );
            drop_if_exists(c, &target).await;
            drop_if_exists(c, &source).await;
        }
    });
}

/// A login whose sessions start with NOCOUNT on (SQL Server: the server's `user options`, a
/// DBA's setting) gets no row counts, and the stream checks every load by its count: each run
/// failed after the whole load. Babelfish keeps the setting per role
/// (`babelfishpg_tsql.nocount`, set through its PostgreSQL port); a real SQL Server has it
/// only server-wide, which a test must not change, so there this is skipped, saying so.
#[test]
fn mssql_a_login_whose_sessions_start_with_nocount_still_loads() {
    let Some(db) = mssql() else {
        return;
    };
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let version = text_rows(c, "SELECT @@VERSION").await;
        if !version[0][0].starts_with("Babelfish") {
            eprintln!("skipped: NOCOUNT per login is Babelfish's; this SQL Server sets it server-wide only");
            return;
        }
        let login = format!("nocount{}", std::process::id());
        let password = "Nocount_Passw0rd1";
        let _ = c.execute(&format!("DROP LOGIN {login}")).await;
        execute_all(
            c,
            &[
                format!("CREATE LOGIN {login} WITH PASSWORD = '{password}'"),
                format!("ALTER SERVER ROLE sysadmin ADD MEMBER {login}"),
            ],
        )
        .await;
        // Babelfish's own PostgreSQL, as ../shared/babelfish/start.sh runs it.
        let run_dir = std::env::var("BBF_RUNDIR").unwrap_or_else(|_| {
            let tmp = std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".into());
            format!("{tmp}/eavpivot-babelfish/run")
        });
        let port = std::env::var("BBF_PGPORT").unwrap_or_else(|_| "5433".into());
        let set = format!("ALTER ROLE {login} SET babelfishpg_tsql.nocount = on");
        let psql = std::process::Command::new("runuser")
            .args(["-u", "bbf", "--", "/opt/babelfish/bin/psql", "-X", "-q"])
            .args(["-h", &run_dir, "-p", &port, "-U", "bbf", "-d", "babelfish_db", "-c", &set])
            .output()
            .expect("runuser");
        assert!(
            psql.status.success(),
            "{set}: {}",
            String::from_utf8_lossy(&psql.stderr)
        );
        let mut url = url::Url::parse(&db.url).expect("EAVPIVOT_MSSQL_URL");
        url.set_username(&login).expect("a user in the URL");
        url.set_password(Some(password)).expect("a password in the URL");
        let url = url.to_string();
        let mut as_login = Db {
            what: "mssql",
            url: url.clone(),
            list_staging: db.list_staging,
            _dir: None,
        }
        .open()
        .await
        .expect("the test login connects");
        // The setting is in force in a new session (the test is not vacuous).
        let options = text_rows(as_login.as_mut(), "SELECT CAST(@@OPTIONS & 512 AS INT)").await;
        assert_eq!(options, [["512"]]);
        let (source, target) = (format!("{login}_kv"), format!("{login}_w"));
        drop_if_exists(c, &target).await;
        let rows = "(1, N'a', N'x'), (1, N'b', N'y'), (2, N'a', N'z')";
        mssql_source(c, &source, "NVARCHAR(20)", rows).await;
        let dir = tempfile::tempdir().expect("temp dir");
        let job = kv_job(dir.path(), &source, &target, "replace");
        let read = format!("SELECT CAST(id AS NVARCHAR(10)), a, COALESCE(b, N'') FROM {target} ORDER BY id");
        for strategy in ["stream", "pushdown"] {
            let out = run_strategy(&job, strategy, &url);
            assert!(out.status.success(), "{strategy}: {}", stderr(&out));
            assert_eq!(
                text_rows(c, &read).await,
                [["1", "x", "y"], ["2", "z", ""]],
                "{strategy}"
            );
        }
        drop(as_login);
        drop_if_exists(c, &target).await;
        drop_if_exists(c, &source).await;
        let _ = c.execute(&format!("DROP LOGIN {login}")).await;
    });
}

/// SQL Server compares column names by the database's collation: under the common ones `Ａ`
/// (full-width) is `A`, a decomposed `é` the composed one, `ﬁ` is `fi` and (Windows
/// collations) `ß` is `ss` — which lower-casing cannot tell, so CREATE TABLE refused the
/// pair. The run asks the database which of its names are one identifier: each attribute
/// keeps its own column and its cells, on whatever collation the server has.
#[test]
fn mssql_names_one_identifier_under_the_collation_get_their_own_columns() {
    let Some(db) = mssql() else {
        return;
    };
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let p = format!("collnames{}", std::process::id());
        let (source, target) = (format!("{p}_kv"), format!("{p}_w"));
        let names = ["ß", "ss", "Ａ", "A", "e\u{301}", "é", "ﬁ", "fi"];
        let rows: Vec<String> = names
            .iter()
            .enumerate()
            .flat_map(|(i, n)| {
                let n = n.replace('\'', "''");
                [
                    format!("(1, N'{n}', N'v{i}')"),
                    format!("(2, N'{n}', N'w{i}')"),
                ]
            })
            .collect();
        drop_if_exists(c, &target).await;
        mssql_source(c, &source, "NVARCHAR(20)", &rows.join(", ")).await;
        let dir = tempfile::tempdir().expect("temp dir");
        let job = kv_job(dir.path(), &source, &target, "replace");
        for strategy in ["pushdown", "stream"] {
            let out = run(
                &[
                    "run",
                    &job.display().to_string(),
                    "--json",
                    "--strategy",
                    strategy,
                ],
                &db.url,
            );
            assert!(out.status.success(), "{strategy}: {}", stderr(&out));
            let report: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("the --json report");
            let asked = report["statements"].as_array().is_some_and(|s| {
                s.iter().any(|s| {
                    s.as_str()
                        .is_some_and(|s| s.contains("COLLATE DATABASE_DEFAULT"))
                })
            });
            assert!(asked, "{strategy}: the database was not asked: {report}");
            let columns = report["columns"].as_array().expect("columns");
            assert_eq!(columns.len(), names.len(), "{strategy}: {report}");
            for (i, name) in names.iter().enumerate() {
                let column = columns
                    .iter()
                    .find(|col| col["attribute"] == *name)
                    .and_then(|col| col["column"].as_str())
                    .unwrap_or_else(|| panic!("{strategy}: no column for {name:?}: {report}"));
                let read = format!(
                    "SELECT {} FROM {target} ORDER BY id",
                    MsSql.quote_ident(column)
                );
                let want = [[format!("v{i}")], [format!("w{i}")]];
                assert_eq!(text_rows(c, &read).await, want, "{strategy}: {name:?}");
            }
        }
        for t in [&target, &source] {
            drop_if_exists(c, t).await;
        }
    });
}

/// A target named with a database part (`otherdb.dbo.t`): SQL Server's `sp_rename` and
/// `sys.columns` work in the connected database only, so the swap failed after the whole load
/// (and Babelfish refused the write with "permission denied for schema"). Refused first, naming
/// the database and how to connect to it; nothing is created.
#[test]
fn mssql_a_target_in_another_database_is_refused_before_any_write() {
    let Some(db) = mssql() else {
        return;
    };
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let source = format!("otherdb{}_kv", std::process::id());
        mssql_source(c, &source, "NVARCHAR(20)", "(1, N'a', N'x')").await;
        let dir = tempfile::tempdir().expect("temp dir");
        let job = kv_job(dir.path(), &source, "elsewhere.dbo.w", "replace");
        for strategy in ["pushdown", "stream"] {
            let out = run_strategy(&job, strategy, &db.url);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{strategy}: {err}");
            assert!(
                err.contains("names the database elsewhere")
                    && err.contains("connect to elsewhere"),
                "{strategy}: {err}"
            );
        }
        drop_if_exists(c, &source).await;
    });
}

/// A PostgreSQL database set as a legacy one may be — `extra_float_digits = 0` (the default
/// before PostgreSQL 12: 15 digits), `DateStyle = 'SQL, DMY'`, `IntervalStyle = iso_8601`,
/// `bytea_output = escape` — printed float8 values with 15 digits and dates as `02/01/2020`:
/// the stream wrote `0.3` for 0.30000000000000004 and failed on a date key. Every connection
/// now sets the output formats back; the user's own date order is kept (a `where:` literal
/// `'01/02/2020'` is still the 1st of February under DMY).
#[test]
fn postgres_legacy_output_formats_change_no_value() {
    runtime().block_on(async {
        let setup = [
            "DO $$ BEGIN \
             EXECUTE format('ALTER DATABASE %I SET extra_float_digits = 0', current_database()); \
             EXECUTE format('ALTER DATABASE %I SET DateStyle = ''SQL, DMY''', current_database()); \
             EXECUTE format('ALTER DATABASE %I SET IntervalStyle = iso_8601', current_database()); \
             EXECUTE format('ALTER DATABASE %I SET bytea_output = escape', current_database()); \
             END $$",
        ];
        let Some((_scratch, db)) = ScratchDatabase::create("legacyfmt", &setup).await else {
            return;
        };
        let mut conn = db.open().await.expect("the scratch database");
        let c = conn.as_mut();
        // The database still says so (eavpivot's own sessions set the formats back).
        let said = text_rows(
            c,
            "SELECT setconfig::text FROM pg_db_role_setting WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())",
        )
        .await;
        assert!(said[0][0].contains("extra_float_digits=0"), "{said:?}");
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("legacy.yaml");
        let job = |if_exists: &str| {
            format!(
                "name: legacy\nsource: {{table: kv, alias: s, where: \"s.d <> '01/02/2020'\"}}\nentity: [s.d]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: kv_wide, if_exists: {if_exists}}}\n"
            )
        };
        let read = "SELECT d::text, a::text, COALESCE(b::text, '') FROM kv_wide ORDER BY d";
        for strategy in ["pushdown", "stream"] {
            execute_all(
                c,
                &[
                    "DROP TABLE IF EXISTS kv, kv_wide".into(),
                    "CREATE TABLE kv (d DATE, attr TEXT, val FLOAT8)".into(),
                    // 2020-02-01 is left out by the job's where (DMY), as the user meant it.
                    "INSERT INTO kv VALUES ('2020-01-02', 'a', 0.1::float8 + 0.2), ('2020-01-02', 'b', 1.0000000000000002), ('2020-01-13', 'a', 123456.78901234567), ('2020-02-01', 'a', 1)".into(),
                ],
            )
            .await;
            std::fs::write(&path, job("replace")).expect("job");
            let out = run_strategy(&path, strategy, &db.url);
            assert!(out.status.success(), "{strategy} replace: {}", stderr(&out));
            let want = [
                ["2020-01-02", "0.30000000000000004", "1.0000000000000002"],
                ["2020-01-13", "123456.78901234567", ""],
            ];
            assert_eq!(text_rows(c, read).await, want, "{strategy} replace");
            let update = "UPDATE kv SET val = 2.0000000000000004 WHERE attr = 'b'";
            execute_all(c, &[update.into()]).await;
            std::fs::write(&path, job("merge")).expect("job");
            let out = run_strategy(&path, strategy, &db.url);
            assert!(out.status.success(), "{strategy} merge: {}", stderr(&out));
            let want = [
                ["2020-01-02", "0.30000000000000004", "2.0000000000000004"],
                ["2020-01-13", "123456.78901234567", ""],
            ];
            assert_eq!(text_rows(c, read).await, want, "{strategy} merge");
        }
    });
}
