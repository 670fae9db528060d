//! `sudoku_solve` as a streaming transform: key–value givens `(puzzle, row) × col → value`
//! in, every cell of each solved grid out, so the engine pivots and loads the answers like
//! any other job's rows.
//!
//! Rows arrive ordered by entity, so one puzzle's givens are contiguous: the transform holds
//! one puzzle at a time and memory stays flat whatever the number of puzzles. Puzzles that
//! cannot be answered with certainty (no solution, several, invalid givens) are left out of
//! the grid and recorded, with the reason, in the companion status table and the report.

use std::cell::Cell;
use std::collections::BTreeMap;

use super::{classify, Grid, Status, MAX_BOX, MIN_BOX};
use crate::config::{SudokuSolveSpec, TableRef};
use crate::error::{Error, Result};
use crate::plan::{Discovered, Discovery};
use crate::transform::{KvRow, SideTable, SideType, Transform};
use crate::value::Value;

/// Unsolved puzzles listed by name in the report (all of them go to the status table).
const REPORTED_UNSOLVED: usize = 10;

/// One puzzle's verdict: a row of the status table.
#[derive(Debug, Clone)]
struct PuzzleStatus {
    puzzle: Value,
    status: Status,
    solutions: u32,
    nodes: u64,
    givens: usize,
    detail: String,
}

pub struct SudokuTransform {
    spec: SudokuSolveSpec,
    status_table: TableRef,
    /// Box size used for every puzzle: from the job, else from the discovered columns
    /// (a `Cell` because [`Transform::attributes`] only borrows the transform).
    box_size: Cell<usize>,
    current: Option<Value>,
    /// The current puzzle's givens: (row, col, value) as read, checked when it is complete.
    held: Vec<(i64, i64, Value)>,
    held_error: Option<String>,
    statuses: Vec<PuzzleStatus>,
}

impl SudokuTransform {
    /// `target` names the default status table (`<target>_status`).
    pub fn new(spec: SudokuSolveSpec, target: &TableRef) -> SudokuTransform {
        let status_table = spec
            .status_table
            .clone()
            .unwrap_or_else(|| target.with_suffix("_status"));
        let box_size = Cell::new(spec.box_size.unwrap_or(3));
        SudokuTransform {
            spec,
            status_table,
            box_size,
            current: None,
            held: Vec::new(),
            held_error: None,
            statuses: Vec::new(),
        }
    }

    /// Check, solve and emit the held puzzle.
    fn complete_puzzle(&mut self, out: &mut Vec<KvRow>) -> Result<()> {
        let Some(puzzle) = self.current.take() else {
            return Ok(());
        };
        let givens = std::mem::take(&mut self.held);
        let read_error = self.held_error.take();
        let checked = match read_error {
            Some(detail) => Err(detail),
            None => build_grid(self.box_size.get(), &givens),
        };
        let record = match checked {
            Err(detail) => PuzzleStatus {
                puzzle,
                status: Status::Invalid,
                solutions: 0,
                nodes: 0,
                givens: givens.len(),
                detail,
            },
            Ok(grid) => {
                let (status, outcome) = classify(&grid);
                // Only an invalid grid has a conflict to name; skip the scan otherwise.
                let conflict = (status == Status::Invalid)
                    .then(|| grid.first_conflict().map(|c| c.to_string()))
                    .flatten();
                if let (Status::Solved, Some(solution)) = (status, &outcome.first) {
                    Self::emit(&puzzle, solution, out);
                }
                PuzzleStatus {
                    puzzle,
                    status,
                    solutions: outcome.solutions.min(2),
                    nodes: outcome.nodes,
                    givens: grid.givens(),
                    detail: conflict.unwrap_or_default(),
                }
            }
        };
        if record.status != Status::Solved && self.spec.error_on_unsolved {
            return Err(Error::Job(format!(
                "sudoku_solve: puzzle {} is {}{} (on_unsolved: error)",
                record.puzzle,
                record.status,
                detail_suffix(&record.detail)
            )));
        }
        self.statuses.push(record);
        Ok(())
    }

    fn emit(puzzle: &Value, solution: &Grid, out: &mut Vec<KvRow>) {
        let side = solution.side();
        out.reserve(side * side);
        for (i, &v) in solution.cells().iter().enumerate() {
            out.push(KvRow {
                entity: vec![puzzle.clone(), Value::Int((i / side + 1) as i64)],
                attribute: (i % side + 1).to_string(),
                value: Value::Int(i64::from(v)),
            });
        }
    }

    fn count(&self, status: Status) -> usize {
        self.statuses.iter().filter(|s| s.status == status).count()
    }
}

fn detail_suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

fn column_names(box_size: usize) -> Vec<String> {
    (1..=box_size * box_size).map(|c| c.to_string()).collect()
}

/// The smallest supported box size whose side holds `n`.
fn box_for(n: u64) -> Option<usize> {
    (MIN_BOX..=MAX_BOX).find(|b| (b * b) as u64 >= n)
}

/// The grid of one puzzle's givens; `Err` says why the givens are invalid.
fn build_grid(box_size: usize, givens: &[(i64, i64, Value)]) -> Result<Grid, String> {
    let side = box_size * box_size;
    let mut cells = vec![0u8; side * side];
    for (row, col, value) in givens {
        if value.is_null() {
            continue;
        }
        let in_range = |x: i64| (1..=side as i64).contains(&x);
        if !in_range(*row) || !in_range(*col) {
            return Err(format!(
                "cell r{row}c{col} is outside the {side}×{side} grid"
            ));
        }
        let digit = match value.as_i64() {
            Some(d) if in_range(d) => d as u8,
            _ => {
                return Err(format!(
                    "value '{value}' at r{row}c{col} is not a digit 1..{side}"
                ))
            }
        };
        let cell = &mut cells[(*row as usize - 1) * side + (*col as usize - 1)];
        if *cell != 0 && *cell != digit {
            return Err(format!(
                "cell r{row}c{col} has two values, {} and {digit}",
                *cell
            ));
        }
        *cell = digit;
    }
    Grid::new(box_size, cells).map_err(|e| e.to_string())
}

impl Transform for SudokuTransform {
    fn name(&self) -> &'static str {
        "sudoku_solve"
    }

    /// Every column 1..n, whether or not any given uses it; the box size is the job's, else
    /// the smallest whose side holds the largest column number found.
    fn attributes(&self, discovery: Discovery) -> Result<Discovery> {
        let mut max_col = 0u64;
        for d in &discovery.attributes {
            let col: u64 = d.name.trim().parse().map_err(|_| {
                Error::Job(format!(
                    "sudoku_solve: attribute '{}' is not a column number",
                    d.name
                ))
            })?;
            max_col = max_col.max(col);
        }
        let box_size = match self.spec.box_size {
            Some(b) => b,
            None => box_for(max_col).ok_or_else(|| {
                Error::Job(format!(
                    "sudoku_solve: column {max_col} is beyond the largest grid (25×25)"
                ))
            })?,
        };
        let found: BTreeMap<String, &Discovered> = discovery
            .attributes
            .iter()
            .map(|d| (d.name.trim().to_string(), d))
            .collect();
        let attributes = column_names(box_size)
            .into_iter()
            .map(|name| Discovered {
                rows: found.get(&name).map_or(0, |d| d.rows),
                values: found.get(&name).map_or(0, |d| d.values),
                // The solver writes its own digits: the source's widths say nothing.
                widths: None,
                name,
            })
            .collect();
        self.box_size.set(box_size);
        Ok(Discovery {
            attributes,
            ..discovery
        })
    }

    fn push(&mut self, row: KvRow, out: &mut Vec<KvRow>) -> Result<()> {
        let Some(puzzle) = row.entity.first() else {
            return Err(Error::Job(
                "sudoku_solve: the entity needs the puzzle key first, then the row".into(),
            ));
        };
        if self.current.as_ref() != Some(puzzle) {
            self.complete_puzzle(out)?;
            self.current = Some(puzzle.clone());
        }
        let r = row.entity.get(1).and_then(Value::as_i64);
        let c = row.attribute.trim().parse::<i64>().ok();
        match (r, c) {
            (Some(r), Some(c)) => self.held.push((r, c, row.value)),
            _ if self.held_error.is_some() => {}
            _ => {
                let r = row.entity.get(1).map_or("missing".into(), Value::to_string);
                self.held_error = Some(format!(
                    "row '{r}', column '{}' is not a cell position",
                    row.attribute
                ));
            }
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<KvRow>) -> Result<()> {
        self.complete_puzzle(out)
    }

    fn report(&self) -> serde_json::Value {
        let unsolved: Vec<serde_json::Value> = self
            .statuses
            .iter()
            .filter(|s| s.status != Status::Solved)
            .take(REPORTED_UNSOLVED)
            .map(|s| {
                serde_json::json!({
                    "puzzle": s.puzzle.to_string(),
                    "status": s.status.as_str(),
                    "detail": s.detail,
                })
            })
            .collect();
        serde_json::json!({
            "transform": "sudoku_solve",
            "engine": "rust",
            "box_size": self.box_size.get(),
            "puzzles": self.statuses.len(),
            "solved": self.count(Status::Solved),
            "no_solution": self.count(Status::NoSolution),
            "multiple_solutions": self.count(Status::MultipleSolutions),
            "invalid": self.count(Status::Invalid),
            "search_nodes": self.statuses.iter().map(|s| s.nodes).sum::<u64>(),
            "status_table": self.status_table.to_string(),
            "unsolved": unsolved,
        })
    }

    fn side_tables(&mut self) -> Vec<SideTable> {
        let mut table = self.status_shape();
        table.rows = std::mem::take(&mut self.statuses)
            .into_iter()
            .map(|s| {
                vec![
                    // Text, so that any puzzle key type fits the one declared column type.
                    Value::Text(s.puzzle.to_string()),
                    Value::Text(s.status.as_str().to_string()),
                    Value::Int(i64::from(s.solutions)),
                    Value::Int(s.nodes.min(i64::MAX as u64) as i64),
                    Value::Int(s.givens as i64),
                    match s.detail.is_empty() {
                        true => Value::Null,
                        false => Value::Text(s.detail),
                    },
                ]
            })
            .collect();
        vec![table]
    }

    fn side_table_shapes(&self) -> Vec<SideTable> {
        vec![self.status_shape()]
    }
}

impl SudokuTransform {
    fn status_shape(&self) -> SideTable {
        let columns = [
            ("puzzle", SideType::Text),
            ("status", SideType::Text),
            ("solutions", SideType::Integer),
            ("search_nodes", SideType::Integer),
            ("givens", SideType::Integer),
            ("detail", SideType::Text),
        ];
        SideTable {
            table: self.status_table.clone(),
            columns: columns
                .into_iter()
                .map(|(n, t)| (n.to_string(), t))
                .collect(),
            rows: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests;
