//! End to end through the real binary on SQLite: the ITEM_DETAIL result cell by cell, dry runs
//! that write nothing, every documented error with its exit code and message, and failures in
//! the middle of a load that leave no target and an untouched source.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use rusqlite::Connection;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A database file holding the ITEM_DETAIL sample data.
fn sample_db(dir: &Path) -> PathBuf {
    let path = dir.join("source.db");
    let conn = Connection::open(&path).expect("create db");
    let script =
        std::fs::read_to_string(repo().join("sql/sqlite/item_detail.sql")).expect("sample sql");
    conn.execute_batch(&script).expect("load sample");
    path
}

/// The bundled job with `edits` applied as (from, to) text replacements.
fn job_file(dir: &Path, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = std::fs::read_to_string(repo().join("config/item_detail.yaml")).expect("job");
    for (from, to) in edits {
        assert!(text.contains(from), "job text has no '{from}'");
        text = text.replace(from, to);
    }
    let path = dir.join("job.yaml");
    std::fs::write(&path, text).expect("write job");
    path
}

fn eavpivot(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("eavpivot").expect("binary built");
    cmd.current_dir(dir).env_remove("EAVPIVOT_CONNECTION");
    cmd
}

fn run(dir: &Path, job: &Path, db: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    let conn = format!("sqlite:{}", db.display());
    let mut args = vec![
        "run",
        job.to_str().expect("utf-8 path"),
        "--connection",
        &conn,
    ];
    args.extend_from_slice(extra);
    eavpivot(dir).args(args).assert()
}

/// Every table with its full contents, for "nothing changed" checks.
fn snapshot(db: &Path) -> Vec<(String, Vec<Vec<String>>)> {
    let conn = Connection::open(db).expect("open");
    let mut names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("names");
    names.sort();
    names
        .into_iter()
        .map(|t| {
            let rows = table_rows(&conn, &format!("SELECT * FROM \"{t}\" ORDER BY 1"));
            (t, rows)
        })
        .collect()
}

fn table_rows(conn: &Connection, sql: &str) -> Vec<Vec<String>> {
    let mut stmt = conn.prepare(sql).expect("prepare");
    let width = stmt.column_count();
    stmt.query_map([], |row| {
        Ok((0..width)
            .map(|i| match row.get_ref(i).expect("cell") {
                rusqlite::types::ValueRef::Null => "NULL".to_string(),
                rusqlite::types::ValueRef::Integer(n) => n.to_string(),
                rusqlite::types::ValueRef::Real(f) => f.to_string(),
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                rusqlite::types::ValueRef::Blob(b) => format!("{b:?}"),
            })
            .collect())
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

#[test]
fn item_detail_result_cell_by_cell() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = sample_db(dir.path());
    let job = job_file(dir.path(), &[]);
    for strategy in ["pushdown", "stream"] {
        run(dir.path(), &job, &db, &["--strategy", strategy])
            .success()
            .stderr(predicate::str::contains("wrote 5 rows, 16 non-null cells"));
        let conn = Connection::open(&db).expect("open");
        let header: Vec<String> = conn
            .prepare("SELECT * FROM ITEM_WIDE")
            .expect("prepare")
            .column_names()
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            header,
            [
                "ITEM_ID",
                "Color",
                "Material",
                "Size",
                "Voltage",
                "Warranty 2 years",
                "Warranty 10 years",
                "Weight (kg)"
            ]
        );
        let rows = table_rows(&conn, "SELECT * FROM ITEM_WIDE ORDER BY ITEM_ID");
        let expected = [
            ["1001", "Red", "Cotton", "M", "NULL", "NULL", "NULL", "1.25"],
            [
                "1002", "Blue", "NULL", "NULL", "NULL", "yes", "NULL", "0.40",
            ],
            [
                "1003", "NULL", "Steel", "NULL", "230", "NULL", "yes", "12.5",
            ],
            ["1004", "Black", "Oak", "L", "NULL", "NULL", "NULL", "NULL"],
            [
                "1005",
                "unlisted: Green",
                "NULL",
                "NULL",
                "12",
                "NULL",
                "NULL",
                "NULL",
            ],
        ];
        assert_eq!(rows, expected, "strategy {strategy}");
    }
}

#[test]
fn embedded_default_loads_sample_data_and_shows_rows() {
    let dir = tempfile::tempdir().expect("tmp");
    eavpivot(dir.path())
        .args([
            "run",
            repo()
                .join("config/item_detail.yaml")
                .to_str()
                .expect("path"),
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("embedded default"))
        .stderr(predicate::str::contains("loaded sample data"))
        .stdout(predicate::str::contains("1005    | unlisted: Green"));
    assert!(dir.path().join("eavpivot.db").exists());
}

#[test]
fn dry_run_writes_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = sample_db(dir.path());
    let job = job_file(dir.path(), &[]);
    let before = snapshot(&db);
    run(dir.path(), &job, &db, &["--dry-run"])
        .success()
        .stdout(predicate::str::contains("CREATE TABLE ITEM_WIDE"))
        .stdout(predicate::str::contains(
            "MAX(CASE WHEN s.a = 'Color' THEN s.v END)",
        ));
    assert_eq!(snapshot(&db), before);
}

#[test]
fn json_report_has_the_contract_fields() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = sample_db(dir.path());
    let job = job_file(dir.path(), &[]);
    let out = run(dir.path(), &job, &db, &["--json"])
        .success()
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value =
        serde_json::from_slice(&out).expect("stdout is one JSON object");
    for key in [
        "dry_run",
        "dialect",
        "target",
        "columns",
        "rows_written",
        "conflicts",
        "statements",
    ] {
        assert!(report.get(key).is_some(), "--json lacks '{key}'");
    }
    assert_eq!(report["rows_written"], 5);
    assert_eq!(report["dialect"], "sqlite");
    assert_eq!(report["columns"][0]["attribute"], "Color");
    assert_eq!(report["columns"][0]["column"], "Color");
}

#[test]
fn check_validates_without_touching_anything() {
    let dir = tempfile::tempdir().expect("tmp");
    eavpivot(dir.path())
        .args([
            "check",
            repo()
                .join("config/item_detail.yaml")
                .to_str()
                .expect("path"),
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("ok"));
    assert!(!dir.path().join("eavpivot.db").exists());
}

/// (edits to the job, exit code, text the one-line error must contain)
fn assert_job_error(edits: &[(&str, &str)], code: i32, message: &str) {
    let dir = tempfile::tempdir().expect("tmp");
    let db = sample_db(dir.path());
    let job = job_file(dir.path(), edits);
    let before = snapshot(&db);
    let assert = run(dir.path(), &job, &db, &[])
        .code(code)
        .stderr(predicate::str::contains(message));
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    let error_lines = stderr
        .lines()
        .filter(|l| l.starts_with("eavpivot: error"))
        .count();
    assert_eq!(error_lines, 1, "exactly one error line expected:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(snapshot(&db), before, "a failed job must change nothing");
}

#[test]
fn bad_yaml_names_file_line_and_column() {
    assert_job_error(&[("alias: ID\n", "alias: [ID\n")], 2, "job.yaml line ");
}

#[test]
fn unknown_key_is_named_with_its_line() {
    assert_job_error(
        &[("  table: ITEM_WIDE", "  tabel: ITEM_WIDE")],
        2,
        "unknown key `tabel`",
    );
    assert_job_error(
        &[("  table: ITEM_WIDE", "  tabel: ITEM_WIDE")],
        2,
        "line 29",
    );
}

#[test]
fn missing_required_key_is_named() {
    assert_job_error(
        &[("value: COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE)\n", "")],
        2,
        "missing required key `value`",
    );
}

#[test]
fn unknown_table_and_column_are_named() {
    assert_job_error(
        &[("  table: ITEM_DETAIL", "  table: ITEM_DETAILS")],
        1,
        "no such table: ITEM_DETAILS",
    );
    assert_job_error(
        &[("attribute: AE.ELEMENT_DESC", "attribute: AE.ELEMENT_NAME")],
        1,
        "AE.ELEMENT_NAME",
    );
}

#[test]
fn existing_target_with_if_exists_fail() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = sample_db(dir.path());
    Connection::open(&db)
        .expect("open")
        .execute_batch("CREATE TABLE ITEM_WIDE (x INTEGER); INSERT INTO ITEM_WIDE VALUES (42);")
        .expect("pre-create");
    let job = job_file(dir.path(), &[("if_exists: replace", "if_exists: fail")]);
    let before = snapshot(&db);
    run(dir.path(), &job, &db, &[])
        .code(1)
        .stderr(predicate::str::contains(
            "target table ITEM_WIDE already exists",
        ));
    assert_eq!(snapshot(&db), before);
}

#[test]
fn zero_attributes_is_an_error() {
    assert_job_error(
        &[("  where: null", "  where: \"1 = 0\"")],
        1,
        "no attributes to pivot",
    );
}

#[test]
fn aggregate_error_lists_conflicting_pairs() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = sample_db(dir.path());
    // A second Color for item 1001 through a duplicate element with the same description.
    Connection::open(&db)
        .expect("open")
        .execute_batch(
            "INSERT INTO ATTRIBUTE_ELEMENT VALUES (8, 'Color');
             INSERT INTO ITEM_DETAIL VALUES (1001, 8, NULL, 'Crimson');",
        )
        .expect("add conflict");
    let job = job_file(dir.path(), &[("aggregate: max", "aggregate: error")]);
    let before = snapshot(&db);
    for strategy in ["pushdown", "stream"] {
        run(dir.path(), &job, &db, &["--strategy", strategy])
            .code(1)
            .stderr(predicate::str::contains(
                "1 entity/attribute pairs have conflicting values",
            ))
            .stderr(predicate::str::contains("(1001) 'Color'"));
        assert_eq!(snapshot(&db), before, "strategy {strategy}");
    }
    // Under max the conflict is counted, the larger value kept.
    let max_job = job_file(dir.path(), &[]);
    run(dir.path(), &max_job, &db, &[])
        .success()
        .stderr(predicate::str::contains("conflicts: 1"));
}

#[test]
fn failure_mid_load_leaves_no_target_and_an_unchanged_source() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = sample_db(dir.path());
    // The second table of a split target cannot be created (a view has its name), after the
    // first table was already created and filled inside the transaction.
    Connection::open(&db)
        .expect("open")
        .execute_batch("CREATE VIEW ITEM_WIDE_2 AS SELECT 1 AS x;")
        .expect("view");
    let job = job_file(
        dir.path(),
        &[("  if_exists: replace", "  if_exists: fail\n  split: 3")],
    );
    let before = snapshot(&db);
    run(dir.path(), &job, &db, &[])
        .code(1)
        .stderr(predicate::str::contains("rolled back: nothing was written"));
    assert_eq!(snapshot(&db), before);
}

#[test]
fn failure_mid_stream_rolls_back_a_replace_and_keeps_the_old_target() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = sample_db(dir.path());
    let job = job_file(dir.path(), &[]);
    run(dir.path(), &job, &db, &[]).success();
    let before = snapshot(&db);
    let strict = job_file(
        dir.path(),
        &[(
            "transforms: []",
            "transforms:\n  - map: { values: { Red: RED }, default: error }",
        )],
    );
    run(dir.path(), &strict, &db, &[])
        .code(1)
        .stderr(predicate::str::contains("has no entry in map.values"))
        .stderr(predicate::str::contains("rolled back"));
    assert_eq!(
        snapshot(&db),
        before,
        "the old ITEM_WIDE must survive a failed replace"
    );
}

#[test]
fn unknown_connection_scheme_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tmp");
    eavpivot(dir.path())
        .args([
            "run",
            repo()
                .join("config/item_detail.yaml")
                .to_str()
                .expect("path"),
            "--connection",
            "db2://u:hunter2@h/x",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not understood"))
        .stderr(predicate::str::contains("hunter2").not());
}

#[test]
fn json_failure_is_an_object_too() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = sample_db(dir.path());
    let job = job_file(
        dir.path(),
        &[("  table: ITEM_DETAIL", "  table: ITEM_DETAILS")],
    );
    let out = run(dir.path(), &job, &db, &["--json"])
        .code(1)
        .get_output()
        .stdout
        .clone();
    let object: serde_json::Value =
        serde_json::from_slice(&out).expect("stdout is one JSON object");
    assert_eq!(object["ok"], false);
    assert_eq!(object["exit_code"], 1);
    assert!(
        object["error"]
            .as_str()
            .is_some_and(|e| e.contains("ITEM_DETAILS")),
        "{object}"
    );
    let ok = run(dir.path(), &job_file(dir.path(), &[]), &db, &["--json"])
        .success()
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&ok).expect("report");
    assert_eq!(report["ok"], true);
}

/// `${min}` in `where`: check, inspect and script take `--var` as run does (issue 21.8), and
/// refuse an undefined variable or a malformed `--var` with the same line and exit code.
#[test]
fn var_jobs_check_inspect_and_script_like_run() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = sample_db(dir.path());
    let job = job_file(
        dir.path(),
        &[("where: null", "where: \"ID.ITEM_ID > ${min}\"")],
    );
    let job = job.to_str().expect("utf-8 path");
    let conn = format!("sqlite:{}", db.display());
    let with = |cmd: &[&str], extra: &[&str]| {
        let mut args: Vec<&str> = cmd.to_vec();
        args.push(job);
        args.extend_from_slice(extra);
        eavpivot(dir.path()).args(args).assert()
    };
    let before = snapshot(&db);
    for cmd in [
        &["check"][..],
        &["inspect", "--connection", &conn],
        &["script", "--dialect", "postgres"],
        &["run", "--dry-run", "--connection", &conn],
    ] {
        with(cmd, &[])
            .code(2)
            .stderr(
                predicate::str::contains("${min}").and(predicate::str::contains(
                    "variable ${min} is not defined: pass --var min=VALUE",
                )),
            );
        with(cmd, &["--var", "min"])
            .code(2)
            .stderr(predicate::str::contains("--var min: expected NAME=VALUE"));
    }
    with(&["check"], &["--var", "min=1002"])
        .success()
        .stderr(predicate::str::contains(": ok (job item_detail"));
    let out = with(
        &["inspect", "--json", "--connection", &conn],
        &["--var", "min=1002"],
    )
    .success()
    .get_output()
    .stdout
    .clone();
    let report: serde_json::Value = serde_json::from_slice(&out).expect("inspect json");
    assert_eq!(report["entities"], 3, "{report}");
    let out = with(&["script", "--dialect", "postgres"], &["--var", "min=1002"])
        .success()
        .get_output()
        .stdout
        .clone();
    let script = String::from_utf8(out).expect("utf-8 script");
    assert!(script.contains("ID.ITEM_ID > 1002"), "{script}");
    assert!(!script.contains("${min}"), "{script}");
    assert_eq!(snapshot(&db), before, "the source database changed");
    assert!(!dir.path().join("eavpivot.db").exists());
}

/// `inspect` reads the database the job's `source.connection` names, as `run` does, and
/// `--connection` wins over it (issue 21.8: it fell back to the embedded SQLite file).
#[test]
fn inspect_reads_the_jobs_source_connection() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = sample_db(dir.path());
    let other = dir.path().join("other.db");
    let conn = Connection::open(&other).expect("other db");
    conn.execute_batch(
        "CREATE TABLE ITEM_DETAIL (ITEM_ID INT, ELEMENT_ID INT, LIST_ID INT, DETAIL_VALUE TEXT);
         CREATE TABLE ATTRIBUTE_ELEMENT (ELEMENT_ID INT, ELEMENT_DESC TEXT);
         CREATE TABLE ELEMENT_LIST (ELEMENT_ID INT, LIST_ID INT, LIST_DESC TEXT);
         INSERT INTO ITEM_DETAIL VALUES (7, 1, NULL, 'x');
         INSERT INTO ATTRIBUTE_ELEMENT VALUES (1, 'Only');",
    )
    .expect("other data");
    drop(conn);
    let job = job_file(
        dir.path(),
        &[(
            "  where: null",
            &format!("  where: null\n  connection: \"sqlite:{}\"", db.display()),
        )],
    );
    let job = job.to_str().expect("utf-8 path");
    let inspect = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["inspect", job, "--json"];
        args.extend_from_slice(extra);
        let out = eavpivot(dir.path()).args(args).assert().success();
        serde_json::from_slice(&out.get_output().stdout).expect("inspect json")
    };
    let from_job = inspect(&[]);
    assert_eq!(from_job["entities"], 5, "{from_job}");
    assert_eq!(
        from_job["connection"],
        format!("sqlite:{}", db.display()),
        "{from_job}"
    );
    let other_conn = format!("sqlite:{}", other.display());
    let from_flag = inspect(&["--connection", &other_conn]);
    assert_eq!(from_flag["entities"], 1, "{from_flag}");
    assert!(!dir.path().join("eavpivot.db").exists());
}

/// `examples init` keeps the files that exist (the operator's edits), writes the missing
/// ones and names what it kept; `--force` overwrites (issue 19.11: it refused everything).
#[test]
fn examples_init_keeps_existing_files_and_writes_the_rest() {
    let dir = tempfile::tempdir().expect("tmp");
    let init = |extra: &[&str]| {
        let mut args = vec!["examples", "init", "ex"];
        args.extend_from_slice(extra);
        let out = eavpivot(dir.path()).args(args).assert().success();
        String::from_utf8_lossy(&out.get_output().stderr).into_owned()
    };
    let err = init(&[]);
    assert!(err.contains("wrote 16 files into ex"), "{err}");
    let edited = dir.path().join("ex/config/item_detail.yaml");
    let missing = dir.path().join("ex/sql/postgres/sudoku.sql");
    std::fs::write(&edited, "# my edits\n").expect("edit");
    std::fs::remove_file(&missing).expect("remove");
    let err = init(&[]);
    assert!(
        err.contains("kept 15 existing files (--force overwrites them): ")
            && err.contains("ex/config/item_detail.yaml")
            && err.contains("wrote 1 files into ex"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&edited).expect("edited"),
        "# my edits\n"
    );
    assert!(missing.is_file());
    let err = init(&["--force"]);
    assert!(
        err.contains("wrote 16 files into ex") && !err.contains("kept"),
        "{err}"
    );
    let bundled = std::fs::read_to_string(repo().join("config/item_detail.yaml")).expect("job");
    assert_eq!(std::fs::read_to_string(&edited).expect("edited"), bundled);
}

/// `inspect --json` carries the report's version fields, and on failure prints the same
/// object `run --json` does, with the exit code (issue 19.12: it printed nothing).
#[test]
fn inspect_json_is_versioned_and_an_object_on_failure() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = sample_db(dir.path());
    let conn = format!("sqlite:{}", db.display());
    let inspect = |job: &Path, code: i32| -> serde_json::Value {
        let out = eavpivot(dir.path())
            .args(["inspect", job.to_str().expect("path"), "--json"])
            .args(["--connection", &conn])
            .assert()
            .code(code);
        serde_json::from_slice(&out.get_output().stdout).expect("stdout is one JSON object")
    };
    let ok = inspect(&job_file(dir.path(), &[]), 0);
    assert_eq!(ok["ok"], true, "{ok}");
    assert_eq!(ok["schema_version"], 1, "{ok}");
    assert_eq!(ok["eavpivot_version"], env!("CARGO_PKG_VERSION"), "{ok}");
    assert_eq!(ok["entities"], 5, "{ok}");
    let missing = job_file(
        dir.path(),
        &[("  table: ITEM_DETAIL", "  table: ITEM_DETAILS")],
    );
    let failed = inspect(&missing, 1);
    assert_eq!(failed["ok"], false, "{failed}");
    assert_eq!(failed["schema_version"], 1, "{failed}");
    assert_eq!(failed["exit_code"], 1, "{failed}");
    assert!(
        failed["error"]
            .as_str()
            .is_some_and(|e| e.contains("ITEM_DETAILS")),
        "{failed}"
    );
    let undefined = job_file(dir.path(), &[("where: null", "where: \"x > ${since}\"")]);
    let refused = inspect(&undefined, 2);
    assert_eq!(refused["exit_code"], 2, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .is_some_and(|e| e.contains("--var since=VALUE")),
        "{refused}"
    );
}
