//! Built-in row transforms. They sit in the streaming path between the ordered scan and the
//! pivot: key–value rows in, key–value rows out, so any transform works with any backend,
//! any target and every check the engine makes.

pub mod map;
pub mod sudoku;

use crate::config::{Job, TableRef, TransformSpec};
use crate::error::{Error, Result};
use crate::plan::Discovery;
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

/// A companion table (e.g. the Sudoku status table), created and loaded in the same
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
                TransformSpec::SudokuSolve(spec) if spec.engine_sql => Err(Error::Usage(
                    "sudoku_solve with engine: sql runs in the database, not as a stream transform"
                        .into(),
                )),
                TransformSpec::SudokuSolve(spec) => Ok(Box::new(sudoku::SudokuTransform::new(
                    spec.clone(),
                    &job.target.table,
                ))),
            }
        })
        .collect()
}
