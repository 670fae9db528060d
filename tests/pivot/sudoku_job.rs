//! The bundled grid jobs end to end through the real binary: the Sudoku sample puzzles solved
//! into the wide grid (cell by cell) with every verdict in the status table, the dry run,
//! `on_unsolved: error` rolling back, the in-database CTE (`engine: sql`) agreeing with the
//! Rust solver, `sudoku --import`, and the Sudoku and Minesweeper jobs on PostgreSQL and
//! MariaDB. Servers come from `EAVPIVOT_PG_URL` / `EAVPIVOT_MARIADB_URL` (default: the local
//! ones); an unreachable server is skipped with the reason printed, unless
//! `EAVPIVOT_REQUIRE_SERVERS=1`, which makes it a failure.

use std::path::{Path, PathBuf};

use crate::servers;
use assert_cmd::Command;

use eavpivot::backend::Backend;
use predicates::prelude::*;
use rusqlite::Connection;
use servers::server;

/// Sample puzzle 2 (the SQLite documentation's), solved.
const DOCS_SOLUTION: &str =
    "534678912672195348198342567859761423426853791713924856961537284287419635345286179";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn eavpivot(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("eavpivot").expect("binary built");
    cmd.current_dir(dir).env_remove("EAVPIVOT_CONNECTION");
    cmd
}

/// Bundled job `name` copied into `dir` with `(from, to)` edits applied everywhere, sample
/// data included (so table renames reach the setup script too).
fn job_copy(dir: &Path, name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let apply = |mut text: String| {
        for (from, to) in edits {
            text = text.replace(from, to);
        }
        text
    };
    let mut job =
        apply(std::fs::read_to_string(repo().join(format!("config/{name}.yaml"))).expect("job"));
    let setup_line = job
        .lines()
        .find(|l| l.starts_with("setup: "))
        .expect("bundled jobs have sample data")
        .to_string();
    let setup = setup_line.trim_start_matches("setup: ").to_string();
    for dialect in ["sqlite", "postgres", "mariadb", "mssql"] {
        let sql = std::fs::read_to_string(repo().join(setup.replace("{dialect}", dialect)))
            .expect("sample sql");
        let copy = dir.join(format!("{name}.{dialect}.sql"));
        std::fs::write(&copy, apply(sql)).expect("write sample copy");
    }
    let copied = dir.join(format!("{name}.{{dialect}}.sql"));
    job = job.replace(&setup_line, &format!("setup: {}", copied.display()));
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, job).expect("write job");
    path
}

/// An empty SQLite file (`--load-sample` fills it with the job's sample data).
fn empty_db(dir: &Path) -> PathBuf {
    let path = dir.join("grid.db");
    std::fs::write(&path, b"").expect("create db file");
    path
}

fn run(dir: &Path, job: &Path, db: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    let conn = format!("sqlite:{}", db.display());
    let mut args = vec!["run", job.to_str().expect("utf-8"), "--connection", &conn];
    args.push("--load-sample");
    args.extend_from_slice(extra);
    eavpivot(dir).args(args).assert()
}

fn rows(db: &Path, sql: &str) -> Vec<Vec<String>> {
    let conn = Connection::open(db).expect("open");
    let mut stmt = conn.prepare(sql).expect("prepare");
    let width = stmt.column_count();
    stmt.query_map([], |row| {
        Ok((0..width)
            .map(|i| match row.get_ref(i).expect("cell") {
                rusqlite::types::ValueRef::Null => "NULL".to_string(),
                rusqlite::types::ValueRef::Integer(n) => n.to_string(),
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                other => format!("{other:?}"),
            })
            .collect())
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

#[test]
fn sample_puzzles_are_solved_into_the_grid() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = empty_db(dir.path());
    let job = job_copy(dir.path(), "sudoku", &[]);
    let out = run(dir.path(), &job, &db, &["--json"])
        .success()
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out).expect("json report");
    assert_eq!(report["rows_written"], 27);
    let summary = &report["transforms"][0];
    for (key, n) in [
        ("puzzles", 6),
        ("solved", 3),
        ("no_solution", 1),
        ("multiple_solutions", 1),
        ("invalid", 1),
    ] {
        assert_eq!(summary[key], n, "{key}: {summary}");
    }

    let conn = Connection::open(&db).expect("open");
    let header: Vec<String> = conn
        .prepare("SELECT * FROM SUDOKU_GRID")
        .expect("prepare")
        .column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        header,
        ["puzzle", "row", "1", "2", "3", "4", "5", "6", "7", "8", "9"]
    );
    let solved = rows(&db, "SELECT DISTINCT puzzle FROM SUDOKU_GRID ORDER BY 1");
    assert_eq!(solved, [["1"], ["2"], ["3"]]);
    let grid = rows(
        &db,
        "SELECT * FROM SUDOKU_GRID WHERE puzzle = 2 ORDER BY row",
    );
    for (r, row) in grid.iter().enumerate() {
        assert_eq!(row[1], (r + 1).to_string());
        let line: String = row[2..].concat();
        assert_eq!(line, DOCS_SOLUTION[r * 9..(r + 1) * 9], "row {}", r + 1);
    }

    let status = rows(
        &db,
        "SELECT puzzle, status, solutions, givens, COALESCE(detail, '') FROM SUDOKU_GRID_status ORDER BY CAST(puzzle AS INTEGER)",
    );
    let want = [
        ["1", "solved", "1", "26", ""],
        ["2", "solved", "1", "30", ""],
        ["3", "solved", "1", "23", ""],
        ["4", "no_solution", "0", "33", ""],
        ["5", "multiple_solutions", "2", "35", ""],
        [
            "6",
            "invalid",
            "0",
            "31",
            "value 5 appears twice in row 1 (r1c1 and r1c3)",
        ],
    ];
    assert_eq!(status, want);
}

#[test]
fn dry_run_prints_the_statements_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    for (job, expect) in [
        ("sudoku", "CREATE TABLE SUDOKU_GRID_status"),
        ("sudoku_sql", "WITH RECURSIVE sdk_k(k)"),
        ("minesweeper", "CREATE TABLE MINESWEEPER_VIEW"),
    ] {
        let path = repo().join(format!("config/{job}.yaml"));
        eavpivot(dir.path())
            .args(["run", path.to_str().expect("utf-8"), "--dry-run"])
            .assert()
            .success()
            .stdout(predicate::str::contains(expect));
    }
    assert!(
        !dir.path().join("eavpivot.db").exists(),
        "a dry run creates no database"
    );
}

#[test]
fn on_unsolved_error_fails_and_rolls_back() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = empty_db(dir.path());
    let job = job_copy(dir.path(), "sudoku", &[]);
    run(dir.path(), &job, &db, &[]).success();
    let before = rows(&db, "SELECT * FROM SUDOKU_GRID ORDER BY 1, 2");
    let status_before = rows(&db, "SELECT * FROM SUDOKU_GRID_status ORDER BY 1");
    let strict = job_copy(
        dir.path(),
        "sudoku",
        &[("sudoku_solve: {}", "sudoku_solve: { on_unsolved: error }")],
    );
    run(dir.path(), &strict, &db, &[])
        .code(1)
        .stderr(predicate::str::contains(
            "puzzle 4 is no_solution (on_unsolved: error)",
        ))
        .stderr(predicate::str::contains("rolled back"));
    assert_eq!(rows(&db, "SELECT * FROM SUDOKU_GRID ORDER BY 1, 2"), before);
    assert_eq!(
        rows(&db, "SELECT * FROM SUDOKU_GRID_status ORDER BY 1"),
        status_before
    );
}

#[test]
fn sql_engine_matches_the_rust_solver_on_sqlite() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = empty_db(dir.path());
    // AI Escargot (3) and the three-solution puzzle (5) take seconds in the CTE under an
    // unoptimised test build of SQLite; the server tests below run the whole sample.
    let only = [(
        "  table: SUDOKU_GIVENS\n",
        "  table: SUDOKU_GIVENS\n  where: puzzle IN (1, 2, 4, 6)\n",
    )];
    for name in ["sudoku", "sudoku_sql"] {
        let job = job_copy(dir.path(), name, &only);
        run(dir.path(), &job, &db, &[])
            .success()
            .stderr(predicate::str::contains("wrote 18 rows"));
    }
    let rust = rows(&db, "SELECT * FROM SUDOKU_GRID ORDER BY 1, 2");
    let sql = rows(&db, "SELECT * FROM SUDOKU_GRID_SQL ORDER BY 1, 2");
    assert_eq!(rust.len(), 18);
    assert_eq!(rust, sql);
}

#[test]
fn import_loads_givens_that_the_job_solves() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("imported.db");
    let file = dir.path().join("puzzles.txt");
    std::fs::write(
        &file,
        "# a header like the shared sets have\n\n\
         53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79\n\
         1....7.9..3..2...8..96..5....53..9...1..8...26....4...3......1..4......7..7...3..\n",
    )
    .expect("write puzzles");
    let conn = format!("sqlite:{}", db.display());
    let import = |path: &Path| {
        eavpivot(dir.path())
            .args([
                "sudoku",
                "--import",
                path.to_str().expect("utf-8"),
                "--connection",
                &conn,
            ])
            .assert()
    };
    import(&file).success().stderr(predicate::str::contains(
        "imported 2 puzzles (ids 1..2), 53 givens rows into SUDOKU_GIVENS (created)",
    ));
    import(&file)
        .success()
        .stderr(predicate::str::contains("(ids 3..4)"));
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "53..7....6..195\n").expect("write bad file");
    import(&bad)
        .code(1)
        .stderr(predicate::str::contains("line 1: puzzle has 15 cells"));
    assert_eq!(rows(&db, "SELECT COUNT(*) FROM SUDOKU_GIVENS"), [["106"]]);

    let job = job_copy(dir.path(), "sudoku", &[]);
    run(dir.path(), &job, &db, &[])
        .success()
        .stderr(predicate::str::contains("wrote 36 rows"));
    let first = rows(
        &db,
        "SELECT * FROM SUDOKU_GRID WHERE puzzle = 3 ORDER BY row",
    );
    let line: String = first.iter().map(|r| r[2..].concat()).collect();
    assert_eq!(line, DOCS_SOLUTION);
}

/// The Sudoku job (both engines) and the Minesweeper job on a server, under table names of
/// their own; the tables are dropped afterwards.
fn bundled_grids_on(what: &str, url: &str) {
    let Some((rt, mut db)) = server(what, url) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let tag = format!("T{}_{}", std::process::id(), what.len());
    let sudoku_prefix = format!("SUDOKU_{tag}_");
    let mines_prefix = format!("MINESWEEPER_{tag}_");
    let edits = [
        ("SUDOKU_", sudoku_prefix.as_str()),
        ("MINESWEEPER_", mines_prefix.as_str()),
    ];
    let tables: Vec<String> = ["GRID_status", "GRID_SQL", "GRID", "GIVENS"]
        .iter()
        .map(|t| format!("{sudoku_prefix}{t}"))
        .chain(
            ["VIEW", "BOARD"]
                .iter()
                .map(|t| format!("{mines_prefix}{t}")),
        )
        .collect();
    let drop_all = |db: &mut Box<dyn Backend>| {
        for t in &tables {
            rt.block_on(db.execute(&format!("DROP TABLE IF EXISTS {t}")))
                .expect("drop table");
        }
    };
    drop_all(&mut db);
    for (job, written) in [("sudoku", 27), ("sudoku_sql", 27), ("minesweeper", 10)] {
        let path = job_copy(dir.path(), job, &edits);
        let out = eavpivot(dir.path())
            .args([
                "run",
                path.to_str().expect("utf-8"),
                "--connection",
                url,
                "--load-sample",
                "--json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let report: serde_json::Value = serde_json::from_slice(&out).expect("json report");
        assert_eq!(report["rows_written"], written, "{what} {job}");
    }
    let query = |db: &mut Box<dyn Backend>, sql: String| -> Vec<String> {
        let rows = rt.block_on(db.query(&sql)).expect("query");
        rows.iter()
            .map(|r| {
                r.iter()
                    .map(|v| v.as_text().unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect()
    };
    let grid = |t: &str| format!("SELECT * FROM {sudoku_prefix}{t} ORDER BY 1, 2");
    let rust = query(&mut db, grid("GRID"));
    assert_eq!(rust.len(), 27);
    assert_eq!(
        rust,
        query(&mut db, grid("GRID_SQL")),
        "{what}: CTE and Rust answers differ"
    );
    let docs: String = rust[9..18]
        .iter()
        .map(|r| r[4..].replace(',', ""))
        .collect();
    assert_eq!(docs, DOCS_SOLUTION);
    let status = query(
        &mut db,
        format!("SELECT status FROM {sudoku_prefix}GRID_status ORDER BY puzzle"),
    );
    assert_eq!(
        status,
        [
            "solved",
            "solved",
            "solved",
            "no_solution",
            "multiple_solutions",
            "invalid"
        ]
    );
    let board = query(
        &mut db,
        format!("SELECT * FROM {mines_prefix}VIEW ORDER BY 1"),
    );
    assert_eq!(board[0], "1,1,F,1,,,1,M,?,?,?");
    drop_all(&mut db);
}

#[test]
fn postgres_runs_the_bundled_grids() {
    let url = std::env::var("EAVPIVOT_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    bundled_grids_on("postgres", &url);
}

#[test]
fn mariadb_runs_the_bundled_grids() {
    let url = std::env::var("EAVPIVOT_MARIADB_URL")
        .unwrap_or_else(|_| "mariadb://root@127.0.0.1:3306/test".into());
    bundled_grids_on("mariadb", &url);
}

/// A 16×16 grid (box size 4) through `engine: sql` on SQLite: past 9×9 the statement once
/// carried T-SQL's `OPTION (MAXRECURSION 0)` whatever the dialect, a syntax error elsewhere.
#[test]
fn sql_engine_solves_a_16x16_grid_on_sqlite() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("grid16.db");
    // A valid 16×16 grid by the shifted-rows pattern, symbols 1-9 then A-G; four blanks.
    let symbols: Vec<char> = "123456789ABCDEFG".chars().collect();
    let value = |r: usize, c: usize| (4 * (r % 4) + r / 4 + c) % 16;
    let mut puzzle: Vec<char> = (0..256).map(|i| symbols[value(i / 16, i % 16)]).collect();
    for blank in [0, 17, 100, 255] {
        puzzle[blank] = '.';
    }
    let file = dir.path().join("p16.txt");
    let line: String = puzzle.into_iter().collect();
    std::fs::write(&file, format!("{line}\n")).expect("write puzzle");
    let conn = format!("sqlite:{}", db.display());
    eavpivot(dir.path())
        .args(["sudoku", "--import", file.to_str().expect("utf-8")])
        .args(["--connection", &conn])
        .assert()
        .success();
    let job = job_copy(dir.path(), "sudoku_sql", &[]);
    eavpivot(dir.path())
        .args(["run", job.to_str().expect("utf-8"), "--connection", &conn])
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote 16 rows"));
    let grid = rows(&db, "SELECT * FROM SUDOKU_GRID_SQL ORDER BY 1, 2");
    let want: Vec<Vec<String>> = (0..16)
        .map(|r| {
            ["1".to_string(), (r + 1).to_string()]
                .into_iter()
                .chain((0..16).map(|c| (value(r, c) + 1).to_string()))
                .collect()
        })
        .collect();
    assert_eq!(grid, want);
}
