//! SQL text for `sudoku_solve: { engine: sql }`: the string-backtracking recursive CTE of the
//! classic articles (the SQLite documentation's WITH-clause example and its T-SQL
//! translations), generated for each dialect and wrapped in one `INSERT … SELECT` that
//! pivots the answers into the wide grid. Also the givens table that `sudoku --import` fills.
//!
//! One query for every database: the differences (string concatenation, substring, position,
//! integer division, ordered string aggregation, recursion syntax) are the dialect's
//! [`Spelling`], data each dialect gives; nothing here asks which database it is.
//!
//! The query checks the givens the way the Rust transform does (out of range, two values for
//! one cell, a repeated digit in a unit: such puzzles never reach the search, which would
//! otherwise happily extend an invalid grid), then enumerates **every** solution and keeps the
//! puzzles that have exactly one. A 9×9 puzzle with fewer than 17 givens never has a unique
//! solution (McGuire, Tugemann, Civario 2012), so it is left out before the search instead
//! of being enumerated.

use crate::config::TableRef;
use crate::dialect::{ddl, query};
use crate::dialect::{Dialect, EntityColumn, SourceQuery, Spelling, TableShape};
use crate::error::{Error, Result};

/// Cell symbols: `1`-`9`, then `A`.. for 10..25 (as [`super::symbol`]).
const SYMBOLS: &str = "123456789ABCDEFGHIJKLMNOP";

/// The dialect's spelling of hand-built SQL, or why it has no in-database solver.
pub(super) fn spelling(dialect: &dyn Dialect) -> Result<&'static Spelling> {
    dialect.spelling().ok_or_else(|| {
        Error::Usage(format!(
            "sudoku_solve has no in-database solver for the {} dialect",
            dialect.name()
        ))
    })
}

/// The numbers 1..=n as a table `alias(k)`: the `sdk_k` CTE, or inline where constants are
/// written inline.
pub(super) fn numbers(f: &Spelling, n: usize, alias: &str) -> String {
    match f.inline_constants {
        true => {
            let rows: Vec<String> = (1..=n).map(|k| format!("({k})")).collect();
            format!("(VALUES {}) AS {alias}(k)", rows.join(", "))
        }
        false => format!("sdk_k {alias}"),
    }
}

/// The `INSERT … SELECT` that solves every puzzle of the source's givens and writes the
/// uniquely solved ones, one row per grid row, into `shape` (entity `(puzzle, row)`, columns
/// `1..n`).
pub fn solve_into(
    dialect: &dyn Dialect,
    source: &SourceQuery,
    shape: &TableShape,
    box_size: usize,
) -> Result<String> {
    let f = spelling(dialect)?;
    check_shape(source, shape, box_size, "sql")?;
    let ctes = [
        numbers_cte(f, box_size * box_size),
        givens_cte(f, source),
        invalid_cte(f, box_size),
        start_cte(f, box_size),
        search_cte(f, box_size),
        "sdk_solved(p, s) AS (\n  SELECT p, MIN(s) FROM sdk_search WHERE ind = 0\n  GROUP BY p HAVING COUNT(*) = 1\n)".to_string(),
    ];
    let ctes: Vec<String> = ctes.into_iter().filter(|c| !c.is_empty()).collect();
    let insert = format!(
        "INSERT INTO {} ({})",
        shape.table,
        ddl::insert_columns(dialect, shape)
    );
    let select = pivot_select(f, box_size);
    // One recursion level per blank: a 9×9 search (at least 17 givens) stays within SQL
    // Server's default limit of 100 levels; larger grids need the limit lifted where it exists.
    let option = if box_size > 3 {
        f.lift_recursion_limit
    } else {
        ""
    };
    Ok(f.insert_with(&insert, &ctes, &format!("{select}{option}"), true))
}

/// The grid shape both in-database engines write: entity `(puzzle, row)`, columns `1..n`.
pub(super) fn check_shape(
    source: &SourceQuery,
    shape: &TableShape,
    box_size: usize,
    engine: &str,
) -> Result<()> {
    if source.entity.len() != 2 || shape.columns.len() != box_size * box_size {
        return Err(Error::Usage(format!(
            "sudoku_solve engine: {engine} needs entity [puzzle, row] and {} columns",
            box_size * box_size
        )));
    }
    Ok(())
}

pub(super) fn numbers_cte(f: &Spelling, n: usize) -> String {
    if f.inline_constants {
        return String::new();
    }
    let selects: Vec<String> = (1..=n)
        .map(|k| format!("SELECT {k}{}", f.constant_from))
        .collect();
    format!("sdk_k(k) AS ({})", selects.join(" UNION ALL "))
}

/// The source's key–value rows as `(p, r, c, v)`: puzzle, row, column, digit.
fn givens_cte(f: &Spelling, source: &SourceQuery) -> String {
    format!(
        "sdk_givens(p, r, c, v) AS (\n  {}\n)",
        givens_select(f, source).replace('\n', "\n  ")
    )
}

/// `SELECT … AS p, … AS r, … AS c, … AS v FROM …`: the givens as integers.
pub(super) fn givens_select(f: &Spelling, source: &SourceQuery) -> String {
    format!(
        "SELECT {} AS p, {} AS r, {} AS c, {} AS v\n{}",
        source.entity[0],
        f.int(&source.entity[1]),
        f.int(&source.attribute),
        f.int(&source.value),
        query::source_from(source)
    )
}

/// Puzzles whose givens break a rule: never searched, never written.
fn invalid_cte(f: &Spelling, b: usize) -> String {
    let n = b * b;
    let cell = format!("(r - 1) * {n} + c");
    let from = "FROM sdk_givens WHERE v IS NOT NULL";
    format!(
        "sdk_invalid(p) AS (\n  \
         SELECT p {from} AND (r < 1 OR r > {n} OR c < 1 OR c > {n} OR v < 1 OR v > {n})\n  \
         UNION SELECT p {from} GROUP BY p, r, c HAVING MIN(v) <> MAX(v)\n  \
         UNION SELECT p {from} GROUP BY p, r, v HAVING COUNT(DISTINCT c) > 1\n  \
         UNION SELECT p {from} GROUP BY p, c, v HAVING COUNT(DISTINCT r) > 1\n  \
         UNION SELECT p {from} GROUP BY p, {}, {}, v HAVING COUNT(DISTINCT {cell}) > 1\n)",
        f.div("r - 1", b),
        f.div("c - 1", b),
    )
}

/// One row per valid puzzle: its grid as an n²-character string, `.` for a blank.
fn start_cte(f: &Spelling, b: usize) -> String {
    let n = b * b;
    let symbol = f.substring(&format!("'{}'", &SYMBOLS[..n]), "g.v", "1");
    // Fewer than 17 givens: never a unique 9×9 solution, and the search would enumerate them all.
    let least = if b == 3 { 17 } else { 1 };
    format!(
        "sdk_start(p, s) AS (\n  SELECT q.p, {}\n  \
         FROM (SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p\n        \
         HAVING COUNT(DISTINCT (r - 1) * {n} + c) >= {least}\n          \
         AND p NOT IN (SELECT p FROM sdk_invalid)) q\n  \
         CROSS JOIN (SELECT (rr.k - 1) * {n} + cc.k AS i, rr.k AS r, cc.k AS c\n              \
         FROM {} CROSS JOIN {}) cell\n  \
         LEFT JOIN (SELECT p, r, c, MAX(v) AS v FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, r, c) g\n    \
         ON g.p = q.p AND g.r = cell.r AND g.c = cell.c\n  GROUP BY q.p\n)",
        f.recursive_text(&f.ordered_concat(&format!("COALESCE({symbol}, '.')"), "cell.i", n * n), n * n),
        numbers(f, n, "rr"),
        numbers(f, n, "cc"),
    )
}

/// The search: fill the first blank with every digit that its row, column and box do not
/// already hold; a row with no blank left (`ind = 0`) is a solution.
fn search_cte(f: &Spelling, b: usize) -> String {
    let n = b * b;
    let cells = n * n;
    let (i, blank) = ("(x.ind - 1)", "x.ind - 1");
    let next = f.recursive_text(
        &f.concat(&[
            &f.substring("x.s", "1", "x.ind - 1"),
            "d.z",
            &f.substring("x.s", "x.ind + 1", &cells.to_string()),
        ]),
        cells,
    );
    let row_cell = format!("{} * {n} + lp.k", f.div(blank, n));
    let col_cell = format!("{} + (lp.k - 1) * {n} + 1", f.modulo(i, n));
    let box_cell = format!(
        "{} * {} + {} * {b} + {} * {n} + {} + 1",
        f.div(&f.div(blank, n), b),
        b * n,
        f.div(&f.modulo(i, n), b),
        f.div("lp.k - 1", b),
        f.modulo("(lp.k - 1)", b),
    );
    let taken = |pos: &str| format!("d.z = {}", f.substring("x.s", pos, "1"));
    format!(
        "sdk_search(p, s, ind) AS (\n  SELECT p, s, {} FROM sdk_start\n  UNION ALL\n  \
         SELECT x.p, {next}, {}\n  FROM sdk_search x\n  \
         JOIN (SELECT {} AS z FROM {}) d ON NOT EXISTS (\n    SELECT 1 FROM {}\n    \
         WHERE {}\n       OR {}\n       OR {})\n  WHERE x.ind > 0\n)",
        f.position("'.'", "s"),
        f.position("'.'", &next),
        f.substring(&format!("'{}'", &SYMBOLS[..n]), "dk.k", "1"),
        numbers(f, n, "dk"),
        numbers(f, n, "lp"),
        taken(&row_cell),
        taken(&col_cell),
        taken(&box_cell),
    )
}

/// The pivot: one row per solved puzzle and grid row, one column per grid column.
fn pivot_select(f: &Spelling, b: usize) -> String {
    let n = b * b;
    let symbols = format!("'{}'", &SYMBOLS[..n]);
    let mut select = vec!["sv.p".to_string(), "rw.k".to_string()];
    select.extend((1..=n).map(|c| {
        let cell = f.substring("sv.s", &format!("(rw.k - 1) * {n} + {c}"), "1");
        f.position(&cell, &symbols)
    }));
    format!(
        "SELECT {}\nFROM sdk_solved sv CROSS JOIN {}",
        select.join(",\n  "),
        numbers(f, n, "rw")
    )
}

/// The number of distinct puzzles in the source, for the report.
pub fn count_puzzles(source: &SourceQuery) -> String {
    format!(
        "SELECT COUNT(DISTINCT {}) {}",
        source.entity[0],
        query::source_from(source)
    )
}

/// The givens table `sudoku --import` creates when it is missing.
pub fn givens_shape(dialect: &dyn Dialect, table: &TableRef) -> TableShape {
    let int = dialect.integer_type();
    let column = |name: &str| EntityColumn {
        name: name.to_string(),
        sql_type: Some(format!("{int} NOT NULL")),
    };
    TableShape {
        table: table.clone(),
        entity: vec![
            column("puzzle"),
            column("row"),
            column("col"),
            column("value"),
        ],
        columns: Vec::new(),
        column_type: int.to_string(),
        // The puzzle's own key is (puzzle, row, col); `value` is data. No key is declared,
        // as before: `--import` checks the givens itself.
        primary_key: false,
    }
}

/// The largest puzzle number already in the givens table (NULL when empty).
pub fn max_puzzle(dialect: &dyn Dialect, table: &TableRef) -> String {
    format!("SELECT MAX({}) FROM {table}", dialect.quote_ident("puzzle"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::{MariaDb, MsSql, Sqlite};

    #[test]
    fn box_formula_visits_the_box_of_the_cell() {
        // The box expression, evaluated in Rust for every cell and lp, must name exactly
        // the nine cells of the cell's box.
        for idx in 0..81usize {
            let (r, c) = (idx / 9, idx % 9);
            let mut cells: Vec<usize> = (1..=9usize)
                .map(|lp| (idx / 9) / 3 * 27 + (idx % 9) / 3 * 3 + (lp - 1) / 3 * 9 + (lp - 1) % 3)
                .collect();
            cells.sort_unstable();
            let want: Vec<usize> = (0..81)
                .filter(|k| k / 9 / 3 == r / 3 && k % 9 / 3 == c / 3)
                .collect();
            assert_eq!(cells, want, "cell {idx}");
        }
    }

    #[test]
    fn spellings_differ_as_data() {
        assert_eq!(spelling(&Sqlite).expect("sqlite").div("x", 3), "(x) / 3");
        assert_eq!(
            spelling(&MariaDb).expect("mariadb").div("x", 3),
            "(x) DIV 3"
        );
        assert_eq!(
            spelling(&MsSql).expect("mssql").position("'.'", "s"),
            "CHARINDEX('.', s)"
        );
        let table = TableRef::parse("SUDOKU_GIVENS").expect("name");
        assert_eq!(
            ddl::create_table(&MsSql, &givens_shape(&MsSql, &table)),
            "CREATE TABLE SUDOKU_GIVENS (\n  [puzzle] BIGINT NOT NULL,\n  [row] BIGINT NOT NULL,\n  [col] BIGINT NOT NULL,\n  [value] BIGINT NOT NULL\n)"
        );
    }
}
