//! Built-in row transforms. They sit in the streaming path between the ordered scan and the
//! pivot: key–value rows in, key–value rows out, so any transform works with any backend,
//! any target and every check the engine makes.
//!
//! A transform may instead do its work inside the database ([`InDatabase`]): it builds the
//! SQL through the dialect's traits and data, and `execute` runs it, never knowing which
//! transform it is running.

pub mod map;
pub mod sudoku;

use crate::config::{Job, TableRef, TransformSpec};
use crate::dialect::{Dialect, SourceQuery, TableShape};
use crate::error::{Error, Result};
use crate::plan::{Discovery, PlanOptions};
use crate::value::Value;

/// One key–value row: the entity key's values, the attribute name, the value.
#[derive(Debug, Clone, PartialEq)]
pub struct KvRow {
    pub entity: Vec<Value>,
    pub attribute: String,
    pub value: Value,
}

/// A column of a companion table a transform writes beside the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SideType {
    Integer,
    Text,
}

/// A companion table (e.g. a solver's status table), created and loaded in the same
/// transaction as the target.
#[derive(Debug, Clone)]
pub struct SideTable {
    pub table: TableRef,
    pub columns: Vec<(String, SideType)>,
    pub rows: Vec<Vec<Value>>,
}

pub trait Transform: Send {
    fn name(&self) -> &'static str;

    /// The attributes the transform's output will carry, given what discovery found in the
    /// source (a solver that fills every cell declares all of them).
    fn attributes(&self, discovery: Discovery) -> Result<Discovery> {
        Ok(discovery)
    }

    /// Take one row (rows arrive in entity order); append any output rows to `out`.
    fn push(&mut self, row: KvRow, out: &mut Vec<KvRow>) -> Result<()>;

    /// The input is exhausted: emit whatever is still held.
    fn finish(&mut self, out: &mut Vec<KvRow>) -> Result<()>;

    /// A summary for the report (`--json` under `transforms`).
    fn report(&self) -> serde_json::Value {
        serde_json::Value::Null
    }

    /// Companion tables to write beside the target; called once, after `finish`.
    fn side_tables(&mut self) -> Vec<SideTable> {
        Vec::new()
    }

    /// Companion tables' names and columns, known before the load (for existence checks and
    /// `--dry-run`); their rows are empty here.
    fn side_table_shapes(&self) -> Vec<SideTable> {
        Vec::new()
    }
}

/// Build the job's transforms, in order.
pub fn build(job: &Job) -> Result<Vec<Box<dyn Transform>>> {
    job.transforms
        .iter()
        .map(|spec| -> Result<Box<dyn Transform>> {
            match spec {
                TransformSpec::Map { values, default } => Ok(Box::new(map::MapTransform::new(
                    values.clone(),
                    default.clone(),
                ))),
                TransformSpec::SudokuSolve(spec) if spec.engine_sql => Err(Error::Usage(format!(
                    "{} runs in the database, not as a stream transform",
                    sudoku::IN_DATABASE
                ))),
                TransformSpec::SudokuSolve(spec) => Ok(Box::new(sudoku::SudokuTransform::new(
                    spec.clone(),
                    &job.target.table,
                ))),
            }
        })
        .collect()
}

/// A transform that runs inside the database instead of in the stream: discovery and the
/// plan as usual, then, in one transaction, the target created and filled by the statement
/// this transform builds, and its check of what was written. The transform builds SQL text
/// only; `execute` runs it (the order: [`InDatabase::read_first`] and
/// [`InDatabase::take_read`] before anything is written, [`InDatabase::count_query`],
/// [`InDatabase::fill`], the target's counts, [`InDatabase::verify`],
/// [`InDatabase::report`]).
pub trait InDatabase: Send + Sync {
    /// How messages name it: `sudoku_solve with engine: sql`.
    fn label(&self) -> &'static str;

    /// Why the plan's strategy is the pushdown: the plan's strategy reason.
    fn strategy_note(&self) -> &'static str;

    /// The attributes the output will carry, given what discovery found in the source.
    fn attributes(&mut self, discovery: Discovery) -> Result<Discovery>;

    /// A read-only query whose rows [`InDatabase::fill`] is built from (None: none), read
    /// before anything is written.
    fn read_first(&self, _dialect: &dyn Dialect, _source: &SourceQuery) -> Result<Option<String>> {
        Ok(None)
    }

    /// The rows of [`InDatabase::read_first`]: refuse here what cannot be written.
    fn take_read(&mut self, _dialect: &dyn Dialect, _rows: Vec<Vec<Value>>) -> Result<()> {
        Ok(())
    }

    /// A read-only query giving one integer for the report (what the input holds).
    fn count_query(&self, source: &SourceQuery) -> String;

    /// The statement that fills `shape`, the target.
    fn fill(
        &self,
        dialect: &dyn Dialect,
        source: &SourceQuery,
        shape: &TableShape,
    ) -> Result<String>;

    /// What the verification query is for, as the dry run and errors show it.
    fn verify_note(&self) -> &'static str;

    /// Check the target after the fill: `counts` is the row of
    /// [`crate::dialect::ddl::count_table_cells`] (rows, then non-null cells per column),
    /// `before` the rows it held before. Returns rows and cells written.
    fn verify(&self, shape: &TableShape, counts: &[Vec<Value>], before: u64) -> Result<(u64, u64)>;

    /// The report object (`--json` under `transforms`), from the rows written and the
    /// [`InDatabase::count_query`] figure.
    fn report(&self, rows_written: u64, counted: u64) -> serde_json::Value;
}

/// The job's transform that runs in the database, if it has one.
pub fn in_database(job: &Job) -> Option<Box<dyn InDatabase>> {
    job.transforms.iter().find_map(|spec| match spec {
        TransformSpec::SudokuSolve(spec) if spec.engine_sql => Some(Box::new(
            sudoku::SolveInDatabase::new(spec.clone(), &job.target.table),
        )
            as Box<dyn InDatabase>),
        _ => None,
    })
}

/// `options` for planning `job`: with the strategy reason of a transform that runs in the
/// database (whose plan is always the pushdown).
pub fn plan_options(job: &Job, options: PlanOptions) -> PlanOptions {
    PlanOptions {
        in_database: in_database(job).map(|t| t.strategy_note()),
        ..options
    }
}

/// One transform's report object as one line, in the words of the transform that wrote it;
/// an object of no transform known here as `name: key value, …` rather than dropped.
pub fn sentence(t: &serde_json::Value) -> String {
    match t.get("transform").and_then(serde_json::Value::as_str) {
        Some("sudoku_solve") => sudoku::sentence(t),
        Some("map") => map::sentence(t),
        _ => crate::display::fields_sentence(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_read_as_sentences() {
        let t = serde_json::json!({"box_size":3,"engine":"rust","invalid":1,"multiple_solutions":1,
            "no_solution":1,"puzzles":6,"search_nodes":87,"solved":3,"status_table":"SUDOKU_GRID_status",
            "transform":"sudoku_solve","unsolved":[{"detail":"","puzzle":"4","status":"no_solution"},
            {"detail":"","puzzle":"5","status":"multiple_solutions"},
            {"detail":"value 5 appears twice in row 1 (r1c1 and r1c3)","puzzle":"6","status":"invalid"}]});
        assert_eq!(
            sentence(&t),
            "sudoku_solve: 6 puzzles — 3 solved, 1 no solution (4), 1 several solutions (5), \
             1 invalid (6: value 5 appears twice in row 1 (r1c1 and r1c3)); every verdict in SUDOKU_GRID_status"
        );
        let sql = serde_json::json!({"box_size":3,"engine":"sql","not_written":3,"puzzles":6,"solved":3,"transform":"sudoku_solve"});
        assert_eq!(
            sentence(&sql),
            "sudoku_solve in the database: 6 puzzles — 3 solved, 3 not written (no solution, several, or invalid)"
        );
        let map = serde_json::json!({"mapped":100,"transform":"map","unmapped":2});
        assert_eq!(sentence(&map), "map: 100 values mapped, 2 not in the table");
        let other = serde_json::json!({"transform":"trim","rows_changed":4});
        assert_eq!(sentence(&other), "trim: rows changed 4");
    }
}
