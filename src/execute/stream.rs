//! The streaming pivot: ordered `(entity…, attribute, value)` rows in, wide rows out.
//!
//! One hash lookup per row (attribute → column) instead of one CASE per column per row, and
//! memory bounded by one entity's row plus one load batch, whatever the source size.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::backend::RowPipeline;
use crate::config::Aggregate;
use crate::dialect::{Dialect, TableShape};
use crate::error::{Error, Result};
use crate::transform::{KvRow, Transform};
use crate::value::Value;

/// Conflicting pairs listed in an `aggregate: error` message.
const CONFLICT_SAMPLES: usize = 10;

pub struct Pivoter {
    dialect: &'static dyn Dialect,
    entity_width: usize,
    /// Attribute name → (table, column position within that table's row).
    index: HashMap<String, (usize, usize)>,
    widths: Vec<usize>,
    aggregate: Aggregate,
    transforms: Vec<Box<dyn Transform>>,
    current: Option<Vec<Value>>,
    /// Per table, the current entity's cells (entity values excluded).
    cells: Vec<Vec<Value>>,
    conflicted: Vec<Vec<bool>>,
    ready: Vec<Vec<Vec<Value>>>,
    ready_rows: usize,
    pub stats: StreamStats,
}

/// What the stream saw and produced: the expected side of verification.
#[derive(Debug, Clone, Default)]
pub struct StreamStats {
    pub source_rows: u64,
    pub entities: u64,
    /// Non-null cells per table per column.
    pub cells: Vec<Vec<u64>>,
    pub conflicts: u64,
    pub conflict_samples: Vec<String>,
    /// Rows whose attribute is not a planned column (excluded, or empty names skipped).
    pub dropped_rows: u64,
}

impl Pivoter {
    pub fn new(
        dialect: &'static dyn Dialect,
        entity_width: usize,
        tables: &[TableShape],
        aggregate: Aggregate,
        transforms: Vec<Box<dyn Transform>>,
    ) -> Pivoter {
        let mut index = HashMap::new();
        for (t, shape) in tables.iter().enumerate() {
            for (c, col) in shape.columns.iter().enumerate() {
                index.insert(col.attribute.clone(), (t, c));
            }
        }
        let widths: Vec<usize> = tables.iter().map(|t| t.columns.len()).collect();
        Pivoter {
            dialect,
            entity_width,
            index,
            cells: widths.iter().map(|&w| vec![Value::Null; w]).collect(),
            conflicted: widths.iter().map(|&w| vec![false; w]).collect(),
            ready: vec![Vec::new(); widths.len()],
            stats: StreamStats {
                cells: widths.iter().map(|&w| vec![0; w]).collect(),
                ..StreamStats::default()
            },
            widths,
            aggregate,
            transforms,
            current: None,
            ready_rows: 0,
        }
    }

    /// The transforms, handed back after the stream for their reports and side tables.
    pub fn take_transforms(&mut self) -> Vec<Box<dyn Transform>> {
        std::mem::take(&mut self.transforms)
    }

    fn decode(&self, mut row: Vec<Value>) -> Result<KvRow> {
        if row.len() != self.entity_width + 2 {
            return Err(Error::Job(format!(
                "stream: expected {} columns per source row, got {}",
                self.entity_width + 2,
                row.len()
            )));
        }
        let value = row.pop().unwrap_or(Value::Null);
        let attribute = match row.pop().unwrap_or(Value::Null) {
            Value::Null => String::new(),
            Value::Bytes(b) => String::from_utf8(b)
                .map_err(|e| Error::Job(format!("an attribute name is not valid UTF-8: {e}")))?,
            other => other.as_text().unwrap_or_default(),
        };
        Ok(KvRow {
            entity: row,
            attribute: self.dialect.decode_attribute_key(attribute),
            value,
        })
    }

    /// Run `row` through the transforms from `stage` on, then into the pivot.
    fn feed(&mut self, stage: usize, row: KvRow) -> Result<()> {
        if stage == self.transforms.len() {
            return self.pivot(row);
        }
        let mut out = Vec::new();
        self.transforms[stage].push(row, &mut out)?;
        for r in out {
            self.feed(stage + 1, r)?;
        }
        Ok(())
    }

    fn pivot(&mut self, row: KvRow) -> Result<()> {
        if self.current.as_ref() != Some(&row.entity) {
            self.emit_current();
            self.current = Some(row.entity.clone());
            self.stats.entities += 1;
        }
        let Some(&(t, c)) = self.index.get(&row.attribute) else {
            self.stats.dropped_rows += 1;
            return Ok(());
        };
        if row.value.is_null() {
            return Ok(());
        }
        let cell = &mut self.cells[t][c];
        if cell.is_null() {
            *cell = row.value;
            return Ok(());
        }
        if *cell != row.value && !self.conflicted[t][c] {
            self.conflicted[t][c] = true;
            self.stats.conflicts += 1;
            if self.stats.conflict_samples.len() < CONFLICT_SAMPLES {
                let key: Vec<String> = row.entity.iter().map(Value::to_string).collect();
                self.stats.conflict_samples.push(format!(
                    "({}) '{}': '{}' vs '{}'",
                    key.join(", "),
                    row.attribute,
                    cell,
                    row.value
                ));
            }
        }
        let replace = match self.aggregate {
            Aggregate::Max | Aggregate::Error => compare(&row.value, cell) == Ordering::Greater,
            Aggregate::Min => compare(&row.value, cell) == Ordering::Less,
        };
        if replace {
            *cell = row.value;
        }
        Ok(())
    }

    fn emit_current(&mut self) {
        let Some(entity) = self.current.take() else {
            return;
        };
        for t in 0..self.widths.len() {
            let mut wide = Vec::with_capacity(self.entity_width + self.widths[t]);
            wide.extend(entity.iter().cloned());
            for (c, cell) in self.cells[t].iter_mut().enumerate() {
                if !cell.is_null() {
                    self.stats.cells[t][c] += 1;
                }
                wide.push(std::mem::replace(cell, Value::Null));
            }
            self.conflicted[t].iter_mut().for_each(|f| *f = false);
            self.ready[t].push(wide);
        }
        self.ready_rows += 1;
    }
}

/// Numbers by value, everything else by its text: the order `aggregate: max/min` keeps.
fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Float(x), Value::Float(y)) => x.total_cmp(y),
        (Value::Int(x), Value::Float(y)) => (*x as f64).total_cmp(y),
        (Value::Float(x), Value::Int(y)) => x.total_cmp(&(*y as f64)),
        _ => a.as_text().cmp(&b.as_text()),
    }
}

impl RowPipeline for Pivoter {
    fn push(&mut self, row: Vec<Value>) -> Result<()> {
        self.stats.source_rows += 1;
        let row = self.decode(row)?;
        self.feed(0, row)
    }

    fn finish(&mut self) -> Result<()> {
        for stage in 0..self.transforms.len() {
            let mut out = Vec::new();
            self.transforms[stage].finish(&mut out)?;
            for r in out {
                self.feed(stage + 1, r)?;
            }
        }
        self.emit_current();
        if self.aggregate == Aggregate::Error && self.stats.conflicts > 0 {
            return Err(conflict_error(
                self.stats.conflicts,
                &self.stats.conflict_samples,
            ));
        }
        Ok(())
    }

    fn take_ready(&mut self) -> Vec<Vec<Vec<Value>>> {
        self.ready_rows = 0;
        self.ready.iter_mut().map(std::mem::take).collect()
    }

    fn ready_rows(&self) -> usize {
        self.ready_rows
    }
}

/// The `aggregate: error` refusal, listing the first conflicting pairs.
pub fn conflict_error(count: u64, samples: &[String]) -> Error {
    Error::Job(format!(
        "{count} entity/attribute pairs have conflicting values (pivot.aggregate: error); first {}: {}",
        samples.len(),
        samples.join("; ")
    ))
}
