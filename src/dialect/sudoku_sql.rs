//! SQL text for `sudoku_solve: { engine: sql }`: the string-backtracking recursive CTE of the
//! classic articles (the SQLite documentation's WITH-clause example and its T-SQL
//! translations), generated for each dialect and wrapped in one `INSERT … SELECT` that
//! pivots the answers into the wide grid. Also the givens table that `sudoku --import` fills.
//!
//! It lives beside the dialects, not in them, because it is one query with four spellings:
//! the differences (string concatenation, substring, position, integer division, ordered
//! string aggregation, recursion syntax) are small and read best side by side here.
//!
//! The query checks the givens the way the Rust transform does (out of range, two values for
//! one cell, a repeated digit in a unit: such puzzles never reach the search, which would
//! otherwise happily extend an invalid grid), then enumerates **every** solution and keeps the
//! puzzles that have exactly one. A 9×9 puzzle with fewer than 17 givens never has a unique
//! solution (McGuire, Tugemann, Civario 2012), so it is left out before the search instead
//! of being enumerated.

use super::{ddl, query};
use super::{Dialect, EntityColumn, TableShape};
use crate::config::{Job, TableRef};
use crate::error::{Error, Result};

/// Cell symbols: `1`-`9`, then `A`.. for 10..25 (as [`crate::transform::sudoku::symbol`]).
const SYMBOLS: &str = "123456789ABCDEFGHIJKLMNOP";

/// The five spellings of the in-database solvers' SQL (shared with [`super::sudoku_join`]):
/// each dialect says which is its own ([`Script::sudoku_flavor`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Sqlite,
    Postgres,
    MariaDb,
    TSql,
    /// Recursive subquery factoring: `WITH s (cols) AS (… UNION ALL …)`, no RECURSIVE.
    Oracle,
}

impl Flavor {
    pub(super) fn of(dialect: &dyn Dialect) -> Result<Flavor> {
        dialect.sudoku_flavor().ok_or_else(|| {
            Error::Usage(format!(
                "sudoku_solve has no in-database solver for the {} dialect",
                dialect.name()
            ))
        })
    }

    fn concat(self, parts: &[&str]) -> String {
        match self {
            Flavor::Sqlite | Flavor::Postgres | Flavor::Oracle => parts.join(" || "),
            Flavor::MariaDb | Flavor::TSql => format!("CONCAT({})", parts.join(", ")),
        }
    }

    fn substr(self, s: &str, pos: &str, len: &str) -> String {
        match self {
            Flavor::Sqlite | Flavor::Postgres | Flavor::Oracle => {
                format!("substr({s}, {pos}, {len})")
            }
            Flavor::MariaDb | Flavor::TSql => format!("SUBSTRING({s}, {pos}, {len})"),
        }
    }

    /// 1-based position of `needle` in `hay`, 0 when absent.
    fn position(self, needle: &str, hay: &str) -> String {
        match self {
            Flavor::Sqlite => format!("instr({hay}, {needle})"),
            Flavor::Postgres => format!("strpos({hay}, {needle})"),
            Flavor::MariaDb | Flavor::Oracle => format!("INSTR({hay}, {needle})"),
            Flavor::TSql => format!("CHARINDEX({needle}, {hay})"),
        }
    }

    /// Integer division (MariaDB's and Oracle's `/` give a decimal; the operands are never
    /// negative, so truncating is flooring).
    fn div(self, a: &str, b: usize) -> String {
        match self {
            Flavor::MariaDb => format!("({a}) DIV {b}"),
            Flavor::Oracle => format!("TRUNC(({a}) / {b})"),
            _ => format!("({a}) / {b}"),
        }
    }

    /// The remainder of `a` divided by `b` (Oracle has no `%` operator).
    fn modulo(self, a: &str, b: usize) -> String {
        match self {
            Flavor::Oracle => format!("MOD({a}, {b})"),
            _ => format!("{a} % {b}"),
        }
    }

    /// What a SELECT of constants reads from: nothing, or Oracle's `dual`.
    pub(super) fn no_table(self) -> &'static str {
        match self {
            Flavor::Oracle => " FROM dual",
            _ => "",
        }
    }

    pub(super) fn int(self, expr: &str) -> String {
        match self {
            Flavor::MariaDb => format!("CAST({expr} AS SIGNED)"),
            _ => format!("CAST({expr} AS INTEGER)"),
        }
    }

    /// The concatenation of `expr` over a group, in the order of `index` (1..=`count`, each
    /// once per group).
    ///
    /// T-SQL's ordered aggregation (`STRING_AGG … WITHIN GROUP`, SQL Server 2017) is missing
    /// from Babelfish before 4.3, and `FOR XML PATH('')` with `.value()` from Babelfish
    /// altogether; a concatenation of one `MAX(CASE)` per position runs on both and on SQL
    /// Server 2008.
    fn cells_in_order(self, expr: &str, index: &str, count: usize) -> String {
        match self {
            Flavor::Sqlite => format!("group_concat({expr}, '' ORDER BY {index})"),
            Flavor::Postgres => format!("string_agg({expr}, '' ORDER BY {index})"),
            Flavor::MariaDb => format!("GROUP_CONCAT({expr} ORDER BY {index} SEPARATOR '')"),
            Flavor::Oracle => format!("LISTAGG({expr}) WITHIN GROUP (ORDER BY {index})"),
            Flavor::TSql => {
                let cells: Vec<String> = (1..=count)
                    .map(|k| format!("MAX(CASE WHEN {index} = {k} THEN {expr} END)"))
                    .collect();
                cells.join("\n    + ")
            }
        }
    }

    /// The recursive column's type must be the same in both members on SQL Server.
    fn grid_text(self, expr: &str, cells: usize) -> String {
        match self {
            Flavor::TSql => format!("CONVERT(VARCHAR({cells}), {expr})"),
            _ => expr.to_string(),
        }
    }

    /// The numbers 1..=n as a table `alias(k)`: a CTE, or inline on SQL Server, whose
    /// recursive members are safest written like the published T-SQL solver.
    pub(super) fn numbers(self, n: usize, alias: &str) -> String {
        match self {
            Flavor::TSql => {
                let rows: Vec<String> = (1..=n).map(|k| format!("({k})")).collect();
                format!("(VALUES {}) AS {alias}(k)", rows.join(", "))
            }
            _ => format!("sdk_k {alias}"),
        }
    }
}

/// The `INSERT … SELECT` that solves every puzzle of `job`'s source and writes the uniquely
/// solved ones, one row per grid row, into `shape` (entity `(puzzle, row)`, columns `1..n`).
pub fn solve_into(
    dialect: &dyn Dialect,
    job: &Job,
    shape: &TableShape,
    box_size: usize,
) -> Result<String> {
    let f = Flavor::of(dialect)?;
    check_shape(job, shape, box_size, "sql")?;
    let ctes = [
        numbers_cte(f, box_size * box_size),
        givens_cte(f, job),
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
    // Server's default limit of 100 levels; larger grids need the limit lifted.
    let option = if box_size > 3 {
        "\nOPTION (MAXRECURSION 0)"
    } else {
        ""
    };
    Ok(f.insert_with(&insert, &ctes, &format!("{select}{option}"), true))
}

impl Flavor {
    /// `INSERT … WITH … SELECT`, or on SQL Server `WITH … INSERT … SELECT`.
    pub(super) fn insert_with(
        self,
        insert: &str,
        ctes: &[String],
        select: &str,
        recursive: bool,
    ) -> String {
        let with = match recursive && self != Flavor::Oracle {
            true => "WITH RECURSIVE",
            false => "WITH",
        };
        match self {
            Flavor::TSql => format!("WITH {}\n{insert}\n{select}", ctes.join(",\n")),
            _ => format!("{insert}\n{with} {}\n{select}", ctes.join(",\n")),
        }
    }
}

/// The grid shape both in-database engines write: entity `(puzzle, row)`, columns `1..n`.
pub(super) fn check_shape(
    job: &Job,
    shape: &TableShape,
    box_size: usize,
    engine: &str,
) -> Result<()> {
    if job.entity.len() != 2 || shape.columns.len() != box_size * box_size {
        return Err(Error::Usage(format!(
            "sudoku_solve engine: {engine} needs entity [puzzle, row] and {} columns",
            box_size * box_size
        )));
    }
    Ok(())
}

pub(super) fn numbers_cte(f: Flavor, n: usize) -> String {
    if f == Flavor::TSql {
        return String::new();
    }
    let selects: Vec<String> = (1..=n)
        .map(|k| format!("SELECT {k}{}", f.no_table()))
        .collect();
    format!("sdk_k(k) AS ({})", selects.join(" UNION ALL "))
}

/// The job's key–value rows as `(p, r, c, v)`: puzzle, row, column, digit.
fn givens_cte(f: Flavor, job: &Job) -> String {
    format!(
        "sdk_givens(p, r, c, v) AS (\n  {}\n)",
        givens_select(f, job).replace('\n', "\n  ")
    )
}

/// `SELECT … AS p, … AS r, … AS c, … AS v FROM …`: the givens as integers.
pub(super) fn givens_select(f: Flavor, job: &Job) -> String {
    format!(
        "SELECT {} AS p, {} AS r, {} AS c, {} AS v\n{}",
        job.entity[0].expr,
        f.int(&job.entity[1].expr),
        f.int(&job.attribute),
        f.int(&job.value),
        query::source_from(&super::SourceQuery::from(job))
    )
}

/// Puzzles whose givens break a rule: never searched, never written.
fn invalid_cte(f: Flavor, b: usize) -> String {
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
fn start_cte(f: Flavor, b: usize) -> String {
    let n = b * b;
    let symbol = f.substr(&format!("'{}'", &SYMBOLS[..n]), "g.v", "1");
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
        f.grid_text(&f.cells_in_order(&format!("COALESCE({symbol}, '.')"), "cell.i", n * n), n * n),
        f.numbers(n, "rr"),
        f.numbers(n, "cc"),
    )
}

/// The search: fill the first blank with every digit that its row, column and box do not
/// already hold; a row with no blank left (`ind = 0`) is a solution.
fn search_cte(f: Flavor, b: usize) -> String {
    let n = b * b;
    let cells = n * n;
    let (i, blank) = ("(x.ind - 1)", "x.ind - 1");
    let next = f.grid_text(
        &f.concat(&[
            &f.substr("x.s", "1", "x.ind - 1"),
            "d.z",
            &f.substr("x.s", "x.ind + 1", &cells.to_string()),
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
    let taken = |pos: &str| format!("d.z = {}", f.substr("x.s", pos, "1"));
    format!(
        "sdk_search(p, s, ind) AS (\n  SELECT p, s, {} FROM sdk_start\n  UNION ALL\n  \
         SELECT x.p, {next}, {}\n  FROM sdk_search x\n  \
         JOIN (SELECT {} AS z FROM {}) d ON NOT EXISTS (\n    SELECT 1 FROM {}\n    \
         WHERE {}\n       OR {}\n       OR {})\n  WHERE x.ind > 0\n)",
        f.position("'.'", "s"),
        f.position("'.'", &next),
        f.substr(&format!("'{}'", &SYMBOLS[..n]), "dk.k", "1"),
        f.numbers(n, "dk"),
        f.numbers(n, "lp"),
        taken(&row_cell),
        taken(&col_cell),
        taken(&box_cell),
    )
}

/// The pivot: one row per solved puzzle and grid row, one column per grid column.
fn pivot_select(f: Flavor, b: usize) -> String {
    let n = b * b;
    let symbols = format!("'{}'", &SYMBOLS[..n]);
    let mut select = vec!["sv.p".to_string(), "rw.k".to_string()];
    select.extend((1..=n).map(|c| {
        let cell = f.substr("sv.s", &format!("(rw.k - 1) * {n} + {c}"), "1");
        f.position(&cell, &symbols)
    }));
    format!(
        "SELECT {}\nFROM sdk_solved sv CROSS JOIN {}",
        select.join(",\n  "),
        f.numbers(n, "rw")
    )
}

/// The number of distinct puzzles in the job's source, for the report.
pub fn count_puzzles(job: &Job) -> String {
    format!(
        "SELECT COUNT(DISTINCT {}) {}",
        job.entity[0].expr,
        query::source_from(&super::SourceQuery::from(job))
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
    use crate::dialect::{MsSql, Sqlite};

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
    fn flavors_spell_the_differences() {
        assert_eq!(Flavor::of(&Sqlite).expect("sqlite").div("x", 3), "(x) / 3");
        assert_eq!(Flavor::MariaDb.div("x", 3), "(x) DIV 3");
        assert_eq!(
            Flavor::of(&MsSql).expect("mssql").position("'.'", "s"),
            "CHARINDEX('.', s)"
        );
        let table = TableRef::parse("SUDOKU_GIVENS").expect("name");
        assert_eq!(
            ddl::create_table(&MsSql, &givens_shape(&MsSql, &table)),
            "CREATE TABLE SUDOKU_GIVENS (\n  [puzzle] BIGINT NOT NULL,\n  [row] BIGINT NOT NULL,\n  [col] BIGINT NOT NULL,\n  [value] BIGINT NOT NULL\n)"
        );
    }
}
