//! `sudoku_solve: { engine: sql_join }` against the Rust solver: nearly complete puzzles (a
//! generated solution with cells blanked), the bundled sample puzzles (AI Escargot included,
//! 58 empty cells), an ambiguous puzzle and an invalid one, on SQLite always and on
//! PostgreSQL and MariaDB when reachable; the grid must hold exactly the uniquely solvable
//! puzzles, cell for cell as the Rust solver solves them. A puzzle past the join limit is
//! refused by name and empty-cell count before anything is written, and `--dry-run` prints
//! the generated join.
//!
//! Servers come from `EAVPIVOT_PG_URL` / `EAVPIVOT_MARIADB_URL` (default: the local ones); an
//! unreachable one is skipped with the reason printed unless `EAVPIVOT_REQUIRE_SERVERS=1`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::servers;

use eavpivot::backend::Backend;
use eavpivot::config::{self, TableRef};
use eavpivot::execute::{run_job, RunOptions};
use eavpivot::transform::sudoku::{classify, generate, solve, Grid, Status};

/// Sample puzzles of sql/*/sudoku.sql: the T-SQL article's, the SQLite docs', AI Escargot.
const SAMPLES: [&str; 3] = [
    "86....3...2...1..7....74...27.9..1...8.....7...1..7.95...56....4..1...5...3....81",
    "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79",
    "1....7.9..3..2...8..96..5....53..9...1..8...26....4...3......1..4......7..7...3..",
];

/// A known 17-given puzzle with its first given removed: 16 givens, 65 empty cells, more
/// than any database here joins in one SELECT (SQLite 64, MariaDB 61), so it is refused
/// rather than skipped as having too few givens to be unique.
const SIXTEEN: &str =
    "......1..........435............7.8........1...2..3....6......75..34........2..6..";

/// Puzzle 2 solved.
const DOCS_SOLUTION: &str =
    "534678912672195348198342567859761423426853791713924856961537284287419635345286179";

/// `solution` with a deadly rectangle blanked (rows in one band, columns in two boxes, values
/// a b / b a): exactly two solutions.
fn ambiguous(solution: &str) -> String {
    let s: Vec<char> = solution.chars().collect();
    let at = |r: usize, c: usize| s[r * 9 + c];
    for r1 in 0..9 {
        for r2 in (r1 + 1)..(r1 / 3 * 3 + 3) {
            for c1 in 0..9 {
                for c2 in (c1 / 3 * 3 + 3)..9 {
                    if at(r1, c1) == at(r2, c2) && at(r1, c2) == at(r2, c1) {
                        let mut out = s.clone();
                        for (r, c) in [(r1, c1), (r1, c2), (r2, c1), (r2, c2)] {
                            out[r * 9 + c] = '.';
                        }
                        return out.into_iter().collect();
                    }
                }
            }
        }
    }
    panic!("no deadly rectangle in {solution}")
}

/// A generated puzzle's solution with the `step`-th of the puzzle's own blanks (from
/// `offset`) blanked again: more givens than a unique puzzle, so unique too.
fn nearly_complete(seed: u64, step: usize, offset: usize) -> String {
    let puzzle = generate(3, seed);
    let solved = solve(&puzzle, 1).first.expect("generated puzzles solve");
    solved
        .to_line()
        .chars()
        .zip(puzzle.to_line().chars())
        .enumerate()
        .map(|(i, (digit, given))| match given {
            '.' | '0' if i % step == offset => '.',
            _ => digit,
        })
        .collect()
}

/// The test's puzzles, numbered from 1 in this order.
fn puzzles() -> Vec<String> {
    let mut lines = vec![
        nearly_complete(1, 8, 0), // an eighth of a generated puzzle's blanks
        nearly_complete(2, 3, 1), // a third
        nearly_complete(3, 2, 0), // half
    ];
    lines.extend(SAMPLES.iter().map(|s| s.to_string()));
    lines.push(ambiguous(DOCS_SOLUTION));
    // Invalid: two 5s in row 1.
    lines.push(format!("55{}", &SAMPLES[1][2..]));
    lines
}

struct Names {
    givens: String,
    grid: String,
}

fn names(tag: &str) -> Names {
    let pid = std::process::id();
    Names {
        givens: format!("sdk_join_{tag}_givens_{pid}"),
        grid: format!("sdk_join_{tag}_grid_{pid}"),
    }
}

async fn load_givens(db: &mut dyn Backend, table: &str, lines: &[String]) {
    let d = db.dialect();
    let table = TableRef::parse(table).expect("name");
    let _ = db.execute(&d.drop_table(&table)).await;
    let cols: Vec<String> = ["puzzle", "row", "col", "value"]
        .iter()
        .map(|c| format!("{} INTEGER NOT NULL", d.quote_ident(c)))
        .collect();
    db.execute(&format!("CREATE TABLE {table} ({})", cols.join(", ")))
        .await
        .expect("create givens");
    let mut rows = Vec::new();
    for (p, line) in lines.iter().enumerate() {
        for (i, ch) in line.chars().enumerate() {
            if let Some(v) = ch.to_digit(10).filter(|&v| v > 0) {
                rows.push(format!("({}, {}, {}, {v})", p + 1, i / 9 + 1, i % 9 + 1));
            }
        }
    }
    for chunk in rows.chunks(200) {
        db.execute(&format!(
            "INSERT INTO {table} ({}, {}, {}, {}) VALUES {}",
            d.quote_ident("puzzle"),
            d.quote_ident("row"),
            d.quote_ident("col"),
            d.quote_ident("value"),
            chunk.join(", ")
        ))
        .await
        .expect("insert givens");
    }
}

fn job(dir: &Path, n: &Names) -> config::Job {
    let text = format!(
        "name: sudoku_join\nsource:\n  table: {}\nentity: [puzzle, row]\nattribute: col\nvalue: value\n\
         pivot:\n  order: natural\n  column_type: INTEGER\ntarget:\n  table: {}\n  if_exists: replace\n\
         transforms:\n  - sudoku_solve: {{ engine: sql_join }}\n",
        n.givens, n.grid
    );
    let path = dir.join("sudoku_join.yaml");
    std::fs::write(&path, text).expect("job file");
    config::load_job(&path).expect("job valid")
}

/// puzzle → its 81 digits, read from the grid table.
async fn grids(db: &mut dyn Backend, table: &str) -> BTreeMap<i64, String> {
    let d = db.dialect();
    let cols: Vec<String> = ["puzzle", "row", "1", "2", "3", "4", "5", "6", "7", "8", "9"]
        .iter()
        .map(|c| d.quote_ident(c))
        .collect();
    let rows = db
        .query(&format!(
            "SELECT {} FROM {table} ORDER BY 1, 2",
            cols.join(", ")
        ))
        .await
        .expect("read grid");
    let mut out: BTreeMap<i64, String> = BTreeMap::new();
    for r in rows {
        let p = r[0].as_i64().expect("puzzle");
        let digits: String = r[2..]
            .iter()
            .map(|v| v.as_i64().map_or('?', |d| char::from(b'0' + d as u8)))
            .collect();
        out.entry(p).or_default().push_str(&digits);
    }
    out
}

/// What the Rust solver writes: the uniquely solved puzzles.
fn expected(lines: &[String]) -> BTreeMap<i64, String> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(p, line)| {
            let grid = Grid::parse(line).ok()?;
            let (status, outcome) = classify(&grid);
            let solution = outcome.first.filter(|_| status == Status::Solved)?;
            Some((p as i64 + 1, solution.to_line()))
        })
        .collect()
}

async fn agrees_with_rust(db: &mut dyn Backend) {
    let dir = tempfile::tempdir().expect("temp dir");
    let n = names("ok");
    let lines = puzzles();
    load_givens(db, &n.givens, &lines).await;
    let job = job(dir.path(), &n);
    let result = run_job(&job, db, &RunOptions::default()).await;
    let got = match &result {
        Ok(_) => grids(db, &n.grid).await,
        Err(_) => BTreeMap::new(),
    };
    let _ = db.execute(&format!("DROP TABLE {}", n.grid)).await;
    let _ = db.execute(&format!("DROP TABLE {}", n.givens)).await;
    let outcome = result.unwrap_or_else(|e| panic!("{}: {e}", db.dialect().name()));
    let want = expected(&lines);
    assert_eq!(
        want.len(),
        lines.len() - 2,
        "all but the ambiguous and invalid"
    );
    assert_eq!(
        got,
        want,
        "{}: sql_join vs the Rust solver",
        db.dialect().name()
    );
    let t = &outcome.report.transforms[0];
    assert_eq!(t["engine"], "sql_join");
    assert_eq!(t["solved"], want.len() as u64);
}

async fn refuses_past_the_limit(db: &mut dyn Backend) {
    let dir = tempfile::tempdir().expect("temp dir");
    let n = names("limit");
    load_givens(
        db,
        &n.givens,
        &[SAMPLES[1].to_string(), SIXTEEN.to_string()],
    )
    .await;
    let result = run_job(&job(dir.path(), &n), db, &RunOptions::default()).await;
    let exists = db
        .query(
            &db.dialect()
                .table_exists(&TableRef::parse(&n.grid).expect("name")),
        )
        .await
        .expect("exists query");
    let _ = db.execute(&format!("DROP TABLE {}", n.givens)).await;
    let Err(err) = result else {
        panic!("65 empty cells exceed the join limit, yet the job ran");
    };
    let err = err.to_string();
    assert!(err.contains("puzzle 2 has 65 empty cells"), "{err}");
    assert_eq!(exists[0][0].as_i64(), Some(0), "nothing may be written");
}

#[test]
fn sqlite_agrees_with_the_rust_solver_and_refuses_past_64_tables() {
    let db = servers::sqlite();
    let (rt, mut conn) = servers::server(db.what, &db.url).expect("sqlite opens");
    rt.block_on(agrees_with_rust(conn.as_mut()));
    rt.block_on(refuses_past_the_limit(conn.as_mut()));
}

#[test]
fn postgres_agrees_with_the_rust_solver() {
    let db = servers::postgres();
    if let Some((rt, mut conn)) = servers::server(db.what, &db.url) {
        rt.block_on(agrees_with_rust(conn.as_mut()));
    }
}

#[test]
fn mariadb_agrees_with_the_rust_solver_and_refuses_past_61_tables() {
    let db = servers::mariadb();
    if let Some((rt, mut conn)) = servers::server(db.what, &db.url) {
        rt.block_on(agrees_with_rust(conn.as_mut()));
        rt.block_on(refuses_past_the_limit(conn.as_mut()));
    }
}

#[test]
fn dry_run_prints_the_generated_join() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db_path = dir.path().join("dry.db");
    std::fs::write(&db_path, b"").expect("db file");
    let n = names("dry");
    let (rt, mut db) =
        servers::server("sqlite", &format!("sqlite:{}", db_path.display())).expect("sqlite opens");
    rt.block_on(load_givens(
        db.as_mut(),
        &n.givens,
        &[nearly_complete(4, 40, 0)],
    ));
    let job_path = dir.path().join("sudoku_join.yaml");
    job(dir.path(), &n);
    let out = assert_cmd::Command::cargo_bin("eavpivot")
        .expect("binary")
        .args([
            "run",
            job_path.to_str().expect("utf-8"),
            "--dry-run",
            "--connection",
        ])
        .arg(format!("sqlite:{}", db_path.display()))
        .output()
        .expect("runs");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Only r1c1, r5c5 and r9c9 can be empty (at least two are): no two share a unit.
    assert!(
        printed.contains("FROM sdk_k d1\n      CROSS JOIN sdk_k d2"),
        "{printed}"
    );
    assert!(!printed.contains("d1.k <> d2.k"), "{printed}");
    assert!(printed.contains("WHERE s.solutions = 1"), "{printed}");
    let conn = rusqlite::Connection::open(&db_path).expect("open");
    let tables: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = ?1",
            [&n.grid],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(tables, 0, "a dry run writes nothing");
}

#[test]
fn the_generated_join_parses_in_every_dialect() {
    // SQL Server cannot be run here: its spelling is checked by sqlparser like the others.
    use eavpivot::dialect::{self, EntityColumn, PivotColumn, TableShape};
    use eavpivot::transform::sudoku::join as sudoku_join;
    use eavpivot::value::Value;
    use sqlparser::dialect::{
        Dialect as ParserDialect, MsSqlDialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect,
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let job = job(dir.path(), &names("parse"));
    let shape = TableShape {
        table: job.target.table.clone(),
        entity: ["puzzle", "row"]
            .iter()
            .map(|n| EntityColumn {
                name: n.to_string(),
                sql_type: Some("INTEGER".into()),
            })
            .collect(),
        columns: (1..=9)
            .map(|c| PivotColumn::text(&c.to_string(), &c.to_string()))
            .collect(),
        column_type: "INTEGER".into(),
        primary_key: true,
    };
    let mut givens = Vec::new();
    for (p, line) in [nearly_complete(5, 4, 1), SAMPLES[1].to_string()]
        .iter()
        .enumerate()
    {
        for (i, ch) in line.chars().enumerate() {
            if let Some(v) = ch.to_digit(10).filter(|&v| v > 0) {
                givens.push(vec![
                    Value::Int(p as i64 + 1),
                    Value::Int(i as i64 / 9 + 1),
                    Value::Int(i as i64 % 9 + 1),
                    Value::Int(i64::from(v)),
                ]);
            }
        }
    }
    let parsers: [(&str, &dyn ParserDialect); 4] = [
        ("sqlite", &SQLiteDialect {}),
        ("postgres", &PostgreSqlDialect {}),
        ("mariadb", &MySqlDialect {}),
        ("mssql", &MsSqlDialect {}),
    ];
    for (name, parser) in parsers {
        let d = dialect::by_name(name).expect("dialect");
        let source = eavpivot::plan::source_query(&job);
        let sql = sudoku_join::solve_into(d, &source, &shape, 3, &givens).expect("renders");
        let query = sudoku_join::givens_query(d, &source).expect("givens query");
        for (what, text) in [("insert", &sql), ("givens query", &query)] {
            if let Err(e) = sqlparser::parser::Parser::parse_sql(parser, text) {
                panic!("{name} {what} does not parse: {e}\n{text}");
            }
        }
        assert_eq!(
            sql.matches("UNION ALL\nSELECT").count(),
            1,
            "{name}: two puzzles"
        );
    }
}
