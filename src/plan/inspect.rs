//! `eavpivot inspect`: a read-only survey of a source before migrating it, from one scan of
//! the key–value rows ordered by entity ([`crate::dialect::query::ordered_rows`]).
//!
//! Ordered by entity, every per-entity fact (entities with a value, entities whose values
//! conflict, the fullest entity) is known when the entity's run ends, with memory for one
//! entity only; every per-value fact (widths, the type ladder) comes from [`Survey`]. The
//! result also feeds [`super::build_plan`] as a [`Discovery`], so the plan shown is the one
//! `run` would make.

use std::collections::HashMap;

use serde::Serialize;

use super::capacity::RowEstimate;
use super::types::Survey;
use super::{Discovered, Discovery};
use crate::value::Value;

/// One attribute's figures.
#[derive(Debug, Clone, Default)]
pub struct AttributeCensus {
    pub name: String,
    /// Source rows with this name, and of those with a non-null value.
    pub rows: u64,
    pub values: u64,
    /// Entities with at least one non-null value; of those, entities with two different.
    pub entities: u64,
    pub conflicting: u64,
    pub survey: Survey,
}

/// Everything the scan counts.
#[derive(Debug, Default)]
pub struct Census {
    pub source_rows: u64,
    pub entities: u64,
    /// Rows with a NULL or empty attribute name.
    pub empty_name_rows: u64,
    /// Rows with a NULL in any entity column.
    pub null_key_rows: u64,
    /// The most attributes with a value any one entity has.
    pub fullest_entity: u64,
    pub attributes: Vec<AttributeCensus>,
    index: HashMap<String, usize>,
    current: Option<Vec<Value>>,
    /// The current entity's attributes: the first value seen and whether another differed.
    seen: HashMap<usize, (Value, bool)>,
}

impl Census {
    /// One source row: entity key, decoded attribute name (None when NULL), value.
    pub fn add(&mut self, entity: Vec<Value>, attribute: Option<String>, value: Value) {
        self.source_rows += 1;
        if entity.iter().any(Value::is_null) {
            self.null_key_rows += 1;
        }
        if self.current.as_ref() != Some(&entity) {
            self.end_entity();
            self.entities += 1;
            self.current = Some(entity);
        }
        let Some(name) = attribute.filter(|n| !n.is_empty()) else {
            self.empty_name_rows += 1;
            return;
        };
        let i = match self.index.get(&name) {
            Some(&i) => i,
            None => {
                self.index.insert(name.clone(), self.attributes.len());
                self.attributes.push(AttributeCensus {
                    name,
                    ..AttributeCensus::default()
                });
                self.attributes.len() - 1
            }
        };
        let attribute = &mut self.attributes[i];
        attribute.rows += 1;
        if value.is_null() {
            return;
        }
        attribute.values += 1;
        attribute
            .survey
            .observe(&value, self.current.as_deref().unwrap_or(&[]));
        match self.seen.get_mut(&i) {
            None => {
                self.seen.insert(i, (value, false));
            }
            Some((first, conflicted)) => *conflicted |= *first != value,
        }
    }

    /// Close the last entity; call once after the scan.
    pub fn finish(&mut self) {
        self.end_entity();
        self.current = None;
    }

    fn end_entity(&mut self) {
        self.fullest_entity = self.fullest_entity.max(self.seen.len() as u64);
        for (i, (_, conflicted)) in self.seen.drain() {
            let a = &mut self.attributes[i];
            a.entities += 1;
            a.conflicting += u64::from(conflicted);
        }
    }

    /// Entity/attribute pairs holding more than one distinct value.
    pub fn conflicts(&self) -> u64 {
        self.attributes.iter().map(|a| a.conflicting).sum()
    }

    /// The census as discovery would have found it, for the plan.
    pub fn discovery(&self) -> Discovery {
        Discovery {
            attributes: self
                .attributes
                .iter()
                .map(|a| Discovered {
                    name: a.name.clone(),
                    rows: a.rows,
                    values: a.values,
                    widths: a.survey.min_bytes.map(|lo| (lo, a.survey.max_bytes)),
                })
                .collect(),
            empty_name_rows: self.empty_name_rows,
            null_keys: Vec::new(),
            max_cells_per_entity: Some(self.fullest_entity),
            surveys: self
                .attributes
                .iter()
                .map(|a| (a.name.clone(), a.survey.clone()))
                .collect(),
        }
    }
}

/// The survey as `inspect` reports it (`--json` is this, serialized).
#[derive(Debug, Clone, Serialize)]
pub struct Inspection {
    pub job: String,
    pub dialect: String,
    pub connection: String,
    pub source_rows: u64,
    pub entities: u64,
    pub attributes_found: usize,
    pub empty_name_rows: u64,
    pub null_key_rows: u64,
    pub conflicting_pairs: u64,
    pub fullest_entity: u64,
    pub plan: PlanSummary,
    pub attributes: Vec<AttributeReport>,
}

/// The plan `run` would make on this connection's database.
#[derive(Debug, Clone, Serialize, Default)]
pub struct PlanSummary {
    pub tables: Vec<TableSummary>,
    pub strategy: Option<String>,
    /// What would go wrong or differ from the job as written (the plan's own refusal too).
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TableSummary {
    pub table: String,
    pub columns: usize,
    /// Row size in bytes against the database's limit, where it has one.
    pub row: Option<RowEstimate>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AttributeReport {
    pub attribute: String,
    /// The column it becomes (None: excluded, or the plan was refused).
    pub column: Option<String>,
    pub renamed_because: Option<String>,
    pub table: Option<String>,
    pub rows: u64,
    pub values: u64,
    pub entities: u64,
    /// Entities with a value, in percent of all entities.
    pub fill_percent: f64,
    pub conflicting_entities: u64,
    pub min_bytes: Option<u64>,
    pub max_bytes: u64,
    pub min_chars: Option<u64>,
    pub max_chars: u64,
    /// The ladder's type in this database, and why (the value that forced it wider).
    #[serde(rename = "type")]
    pub sql_type: String,
    pub type_reason: String,
    /// Text although some values have a typed form (`N/A` among numbers, two scales).
    pub mixed: bool,
}

impl AttributeReport {
    /// A problem worth listing before the full table: renamed, left out, conflicting, or
    /// kept as text by a few values among typed ones.
    pub fn is_problem(&self) -> bool {
        self.renamed_because.is_some()
            || self.conflicting_entities > 0
            || self.column.is_none()
            || self.mixed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(c: &mut Census, e: i64, a: Option<&str>, v: Option<&str>) {
        c.add(
            vec![Value::Int(e)],
            a.map(str::to_string),
            v.map_or(Value::Null, |v| Value::Text(v.into())),
        );
    }

    #[test]
    fn counts_entities_fill_and_conflicts_per_attribute() {
        let mut c = Census::default();
        row(&mut c, 1, Some("a"), Some("1"));
        row(&mut c, 1, Some("a"), Some("2"));
        row(&mut c, 1, Some("b"), None);
        row(&mut c, 2, Some("a"), Some("1"));
        row(&mut c, 2, Some("a"), Some("1"));
        row(&mut c, 2, None, Some("x"));
        row(&mut c, 3, Some(""), Some("y"));
        row(&mut c, 3, Some("b"), Some("N/A"));
        c.finish();
        assert_eq!((c.source_rows, c.entities, c.empty_name_rows), (8, 3, 2));
        let a = &c.attributes[0];
        assert_eq!((a.rows, a.values, a.entities, a.conflicting), (4, 4, 2, 1));
        let b = &c.attributes[1];
        assert_eq!((b.rows, b.values, b.entities, b.conflicting), (2, 1, 1, 0));
        assert_eq!((c.conflicts(), c.fullest_entity), (1, 1));
        let d = c.discovery();
        assert_eq!(d.attributes[1].widths, Some((3, 3)));
        assert_eq!(d.max_cells_per_entity, Some(1));
    }
}
