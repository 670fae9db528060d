//! SQL text for `sudoku_solve: { engine: sql_join }`: the meta-SQL of the classic article.
//! Each puzzle becomes one generated SELECT that joins a digits table once per EMPTY cell
//! (`FROM sdk_k d1 CROSS JOIN sdk_k d2 …`) and says the rules in WHERE: each empty cell's
//! digit is none of the givens of its row, column and box (`d1.k NOT IN (5, 3, 7)`), and two
//! empty cells sharing a unit differ (`d1.k <> d2.k`). The database's join is the search.
//!
//! The query depends on which cells are empty, so generation needs the givens first: a
//! read-only query ([`givens_query`]), then one SELECT per puzzle, all in one `INSERT … SELECT`
//! pivoted into the same grid as `engine: sql` (entity `(puzzle, row)`, columns `1..n`). Each
//! puzzle's SELECT keeps at most two solutions and writes the puzzle only when there is one.
//!
//! Every database limits how many tables one join may hold, so a puzzle with too many empty
//! cells is refused before anything runs, by name and empty-cell count. That makes this
//! engine one for nearly complete puzzles: most published puzzles have 50+ empty cells. The
//! givens are only checked (out of range, two values in a cell, a repeated digit in a unit,
//! fewer than 17 givens on 9×9): such puzzles are not written, as with `engine: sql`; nothing
//! is filled in beforehand, the join alone solves.

use std::collections::BTreeMap;

use super::sql::{check_shape, givens_select, numbers, numbers_cte, spelling};
use super::Grid;
use crate::dialect::{ddl, Dialect, SourceQuery, Spelling, TableShape};
use crate::error::{Error, Result};
use crate::value::Value;

/// The most digits tables one puzzle's SELECT may join on `dialect`, and why: the most empty
/// cells a puzzle may have (the dialect's [`Spelling::max_join_tables`]). The pivot around the
/// join (its `LIMIT 2` and window count keep it a separate join, measured on SQLite 3 and
/// MariaDB 10.11) does not count.
pub fn max_join_tables(dialect: &dyn Dialect) -> Result<Option<(usize, &'static str)>> {
    Ok(spelling(dialect)?.max_join_tables)
}

/// The givens, one row per given digit: `p, r, c, v`, read before the SELECTs are generated.
pub fn givens_query(dialect: &dyn Dialect, source: &SourceQuery) -> Result<String> {
    let f = spelling(dialect)?;
    Ok(format!(
        "SELECT g.p, g.r, g.c, g.v FROM (\n  {}\n) g\nWHERE g.v IS NOT NULL\nORDER BY g.p, g.r, g.c",
        givens_select(f, source).replace('\n', "\n  ")
    ))
}

/// Refuse, by puzzle and empty-cell count, givens (rows of [`givens_query`]) with a valid
/// puzzle that has more empty cells than one join may hold on `dialect`.
pub fn check_join_limit(
    dialect: &dyn Dialect,
    givens: &[Vec<Value>],
    box_size: usize,
) -> Result<()> {
    let Some((tables, why)) = max_join_tables(dialect)? else {
        return Ok(());
    };
    let too_many: Vec<String> = read_puzzles(dialect, givens, box_size)
        .iter()
        .filter(|p| p.valid)
        .map(|p| (p, p.cells.iter().filter(|&&v| v == 0).count()))
        .filter(|(_, empty)| *empty > tables)
        .map(|(p, empty)| format!("puzzle {} has {empty} empty cells", p.shown))
        .collect();
    match too_many.first() {
        None => Ok(()),
        Some(first) => Err(Error::Usage(format!(
            "sudoku_solve engine: sql_join joins the digits table once per empty cell and {why}, so a puzzle may have at most {tables} empty cells: {first}{}; use engine: sql or the default engine for such puzzles",
            match too_many.len() {
                1 => String::new(),
                k => format!(" (and {} more puzzles over the limit)", k - 1),
            }
        ))),
    }
}

/// One puzzle as read: its key (as a SQL literal) and its cells, `0` for empty.
struct Puzzle {
    key: String,
    shown: String,
    cells: Vec<u8>,
    valid: bool,
}

/// The `INSERT … SELECT` that solves every puzzle in `givens` (rows of [`givens_query`]) and
/// writes the uniquely solved ones into `shape`; refuses when a puzzle has more empty cells
/// than one join may hold here.
pub fn solve_into(
    dialect: &dyn Dialect,
    source: &SourceQuery,
    shape: &TableShape,
    box_size: usize,
    givens: &[Vec<Value>],
) -> Result<String> {
    let f = spelling(dialect)?;
    check_shape(source, shape, box_size, "sql_join")?;
    let n = box_size * box_size;
    check_join_limit(dialect, givens, box_size)?;
    let puzzles = read_puzzles(dialect, givens, box_size);
    let empty = |p: &Puzzle| p.cells.iter().filter(|&&v| v == 0).count();
    // Fewer than 17 givens never make a unique 9×9 puzzle (McGuire et al. 2012): not written,
    // as with engine: sql, rather than searched for a second solution.
    let most_empty = if box_size == 3 { 81 - 17 } else { n * n - 1 };
    let searched: Vec<&Puzzle> = puzzles
        .iter()
        .filter(|p| p.valid && empty(p) <= most_empty)
        .collect();
    let insert = format!(
        "INSERT INTO {} ({})",
        shape.table,
        ddl::insert_columns(dialect, shape)
    );
    let selects: Vec<String> = searched
        .iter()
        .map(|p| puzzle_select(f, dialect, p, box_size))
        .collect();
    let select = match selects.is_empty() {
        // Nothing to solve: an INSERT of no rows keeps the statement sequence the same.
        true => format!(
            "SELECT {} FROM {} WHERE 1 = 0",
            vec!["rw.k"; n + 2].join(", "),
            numbers(f, n, "rw")
        ),
        false => selects.join("\nUNION ALL\n"),
    };
    let ctes: Vec<String> = [numbers_cte(f, n)]
        .into_iter()
        .filter(|c| !c.is_empty())
        .collect();
    Ok(match ctes.is_empty() {
        true => format!("{insert}\n{select}"),
        false => f.insert_with(&insert, &ctes, &select, false),
    })
}

/// Group the givens by puzzle and check them the way the Rust transform does.
fn read_puzzles(dialect: &dyn Dialect, givens: &[Vec<Value>], box_size: usize) -> Vec<Puzzle> {
    let n = box_size * box_size;
    let mut by_key: BTreeMap<String, Puzzle> = BTreeMap::new();
    for row in givens {
        let [p, r, c, v] = row.as_slice() else {
            continue;
        };
        let (key, shown) = match p {
            Value::Int(i) => (i.to_string(), i.to_string()),
            Value::Text(s) => (dialect.quote_literal(s), s.clone()),
            _ => continue,
        };
        let puzzle = by_key.entry(key.clone()).or_insert_with(|| Puzzle {
            key,
            shown,
            cells: vec![0; n * n],
            valid: true,
        });
        let at = |x: &Value| x.as_i64().filter(|&i| (1..=n as i64).contains(&i));
        match (at(r), at(c), at(v)) {
            (Some(r), Some(c), Some(v)) => {
                let cell = &mut puzzle.cells[(r as usize - 1) * n + c as usize - 1];
                if *cell != 0 && *cell != v as u8 {
                    puzzle.valid = false;
                }
                *cell = v as u8;
            }
            _ => puzzle.valid = false,
        }
    }
    let mut out: Vec<Puzzle> = by_key.into_values().collect();
    for p in &mut out {
        p.valid = p.valid
            && Grid::new(box_size, p.cells.clone()).is_ok_and(|g| g.first_conflict().is_none());
    }
    out
}

/// One puzzle: the join over its empty cells (at most two solutions), counted, and pivoted
/// into n rows of n cells when there is exactly one.
fn puzzle_select(f: &Spelling, dialect: &dyn Dialect, p: &Puzzle, box_size: usize) -> String {
    let n = box_size * box_size;
    let unit = |i: usize| {
        (
            i / n,
            i % n,
            (i / n) / box_size * box_size + (i % n) / box_size,
        )
    };
    let empty: Vec<usize> = (0..n * n).filter(|&i| p.cells[i] == 0).collect();
    let name = |k: usize| format!("d{}", k + 1);
    let mut from = Vec::new();
    let mut rules = Vec::new();
    for (k, &i) in empty.iter().enumerate() {
        from.push(numbers(f, n, &name(k)));
        let (r, c, b) = unit(i);
        let mut seen: Vec<u8> = (0..n * n)
            .filter(|&j| p.cells[j] > 0)
            .filter(|&j| {
                let (rj, cj, bj) = unit(j);
                rj == r || cj == c || bj == b
            })
            .map(|j| p.cells[j])
            .collect();
        seen.sort_unstable();
        seen.dedup();
        if !seen.is_empty() {
            let list: Vec<String> = seen.iter().map(u8::to_string).collect();
            rules.push(format!("{}.k NOT IN ({})", name(k), list.join(", ")));
        }
        for (l, &j) in empty.iter().enumerate().take(k) {
            let (rj, cj, bj) = unit(j);
            if rj == r || cj == c || bj == b {
                rules.push(format!("{}.k <> {}.k", name(l), name(k)));
            }
        }
    }
    let search = match empty.is_empty() {
        true => format!("SELECT 1 AS complete{}", f.constant_from),
        false => {
            let cols: Vec<String> = (0..empty.len())
                .map(|k| format!("{}.k AS x{}", name(k), k + 1))
                .collect();
            let filter = match rules.is_empty() {
                true => String::new(),
                false => format!("\n    WHERE {}", rules.join("\n      AND ")),
            };
            format!(
                "SELECT {}\n    FROM {}{filter}",
                cols.join(", "),
                from.join("\n    CROSS JOIN ")
            )
        }
    };
    let slot = |i: usize| match empty.iter().position(|&e| e == i) {
        Some(k) => format!("s.x{}", k + 1),
        None => p.cells[i].to_string(),
    };
    let columns: Vec<String> = (0..n)
        .map(|c| {
            let arms: Vec<String> = (0..n)
                .map(|r| format!("WHEN {} THEN {}", r + 1, slot(r * n + c)))
                .collect();
            format!("CASE rw.k {} END", arms.join(" "))
        })
        .collect();
    format!(
        "SELECT {}, rw.k,\n  {}\nFROM (SELECT t.*, COUNT(*) OVER () AS solutions FROM (\n    {}\n  ) t) s\nCROSS JOIN {}\nWHERE s.solutions = 1",
        p.key,
        columns.join(",\n  "),
        dialect.limit(&search, 2).replace('\n', "\n  "),
        numbers(f, n, "rw"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::{MariaDb, Sqlite};

    fn rows(puzzle: i64, line: &str) -> Vec<Vec<Value>> {
        line.chars()
            .enumerate()
            .filter_map(|(i, ch)| ch.to_digit(10).filter(|&d| d > 0).map(|d| (i, d)))
            .map(|(i, d)| {
                vec![
                    Value::Int(puzzle),
                    Value::Int(i as i64 / 9 + 1),
                    Value::Int(i as i64 % 9 + 1),
                    Value::Int(i64::from(d)),
                ]
            })
            .collect()
    }

    #[test]
    fn empty_cells_become_joins_and_units_become_inequalities() {
        // The SQLite docs' solution with r1c1 (5) and r1c2 (3) blanked.
        let line =
            "..4678912672195348198342567859761423426853791713924856961537284287419635345286179";
        let p = &read_puzzles(&Sqlite, &rows(7, line), 3)[0];
        let sql = puzzle_select(spelling(&Sqlite).expect("sqlite"), &Sqlite, p, 3);
        assert!(
            sql.contains("FROM sdk_k d1\n      CROSS JOIN sdk_k d2"),
            "{sql}"
        );
        assert!(sql.contains("d1.k <> d2.k"), "{sql}");
        // r1c1 sees 4,6,7,8,9,1,2 in its row, 6,1,8,4,7,9,2,3 in its column, 7,2,1,9,8 in its box.
        assert!(
            sql.contains("d1.k NOT IN (1, 2, 3, 4, 6, 7, 8, 9)"),
            "{sql}"
        );
        assert!(sql.starts_with("SELECT 7, rw.k,"), "{sql}");
    }

    #[test]
    fn a_puzzle_over_the_join_limit_is_refused_by_name_and_count() {
        // A 17-given puzzle leaves 64 empty cells: more than MariaDB's 61-table join holds.
        let seventeen =
            "...8.1..........435............7.8........1...2..3....6......75..34........2..6..";
        let job_path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/sudoku_sql.yaml");
        let job = crate::config::load_job(&job_path).expect("bundled job");
        let shape = TableShape {
            table: job.target.table.clone(),
            entity: Vec::new(),
            columns: (1..=9)
                .map(|c| crate::dialect::PivotColumn::text(&c.to_string(), &c.to_string()))
                .collect(),
            column_type: "INTEGER".into(),
            primary_key: false,
        };
        let source = crate::plan::source_query(&job);
        let err = solve_into(&MariaDb, &source, &shape, 3, &rows(42, seventeen))
            .expect_err("64 empty cells exceed 61 tables")
            .to_string();
        assert!(err.contains("puzzle 42 has 64 empty cells"), "{err}");
        assert!(err.contains("at most 61 empty cells"), "{err}");
    }
}
