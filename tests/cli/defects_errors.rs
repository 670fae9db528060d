//! Issue 10, defect 10: every failure is ONE line on stderr naming the file:line, table, key or
//! value at fault, in words a job author can act on: what the key accepts, not serde's type
//! names; the OS's text once; the database's complaint without the whole SQL echoed back.
#![cfg(feature = "postgres")] // needs the postgres driver in the build

use std::path::Path;

use assert_cmd::Command;
use rusqlite::Connection;

use crate::postgres;

const JOB: &str = "name: j
source: {table: kv, alias: s}
entity: [s.entity_id]
attribute: s.attr
value: s.val
target: {table: kv_wide}
";

fn eavpivot(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("eavpivot").expect("binary");
    cmd.current_dir(dir).env_remove("EAVPIVOT_CONNECTION");
    cmd
}

/// Run `args` in `dir`, expect `code`, and return stderr after checking it is one line.
fn one_line_failure(dir: &Path, args: &[&str], code: i32) -> String {
    let out = eavpivot(dir).args(args).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
    assert!(
        !stderr
            .lines()
            .any(|l| l.starts_with(|c: char| c.is_whitespace()) || l.is_empty()),
        "{args:?}: a continuation line in {stderr}"
    );
    errors[0].to_string()
}

/// `check` a job file whose text is [`JOB`] with `edit` applied, expecting a config error.
fn check_error(from: &str, to: &str) -> String {
    let dir = tempfile::tempdir().expect("tmp");
    assert!(JOB.contains(from) || from.is_empty());
    let text = if from.is_empty() {
        format!("{JOB}{to}\n")
    } else {
        JOB.replace(from, to)
    };
    std::fs::write(dir.path().join("x.yaml"), text).expect("write");
    one_line_failure(dir.path(), &["check", "x.yaml"], 2)
}

#[test]
fn yaml_type_errors_say_what_the_key_accepts() {
    let cases = [
        (
            "target: {table: kv_wide}",
            "target: {table: kv_wide, split: [1]}",
            "line 6",
            "target.split: expected off, auto or a number of columns",
        ),
        (
            "target: {table: kv_wide}",
            "target: {table: kv_wide, split: sometimes}",
            "",
            "target.split: expected off, auto or a number of columns, got 'sometimes'",
        ),
        (
            "entity: [s.entity_id]",
            "entity: 5",
            "line 3",
            "entity: expected a column, { expr: SQL, name: column } or a list of them",
        ),
        (
            "entity: [s.entity_id]",
            "entity: [[1]]",
            "line 3",
            "entity[0]: expected a column or { expr: SQL, name: column }",
        ),
        (
            "",
            "pivot: {columns: {a: 1}}",
            "line 7",
            "pivot.columns: expected discover or a list of attribute names",
        ),
        (
            "",
            "pivot: {aggregate: [1]}",
            "line 7",
            "pivot.aggregate: expected max, min or error",
        ),
        (
            "",
            "pivot: {aggregate: avg}",
            "line 7",
            "pivot.aggregate: expected max, min or error, got 'avg'",
        ),
        (
            "",
            "pivot: {order: [x]}",
            "line 7",
            "pivot.order: expected natural, alphabetical or frequency",
        ),
        (
            "",
            "pivot: {empty_names: 3}",
            "line 7",
            "pivot.empty_names: expected skip or error",
        ),
        (
            "",
            "pivot: {on_collision: {}}",
            "line 7",
            "pivot.on_collision: expected rename or error",
        ),
        (
            "target: {table: kv_wide}",
            "target: {table: kv_wide, if_exists: [1]}",
            "line 6",
            "target.if_exists: expected fail, replace, append or merge",
        ),
        (
            "target: {table: kv_wide}",
            "target: {table: kv_wide, on_missing: [1]}",
            "line 6",
            "target.on_missing: expected keep or delete",
        ),
        (
            "",
            "pivot: {on_new_attributes: drop}",
            "line 7",
            "pivot.on_new_attributes: expected add, error or ignore, got 'drop'",
        ),
        (
            "",
            "strategy: [1]",
            "line 7",
            "strategy: expected auto, pushdown or stream",
        ),
        (
            "source: {table: kv, alias: s}",
            "source: {table: kv, alias: s, joins: [{table: t, on: x, kind: [1]}]}",
            "line 2",
            "source.joins[0].kind: expected inner or left",
        ),
    ];
    for (from, to, line, message) in cases {
        let err = check_error(from, to);
        assert!(err.contains(message), "{to}: {err}");
        assert!(err.contains(line), "{to}: no {line}: {err}");
        for leak in [
            "untagged",
            "OneOrMany",
            "SplitFile",
            "ColumnsFile",
            "EntityFile",
            "YAML tag",
            "Keyword(",
        ] {
            assert!(!err.contains(leak), "{to}: {err}");
        }
    }
}

#[test]
fn a_directory_as_the_job_file_says_the_os_text_once() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::create_dir(dir.path().join("jobdir")).expect("mkdir");
    for cmd in ["run", "check"] {
        let err = one_line_failure(dir.path(), &[cmd, "jobdir"], 2);
        assert!(err.contains("jobdir"), "{err}");
        assert_eq!(err.matches("Is a directory").count(), 1, "{err}");
    }
}

#[test]
fn a_target_that_is_a_view_is_one_line_without_the_sql() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    let conn = Connection::open(&db).expect("db");
    conn.execute_batch(
        "CREATE TABLE kv(entity_id INT, attr TEXT, val TEXT);
         INSERT INTO kv VALUES (1, 'a', 'x'), (2, 'b', 'y');
         CREATE VIEW kv_wide AS SELECT 1 AS entity_id;",
    )
    .expect("setup");
    std::fs::write(dir.path().join("job.yaml"), JOB).expect("job");
    let connection = format!("sqlite:{}", db.display());
    for strategy in ["pushdown", "stream"] {
        let err = one_line_failure(
            dir.path(),
            &[
                "run",
                "job.yaml",
                "--connection",
                &connection,
                "--strategy",
                strategy,
            ],
            1,
        );
        assert!(err.contains("kv_wide"), "{err}");
        assert!(!err.contains("CREATE TABLE"), "SQL echoed: {err}");
        assert!(err.len() < 400, "{err}");
    }
}

/// Another session creates the target between eavpivot's existence check and its CREATE: the
/// catalog's unique violation (`pg_type_typname_nsp_index`) becomes one plain line.
#[test]
fn postgres_concurrent_create_is_one_plain_line() {
    let Some(pg) = postgres::connect() else {
        return;
    };
    let id = std::process::id();
    let (kv, wide) = (format!("kv_race_{id}"), format!("kv_race_wide_{id}"));
    pg.batch(&format!(
        "DROP TABLE IF EXISTS {kv}; DROP TABLE IF EXISTS {wide};
         CREATE TABLE {kv}(entity_id int, attr text, val text);
         INSERT INTO {kv} VALUES (1, 'a', 'x');"
    ));
    // Separately: a multi-statement string is one transaction, so kv would stay uncommitted.
    pg.batch(&format!("BEGIN; CREATE TABLE {wide}(x int)"));
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(
        dir.path().join("job.yaml"),
        JOB.replace("table: kv,", &format!("table: {kv},"))
            .replace("kv_wide", &wide),
    )
    .expect("job");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("eavpivot"))
        .current_dir(dir.path())
        .env_remove("EAVPIVOT_CONNECTION")
        .args(["run", "job.yaml", "--connection", &pg.url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Its CREATE now waits on ours; committing ours makes it fail.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    pg.batch("COMMIT");
    let out = child.wait_with_output().expect("wait");
    pg.batch(&format!("DROP TABLE {kv}; DROP TABLE IF EXISTS {wide}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains(&format!(
            "another run or session created table {wide} at the same time"
        )),
        "{stderr}"
    );
    assert!(!errors[0].contains("duplicate key"), "{stderr}");
}
