//! `sudoku_solve: { engine: sql }` and `{ engine: sql_join }`: the puzzles are solved inside
//! the database instead of by the streaming transform, for servers that must do the work
//! in-database and to compare the two. The statement is [`super::sql`]'s recursive CTE or
//! [`super::join`]'s generated joins, pivoted into the grid; `execute` runs it like any
//! [`InDatabase`] transform.

use super::{join, sql, SudokuTransform};
use crate::config::{SudokuSolveSpec, TableRef};
use crate::dialect::{Dialect, SourceQuery, TableShape};
use crate::error::{Error, Result};
use crate::plan::Discovery;
use crate::transform::{InDatabase, Transform};
use crate::value::Value;

/// How messages name the in-database engines.
pub const IN_DATABASE: &str = "sudoku_solve with engine: sql";

pub struct SolveInDatabase {
    spec: SudokuSolveSpec,
    target: TableRef,
    box_size: usize,
    side: usize,
    /// engine: sql_join: the givens its SELECTs are generated from.
    givens: Option<Vec<Vec<Value>>>,
}

impl SolveInDatabase {
    /// `target` names the default status table, as for the streaming transform.
    pub fn new(spec: SudokuSolveSpec, target: &TableRef) -> SolveInDatabase {
        SolveInDatabase {
            spec,
            target: target.clone(),
            box_size: 3,
            side: 9,
            givens: None,
        }
    }
}

impl InDatabase for SolveInDatabase {
    fn label(&self) -> &'static str {
        IN_DATABASE
    }

    fn strategy_note(&self) -> &'static str {
        match self.spec.sql_join {
            true => "sudoku_solve engine: sql_join: one generated join per puzzle solves and pivots in the database",
            false => "sudoku_solve engine: sql: a recursive CTE solves and pivots in the database",
        }
    }

    /// Every column 1..n, as the streaming transform declares them.
    fn attributes(&mut self, discovery: Discovery) -> Result<Discovery> {
        let discovery =
            SudokuTransform::new(self.spec.clone(), &self.target).attributes(discovery)?;
        self.side = discovery.attributes.len();
        self.box_size = (2..=5).find(|b| b * b == self.side).unwrap_or(3);
        Ok(discovery)
    }

    /// engine: sql_join generates its SELECTs from the givens: read them first.
    fn read_first(&self, dialect: &dyn Dialect, source: &SourceQuery) -> Result<Option<String>> {
        match self.spec.sql_join {
            true => join::givens_query(dialect, source).map(Some),
            false => Ok(None),
        }
    }

    /// Refuse puzzles past the join limit before anything is written.
    fn take_read(&mut self, dialect: &dyn Dialect, rows: Vec<Vec<Value>>) -> Result<()> {
        join::check_join_limit(dialect, &rows, self.box_size)?;
        self.givens = Some(rows);
        Ok(())
    }

    fn count_query(&self, source: &SourceQuery) -> String {
        sql::count_puzzles(source)
    }

    /// One `INSERT … SELECT`: the recursive CTE, or the generated joins, pivoted.
    fn fill(
        &self,
        dialect: &dyn Dialect,
        source: &SourceQuery,
        shape: &TableShape,
    ) -> Result<String> {
        match &self.givens {
            Some(givens) => join::solve_into(dialect, source, shape, self.box_size, givens),
            None => sql::solve_into(dialect, source, shape, self.box_size),
        }
    }

    fn verify_note(&self) -> &'static str {
        "verify: every solved puzzle wrote n full rows (rows, then non-null cells per column)"
    }

    /// A solved grid is whole: the new rows come in multiples of n and no cell is NULL.
    fn verify(&self, shape: &TableShape, rows: &[Vec<Value>], before: u64) -> Result<(u64, u64)> {
        let side = self.side;
        let counts: Vec<u64> = rows
            .first()
            .map(|r| {
                r.iter()
                    .map(|v| v.as_i64().unwrap_or(0).max(0) as u64)
                    .collect()
            })
            .unwrap_or_default();
        let total = counts.first().copied().unwrap_or(0);
        let new_rows = total.saturating_sub(before);
        let whole = counts.iter().skip(1).all(|&c| c == total);
        if new_rows % side as u64 != 0 || !whole || counts.len() != side + 1 {
            return Err(Error::Job(format!(
                "verification failed: {} holds {new_rows} new rows and column counts {:?}; every solved puzzle must give {side} full rows",
                shape.table,
                &counts[1.min(counts.len())..]
            )));
        }
        Ok((new_rows, new_rows * side as u64))
    }

    fn report(&self, rows_written: u64, puzzles: u64) -> serde_json::Value {
        let solved = rows_written / self.side as u64;
        serde_json::json!({
            "transform": "sudoku_solve",
            "engine": if self.spec.sql_join { "sql_join" } else { "sql" },
            "box_size": self.box_size,
            "puzzles": puzzles,
            "solved": solved,
            "not_written": puzzles.saturating_sub(solved),
        })
    }
}
