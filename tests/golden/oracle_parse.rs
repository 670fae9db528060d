//! Evidence for Oracle, which has no server here: every statement eavpivot would send for the
//! bundled jobs (the dry-run loop, answered by the scripted backend), and the statements of the
//! paths those jobs do not take (merge, locks, catalog reads, the join Sudoku solver), are
//! checked by an independent parser: sqlglot's `oracle` reader, made strict by
//! tests/golden/oracle_parse.py (which says what it adds to sqlglot and why).
//!
//! sqlglot lives in a virtual environment that `.ci/oracle-parser.sh` installs, at
//! `target/oracle-parser-venv` or where `EAVPIVOT_ORACLE_PARSER_VENV` points. Without it the
//! tests fail under `EAVPIVOT_REQUIRE_SERVERS=1` (CI) and are skipped, saying why, otherwise.

use crate::dry_run;

use std::path::PathBuf;
use std::process::Command;

use dry_run::{bundled_jobs, dry_run_statements, repo};
use eavpivot::config::{self, Job, StrategyName, TableRef};
use eavpivot::dialect::merge::{upsert, MergeColumns};
use eavpivot::dialect::prelude::*;
use eavpivot::dialect::{ddl, query, ColumnKind, Oracle, PivotColumn, Typed};
use eavpivot::transform::sudoku::{join as sudoku_join, sql as sudoku_sql};
use eavpivot::value::Value;

/// The venv's Python with sqlglot, or None (and why) when it is not installed.
fn parser() -> Option<PathBuf> {
    let venv = std::env::var_os("EAVPIVOT_ORACLE_PARSER_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/oracle-parser-venv"));
    let python = venv.join("bin/python");
    let works = Command::new(&python)
        .args(["-c", "import sqlglot"])
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        return Some(python);
    }
    let why = format!(
        "the Oracle parser (sqlglot in {}) is not installed: run .ci/oracle-parser.sh",
        venv.display()
    );
    if std::env::var("EAVPIVOT_REQUIRE_SERVERS").as_deref() == Ok("1") {
        panic!("{why} (required: EAVPIVOT_REQUIRE_SERVERS=1)");
    }
    eprintln!("skipped: {why}");
    None
}

/// sqlglot's verdict on each `(what, sql)`: None when accepted, else why not.
fn verdicts(python: &PathBuf, items: &[(String, String)]) -> Vec<(String, Option<String>)> {
    let input: Vec<serde_json::Value> = items
        .iter()
        .map(|(what, sql)| serde_json::json!({ "what": what, "sql": sql }))
        .collect();
    run_checker(python, &input)
        .into_iter()
        .map(|(what, error, _)| (what, error))
        .collect()
}

/// The checker's answers to `input` (tests/golden/oracle_parse.py): what, error, statements checked.
fn run_checker(
    python: &PathBuf,
    input: &[serde_json::Value],
) -> Vec<(String, Option<String>, u64)> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("statements.json");
    std::fs::write(&path, serde_json::to_string(input).expect("json")).expect("write input");
    let out = Command::new(python)
        .arg(repo().join("tests/golden/oracle_parse.py"))
        .arg(&path)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "tests/golden/oracle_parse.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("the checker answers JSON");
    assert_eq!(answers.len(), input.len(), "one verdict per item");
    answers
        .iter()
        .map(|a| {
            (
                a["what"].as_str().unwrap_or_default().to_string(),
                a["error"].as_str().map(str::to_string),
                a["checked"].as_u64().unwrap_or_default(),
            )
        })
        .collect()
}

/// A solved grid with three cells emptied: what `engine: sql_join` writes one join for.
fn nearly_solved_givens() -> Vec<Vec<Value>> {
    let grid = "534678912672195348198342567859761423426853791713924856961537284287419635345286179";
    grid.chars()
        .enumerate()
        .filter(|(i, _)| ![0, 40, 80].contains(i))
        .map(|(i, ch)| {
            let n = |x: usize| Value::Int(x as i64);
            let digit = ch.to_digit(10).map_or(0, |d| d as usize);
            vec![n(1), n(i / 9 + 1), n(i % 9 + 1), n(digit)]
        })
        .collect()
}

/// Statements of paths the bundled jobs' dry runs do not take.
fn other_paths(job: &Job) -> Vec<(String, String)> {
    let d = &Oracle;
    let source = &eavpivot::plan::source_query(job);
    let target = &job.target.table;
    let staging = target.with_suffix("__eavpivot_0123abcd");
    let replaced = target.with_suffix("__eavpivot_old_0123abcd");
    let cols: Vec<String> = vec!["ITEM_ID".into(), "Color x".into(), "Weight (kg)".into()];
    let mut sql: Vec<(&str, String)> = vec![
        ("rollback", d.rollback()),
        ("conflict sample", d.limit(&query::conflicts(d, source), 10)),
        ("conflicting values", query::conflicting_values(d, source)),
        (
            "cells per attribute",
            query::count_cells_per_attribute(d, source),
        ),
        (
            "fullest entity",
            query::max_cells_per_entity(d, source, &["Size".into()]),
        ),
        (
            "entity of a name",
            query::entity_of_attribute(d, source, b"|Size"),
        ),
        ("ordered rows", query::ordered_rows(d, source)),
        ("discovery scan", query::discovery_scan_values(d, source)),
        ("stream load", d.insert_values(target, &cols, 3)),
        ("table identity", d.table_identity(target)),
        ("view", d.view_exists(target).unwrap_or_default()),
        ("view reads", d.view_reads(target).unwrap_or_default()),
        ("columns", d.table_columns(target)),
        ("column types", d.column_types(target)),
        ("add column", d.add_column(target, "Size", "CLOB")),
        (
            "widen",
            d.alter_column_type(target, "Size", "VARCHAR2(20 CHAR)", None)
                .unwrap_or_default(),
        ),
        (
            "copy",
            d.create_table_like(&staging, target).unwrap_or_default(),
        ),
        ("session id", d.session_id().unwrap_or_default()),
        ("drop", d.drop_table(&staging)),
    ];
    sql.extend(
        d.swap_in(&staging, target, Some(&replaced))
            .into_iter()
            .map(|s| ("swap in", s)),
    );
    sql.extend(d.session_setup().into_iter().map(|s| ("session setup", s)));
    sql.extend(
        d.lock_timeout(std::time::Duration::from_secs(30))
            .into_iter()
            .map(|s| ("lock timeout", s)),
    );
    sql.extend(d.lock_holders(7).into_iter().map(|s| ("lock holders", s)));
    sql.extend(d.server_identity().into_iter().map(|s| ("server", s)));
    let keys = ["ITEM_ID".to_string()];
    let (set, cleared) = (["Size".to_string()], ["Color".to_string()]);
    let merge = MergeColumns {
        keys: &keys,
        set: &set,
        cleared: &cleared,
        spelled: &keys,
        floats: &set,
    };
    sql.extend(
        upsert(d, target, &staging, &merge)
            .into_iter()
            .map(|s| ("merge", s)),
    );
    let mut shape = sudoku_sql::givens_shape(d, &TableRef::parse("SUDOKU_GIVENS").expect("name"));
    sql.push(("givens table", ddl::create_table(d, &shape)));
    sql.push(("last puzzle", sudoku_sql::max_puzzle(d, &shape.table)));
    shape.columns = vec![PivotColumn {
        attribute: "Born".into(),
        column: "Born".into(),
        typed: Some(Typed {
            sql_type: d.column_sql_type(&ColumnKind::Date),
            kind: ColumnKind::Date,
            why: String::new(),
            round_trips: true,
            by_value: false,
        }),
        longest: None,
    }];
    sql.extend(
        query::typed_round_trip(d, std::slice::from_ref(&shape), source, false)
            .map(|s| ("typed round trip", s)),
    );
    sql.into_iter()
        .map(|(what, s)| (format!("{} {what}", job.name), s))
        .collect()
}

#[tokio::test]
async fn every_oracle_statement_parses_with_sqlglot() {
    let Some(python) = parser() else { return };
    let mut items = Vec::new();
    for job in bundled_jobs() {
        for strategy in [StrategyName::Pushdown, StrategyName::Stream] {
            // Transforms run only in the stream; such jobs refuse a forced pushdown by design.
            if strategy == StrategyName::Pushdown && !job.transforms.is_empty() {
                continue;
            }
            let sent = dry_run_statements(&Oracle, &job, strategy).await;
            assert!(
                sent.len() >= 5,
                "{}: too few statements: {sent:?}",
                job.name
            );
            let what = |i: usize| format!("{} {strategy:?} #{i}", job.name);
            items.extend(sent.into_iter().enumerate().map(|(i, s)| (what(i), s)));
        }
        items.extend(other_paths(&job));
        if job.name == "sudoku_sql" {
            let shape = eavpivot::dialect::TableShape {
                table: job.target.table.clone(),
                entity: Vec::new(),
                columns: (1..=9)
                    .map(|c| PivotColumn::text(&c.to_string(), &c.to_string()))
                    .collect(),
                column_type: "INTEGER".into(),
                primary_key: true,
            };
            let source = eavpivot::plan::source_query(&job);
            let joined =
                sudoku_join::solve_into(&Oracle, &source, &shape, 3, &nearly_solved_givens())
                    .expect("join solver renders");
            items.push(("sudoku_sql join solver".into(), joined));
            let givens = sudoku_join::givens_query(&Oracle, &source).expect("givens query");
            items.push(("sudoku_sql givens".into(), givens));
        }
    }
    assert!(items.len() > 100, "too few statements: {}", items.len());
    let rejected: Vec<String> = verdicts(&python, &items)
        .into_iter()
        .zip(&items)
        .filter_map(|((what, error), (_, sql))| {
            error.map(|e| format!("{what}: {e}\n----\n{sql}\n----"))
        })
        .collect();
    assert!(
        rejected.is_empty(),
        "Oracle SQL that sqlglot's oracle reader rejects:\n{}",
        rejected.join("\n")
    );
}

#[test]
fn broken_oracle_sql_is_rejected() {
    let Some(python) = parser() else { return };
    let broken = [
        "CREATE TABLE t (a VARCHAR2(10)",
        "SELECT TOP 1 a FROM t",
        "SELECT a FROM t LIMIT 2",
        "WITH RECURSIVE x (a) AS (SELECT 1 FROM dual) SELECT a FROM x",
        "SELECT a FROM (SELECT 1 AS a FROM dual) AS s",
        "UPDATE t SET a = s.a FROM u t JOIN v s ON t.k = s.k",
        "SELECT MAX(a) % 3 FROM t",
        "SELECT 1",
        "INSERT INTO t (a) VALUES (1), (2",
        "FOO BAR",
    ];
    let items: Vec<(String, String)> = broken
        .iter()
        .map(|s| (s.to_string(), s.to_string()))
        .collect();
    let accepted: Vec<String> = verdicts(&python, &items)
        .into_iter()
        .filter(|(_, error)| error.is_none())
        .map(|(what, _)| what)
        .collect();
    assert!(
        accepted.is_empty(),
        "the Oracle check let broken SQL through: {accepted:?}"
    );
    // And it accepts their Oracle forms, so the refusals above are about what they say.
    let fixed = [
        "CREATE TABLE t (a VARCHAR2(10))",
        "SELECT a FROM t FETCH FIRST 1 ROWS ONLY",
        "WITH x (a) AS (SELECT 1 FROM dual) SELECT a FROM x",
        "SELECT a FROM (SELECT 1 AS a FROM dual) s",
        "SELECT MOD(MAX(a), 3) FROM t",
    ];
    let items: Vec<(String, String)> = fixed
        .iter()
        .map(|s| (s.to_string(), s.to_string()))
        .collect();
    let refused: Vec<String> = verdicts(&python, &items)
        .into_iter()
        .filter_map(|(what, error)| error.map(|e| format!("{what}: {e}")))
        .collect();
    assert!(refused.is_empty(), "valid Oracle SQL refused: {refused:?}");
}

fn eavpivot() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("eavpivot").expect("binary");
    cmd.current_dir(repo())
        .env_remove("EAVPIVOT_CONNECTION")
        .env_remove("EAVPIVOT_TARGET_CONNECTION")
        .env_remove("EAVPIVOT_PASSWORD");
    cmd
}

const ORACLE_URL: &str = "oracle://scott:Tiger_Secret@db.example:1521/ORCLPDB1";

#[test]
fn a_run_against_oracle_is_refused_in_one_line_before_connecting() {
    let out = eavpivot()
        .args(["run", "config/item_detail.yaml", "--connection", ORACLE_URL])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "usage error, not a panic: {stderr}"
    );
    assert!(stderr.contains("no Oracle backend"), "{stderr}");
    assert!(stderr.contains("script JOB --dialect oracle"), "{stderr}");
    assert!(!stderr.contains("Tiger_Secret"), "password shown: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        2,
        "the connecting note and one error line: {stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing on stdout");
}

#[test]
fn a_dry_run_against_oracle_prints_what_it_would_send_and_stops_at_its_first_query() {
    let out = eavpivot()
        .args([
            "run",
            "config/item_detail.yaml",
            "--dry-run",
            "--connection",
            ORACLE_URL,
        ])
        .output()
        .expect("runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("stopped at its first query"), "{stderr}");
    assert!(
        !format!("{stdout}{stderr}").contains("Tiger_Secret"),
        "password shown"
    );
    let job = config::load_job(&repo().join("config/item_detail.yaml")).expect("job");
    let mut want = Oracle.session_setup();
    want.extend(Oracle.lock_timeout(job.lock_timeout));
    // The first query: the value's type (Session::describe_value).
    want.push(Oracle.describe_value(&eavpivot::plan::source_query(&job)));
    for sql in &want {
        assert!(
            stdout.contains(&format!("{sql};\n")),
            "missing {sql}\n---\n{stdout}"
        );
    }
    assert!(
        !stdout.contains("CREATE TABLE"),
        "nothing past its first query: {stdout}"
    );
    // --json: the failure as JSON only, no SQL mixed into it.
    let out = eavpivot()
        .args([
            "run",
            "config/item_detail.yaml",
            "--dry-run",
            "--json",
            "--connection",
            ORACLE_URL,
        ])
        .output()
        .expect("runs");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert!(json.to_string().contains("no Oracle backend"), "{json}");
}

#[test]
fn the_oracle_script_matches_its_golden_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("item_detail.sql");
    let out = eavpivot()
        .args([
            "script",
            "config/item_detail.yaml",
            "--dialect",
            "oracle",
            "--output",
        ])
        .arg(&file)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = std::fs::read_to_string(&file).expect("script written");
    let golden = repo().join("tests/golden/oracle/script/item_detail.sql");
    if std::env::var_os("EAVPIVOT_BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().expect("dir")).expect("golden dir");
        std::fs::write(&golden, &got).expect("bless");
    }
    let want = std::fs::read_to_string(&golden).unwrap_or_default();
    assert_eq!(
        got, want,
        "re-bless with EAVPIVOT_BLESS=1 cargo test --test golden oracle_parse"
    );
    // One PL/SQL block, ended by the SQL*Plus `/` line, after comments and SET commands only.
    let lines: Vec<&str> = got.lines().collect();
    let open = lines.iter().position(|l| *l == "DECLARE").expect("DECLARE");
    assert!(lines[..open]
        .iter()
        .all(|l| l.starts_with("-- ") || l.starts_with("SET ")));
    assert_eq!(&lines[lines.len() - 2..], ["END;", "/"]);
}

/// The `eavpivot script --dialect oracle` block runs its SQL by EXECUTE IMMEDIATE: each such
/// statement, its pieces joined with two attributes standing for what the block discovers, is
/// checked like every other statement, for the job as bundled and for the branches it leaves
/// out (a listed, renamed and prefixed column set; append; refused empty names).
#[test]
fn the_oracle_scripts_dynamic_sql_parses() {
    let Some(python) = parser() else { return };
    let base = config::load_job(&repo().join("config/item_detail.yaml")).expect("job");
    let mut listed = base.clone();
    listed.pivot.columns = config::ColumnSelection::List(vec!["Color".into(), "Size".into()]);
    listed.pivot.rename.insert("Size".into(), "Größe".into());
    listed.pivot.prefix = "attr_".into();
    listed.pivot.empty_names = config::EmptyNames::Error;
    let mut append = base.clone();
    append.target.if_exists = config::IfExists::Append;
    let mut fail = base.clone();
    fail.target.if_exists = config::IfExists::Fail;
    let d = &Oracle;
    let input: Vec<serde_json::Value> = [
        ("bundled", &base),
        ("listed", &listed),
        ("append", &append),
        ("fail", &fail),
    ]
    .iter()
    .map(|(what, job)| {
        let script = eavpivot::dialect::oracle_script::render(&eavpivot::plan::script_plan(job))
            .expect("script renders");
        serde_json::json!({
            "what": what,
            "plsql": script,
            "vars": {
                "src": query::source_rows(d, &eavpivot::plan::source_query(job)),
                "col_defs": "\"Color\" CLOB, \"Size\" CLOB",
                "col_names": ", \"Color\", \"Size\"",
                "cases": format!(
                    ", MAX(CASE WHEN s.a = {} THEN s.v END), MAX(CASE WHEN s.a = {} THEN s.v END)",
                    d.attribute_key_literal("Color"),
                    d.attribute_key_literal("Size")
                ),
            },
        })
    })
    .collect();
    for (what, error, checked) in run_checker(&python, &input) {
        assert!(
            error.is_none(),
            "script ({what}): {}",
            error.unwrap_or_default()
        );
        assert!(
            checked >= 10,
            "script ({what}): only {checked} statements found"
        );
    }
}
