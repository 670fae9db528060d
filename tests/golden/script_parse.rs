//! The PostgreSQL and MariaDB standalone scripts: golden files for the bundled item_detail job,
//! an independent parser (`sqlparser`) over every statement it can read, and the CLI
//! (`--output`, the SQLite refusal, jobs with transforms refused).
//!
//! What is parsed and what is not, exactly:
//! - PostgreSQL: sqlparser has no `DO`, so the block is parsed as the body of
//!   `CREATE FUNCTION … LANGUAGE plpgsql AS $tag$…$tag$` (proving the dollar quoting closes
//!   exactly at the end). Inside the PL/pgSQL body every statement is parsed as SQL once its
//!   PL/pgSQL frame is removed: `SELECT … INTO vars FROM` without `INTO vars`, `x := e` and
//!   `IF e THEN` and `EXECUTE e [INTO x]` as `SELECT e`, `RAISE level 'fmt', args` as
//!   `SELECT 'fmt', args`; the source query held in `src` is parsed on its own. Not parsed:
//!   `DECLARE` lines without a value, `BEGIN`/`END`/`ELSE`/`END IF`/`EXCEPTION WHEN` frames,
//!   and the statements built at run time by `format()` (the live test runs those).
//! - MariaDB: the `SET SESSION` before the block is parsed as is; `DELIMITER` (a client
//!   command), `BEGIN NOT ATOMIC`/`END //`, handler frames, `DECLARE` without a default,
//!   `GET DIAGNOSTICS` and `SIGNAL` are not (sqlparser's MySqlDialect has no compound
//!   statements); every other statement is, with the same INTO/IF/EXECUTE IMMEDIATE
//!   rewrites, `DECLARE … DEFAULT e` as `SELECT e`, and the `src` query on its own.

use std::path::{Path, PathBuf};

use eavpivot::config;
use eavpivot::dialect::script::{self, ScriptOptions};
use eavpivot::dialect::{MariaDb, Postgres};
use sqlparser::dialect::{Dialect as ParserDialect, MySqlDialect, PostgreSqlDialect};
use sqlparser::parser::Parser;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn item_detail() -> config::Job {
    config::load_job(&repo().join("config/item_detail.yaml")).expect("bundled job")
}

fn golden(path: &Path, got: &str) {
    if std::env::var_os("EAVPIVOT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("dir")).expect("golden dir");
        std::fs::write(path, got).expect("bless");
        return;
    }
    let want = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        want == got,
        "golden mismatch: {}\n===== expected (committed) =====\n{want}\n===== got =====\n{got}\n(re-bless with EAVPIVOT_BLESS=1 cargo test --test golden script_parse)",
        path.display()
    );
}

fn parse(dialect: &dyn ParserDialect, what: &str, sql: &str) {
    match Parser::parse_sql(dialect, sql) {
        Ok(statements) => assert_eq!(statements.len(), 1, "{what} split in two: {sql}"),
        Err(e) => panic!("sqlparser rejects {what}: {e}\n----\n{sql}\n----"),
    }
}

/// `'…'` with doubled quotes → its text.
fn unquote(literal: &str) -> String {
    let inner = literal
        .trim()
        .strip_prefix('\'')
        .and_then(|l| l.strip_suffix('\''))
        .unwrap_or_else(|| panic!("not a plain literal: {literal}"));
    inner.replace("''", "'")
}

/// `SELECT a, b INTO x, y FROM …` → `SELECT a, b FROM …`.
fn drop_into(sql: &str) -> String {
    match (sql.find(" INTO "), sql.find("\n    INTO ")) {
        (_, Some(at)) | (Some(at), None) => {
            let from = sql[at..].find("FROM").expect("INTO … FROM") + at;
            format!("{} {}", &sql[..at], &sql[from..])
        }
        (None, None) => sql.to_string(),
    }
}

/// The body's statements, one per entry: lines joined until `;` (or `THEN` after `IF`),
/// with balanced quotes.
fn statements(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut buf = String::new();
    for line in body.lines() {
        if !buf.is_empty() {
            buf.push('\n');
        }
        buf.push_str(line);
        let t = buf.trim();
        let balanced = buf.matches('\'').count().is_multiple_of(2);
        let frame = matches!(
            t,
            "DECLARE" | "BEGIN" | "END" | "ELSE" | "EXCEPTION WHEN OTHERS THEN"
        ) || t.starts_with("DECLARE EXIT HANDLER");
        if balanced && (frame || t.ends_with(';') || (t.starts_with("IF ") && t.ends_with(" THEN")))
        {
            out.push(t.to_string());
            buf.clear();
        }
    }
    assert!(buf.trim().is_empty(), "unterminated statement: {buf}");
    out
}

/// Parse what sqlparser can read of one statement; returns false when the statement is a
/// frame or procedural-only (listed in the module docs).
fn check(dialect: &dyn ParserDialect, stmt: &str) -> bool {
    let body = stmt.trim_end_matches(';');
    let frames = [
        "DECLARE",
        "BEGIN",
        "END",
        "ELSE",
        "END IF",
        "EXCEPTION WHEN OTHERS THEN",
    ];
    if frames.contains(&body) || body.starts_with("DECLARE EXIT HANDLER") {
        return false;
    }
    if body.starts_with("GET DIAGNOSTICS ") || body.starts_with("SIGNAL SQLSTATE '45000'") {
        return false;
    }
    let sql = if let Some(cond) = body.strip_prefix("IF ") {
        format!("SELECT {}", cond.strip_suffix(" THEN").expect("IF … THEN"))
    } else if let Some(rest) = body.strip_prefix("EXECUTE IMMEDIATE ") {
        format!("SELECT {rest}")
    } else if let Some(rest) = body.strip_prefix("PERFORM ") {
        // PL/pgSQL's SELECT that discards its result.
        format!("SELECT {rest}")
    } else if let Some(rest) = body.strip_prefix("EXECUTE ") {
        let expr = rest
            .rsplit_once(") INTO ")
            .map_or(rest.to_string(), |(e, _)| format!("{e})"));
        format!("SELECT {expr}")
    } else if let Some(rest) = body
        .strip_prefix("RAISE EXCEPTION ")
        .or_else(|| body.strip_prefix("RAISE NOTICE "))
    {
        format!("SELECT {rest}")
    } else if let Some(rest) = body.strip_prefix("DECLARE ") {
        match rest.split_once(" DEFAULT ") {
            Some((_, value)) => format!("SELECT {value}"),
            None => return false,
        }
    } else if let Some((_, value)) = body.split_once(" := ") {
        format!("SELECT {value}")
    } else if body.starts_with("SELECT") {
        drop_into(body)
    } else {
        body.to_string()
    };
    parse(dialect, stmt, &sql);
    true
}

#[test]
fn postgres_script_matches_its_golden_file_and_parses() {
    let job = item_detail();
    let text = script::render(
        &Postgres,
        &eavpivot::plan::script_plan(&job),
        ScriptOptions::default(),
    )
    .expect("script");
    golden(
        &repo().join("tests/golden/postgres/script/item_detail.sql"),
        &text,
    );
    let pg = PostgreSqlDialect {};
    let lines: Vec<&str> = text.lines().collect();
    let open = lines
        .iter()
        .position(|l| l.starts_with("DO $"))
        .expect("a DO line");
    assert!(
        lines[..open].iter().all(|l| l.starts_with("-- ")),
        "only comments before DO"
    );
    let tag = lines[open].trim_start_matches("DO ");
    assert_eq!(
        lines.last(),
        Some(&format!("{tag};").as_str()),
        "the block ends the file"
    );
    let body = lines[open + 1..lines.len() - 1].join("\n");
    parse(
        &pg,
        "the DO block as a function body",
        &format!("CREATE FUNCTION eavpivot_check() RETURNS void LANGUAGE plpgsql AS {tag}\n{body}\n{tag}"),
    );
    let mut parsed = 0;
    let mut declaring = false;
    for stmt in statements(&body) {
        if let Some(value) = stmt.strip_prefix("src CONSTANT text := ") {
            let source = unquote(value.trim_end_matches(';'));
            parse(&pg, "the source query in src", &source);
        }
        declaring = (declaring || stmt == "DECLARE") && stmt != "BEGIN";
        // A declaration without a value is a name and a PL/pgSQL type: nothing to parse.
        if declaring && !stmt.contains(" := ") {
            continue;
        }
        parsed += usize::from(check(&pg, &stmt));
    }
    assert!(parsed >= 20, "only {parsed} statements parsed");
    for needle in [
        "format('%I'",
        "%L",
        "octet_length(c) > 63",
        "EXCEPTION WHEN OTHERS",
    ] {
        assert!(text.contains(needle), "missing {needle}");
    }
}

#[test]
fn mariadb_script_matches_its_golden_file_and_parses() {
    let job = item_detail();
    let text = script::render(
        &MariaDb,
        &eavpivot::plan::script_plan(&job),
        ScriptOptions::default(),
    )
    .expect("script");
    golden(
        &repo().join("tests/golden/mariadb/script/item_detail.sql"),
        &text,
    );
    let my = MySqlDialect {};
    let lines: Vec<&str> = text.lines().skip_while(|l| l.starts_with("-- ")).collect();
    // The session as `eavpivot run` sets it up (UTF-8, strict, explicit TIMESTAMP
    // defaults), then the list length.
    assert_eq!(lines[0], "SET NAMES utf8mb4;");
    assert!(lines[1].contains("STRICT_ALL_TABLES"), "{}", lines[1]);
    assert_eq!(
        lines[2],
        "SET SESSION explicit_defaults_for_timestamp = ON;"
    );
    assert_eq!(lines[3], "SET SESSION group_concat_max_len = 1073741824;");
    for line in &lines[..4] {
        parse(&my, "the session setting", line);
    }
    assert_eq!(&lines[4..6], ["DELIMITER //", "BEGIN NOT ATOMIC"]);
    assert_eq!(&lines[lines.len() - 2..], ["END //", "DELIMITER ;"]);
    let body = lines[6..lines.len() - 2].join("\n");
    let mut parsed = 0;
    for stmt in statements(&body) {
        if let Some(value) = stmt.strip_prefix("DECLARE src LONGTEXT DEFAULT ") {
            parse(
                &my,
                "the source query in src",
                &unquote(value.trim_end_matches(';')),
            );
        }
        parsed += usize::from(check(&my, &stmt));
    }
    assert!(parsed >= 25, "only {parsed} statements parsed");
    for needle in [
        "REPLACE(col, '`', '``')",
        "HEX(a)",
        "RENAME TABLE",
        "DROP TABLE IF EXISTS ITEM_WIDE__eavpivot_new",
    ] {
        assert!(text.contains(needle), "missing {needle}");
    }
}

fn eavpivot() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("eavpivot").expect("binary")
}

#[test]
fn sqlite_is_refused_in_one_line_pointing_to_dry_run() {
    let out = eavpivot()
        .args(["script", "config/item_detail.yaml", "--dialect", "sqlite"])
        .current_dir(repo())
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("dynamic SQL") && stderr.contains("eavpivot run --dry-run"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn output_writes_the_file_and_says_where() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("pivot.sql");
    for dialect in ["postgres", "mariadb", "mssql"] {
        let out = eavpivot()
            .args([
                "script",
                "config/item_detail.yaml",
                "--dialect",
                dialect,
                "--output",
            ])
            .arg(&file)
            .current_dir(repo())
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(out.stdout.is_empty(), "nothing on stdout with --output");
        assert!(stderr.contains(&file.display().to_string()), "{stderr}");
        let written = std::fs::read_to_string(&file).expect("file written");
        let d = eavpivot::dialect::by_name(dialect).expect("dialect");
        let want = script::render(
            d,
            &eavpivot::plan::script_plan(&item_detail()),
            ScriptOptions::default(),
        )
        .expect("script");
        assert_eq!(written, want, "{dialect}");
    }
}

#[test]
fn jobs_with_transforms_are_refused_in_every_script() {
    let job = config::load_job(&repo().join("config/sudoku.yaml")).expect("bundled job");
    for d in [&Postgres as &dyn eavpivot::dialect::Dialect, &MariaDb] {
        let err = script::render(
            d,
            &eavpivot::plan::script_plan(&job),
            ScriptOptions::default(),
        )
        .expect_err("transforms refused")
        .to_string();
        assert!(
            err.contains("transforms") && err.contains("eavpivot run"),
            "{err}"
        );
    }
}
