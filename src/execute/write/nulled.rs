//! A merge's cells that go from a value to NULL: counted and sampled for the report, and,
//! where `source.where` may have been meant as the delta (no `source.changed`), refused when
//! the source still holds them outside `where` — the old delta pattern that wiped every
//! attribute it did not read.

use std::collections::HashMap;

use crate::config::{Job, TableRef};
use crate::dialect::merge;
use crate::dialect::SourceQuery;
use crate::dialect::{Dialect, TableShape};
use crate::error::{Error, Result};
use crate::plan::naming::columns_of_unplanned;
use crate::report::{NulledCell, NULLED_SAMPLE};

use super::super::session::Session;
use super::merge::MergePlan;
use crate::value::row_counts;

/// Before the upsert: the cells of touched entities that go from a value to NULL, counted,
/// a sample for the report, and under [`MergePlan::guard`] the refusal of any the source
/// still holds outside `where`.
pub(super) async fn nulled(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    (into, staging): (&TableRef, &TableRef),
    plan: &MergePlan,
    shape: &TableShape,
) -> Result<(u64, Vec<NulledCell>)> {
    let columns = plan.nulled_columns(dialect);
    if columns.is_empty() {
        return Ok((0, Vec::new()));
    }
    let counts = session
        .query_in_load(
            &merge::nulled_counts(dialect, into, staging, &plan.keys, &columns),
            "merge: cells of the source's entities that go from a value to NULL",
        )
        .await?
        .map(|r| row_counts(&r))
        .unwrap_or_default();
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return Ok((0, Vec::new()));
    }
    let held = match &plan.scope_guard {
        Some((job, scope)) => {
            outside_scope(session, dialect, (job, scope), shape, plan.existing()).await?
        }
        None => HashMap::new(),
    };
    let mut sample = Vec::new();
    for (column, n) in columns.iter().zip(&counts) {
        let guarded = held.keys().any(|(_, c)| *c == dialect.ident_key(&column.0));
        if *n == 0 || (sample.len() >= NULLED_SAMPLE && !guarded) {
            continue;
        }
        let sql = merge::nulled_cells(dialect, into, staging, &plan.keys, column);
        let sql = match guarded {
            true => sql,
            false => dialect.limit(&sql, (NULLED_SAMPLE - sample.len()) as u64),
        };
        let rows = session
            .query_in_load(&sql, "merge: cells that go from a value to NULL")
            .await?
            .unwrap_or_default();
        for row in rows {
            let mut texts: Vec<String> = row
                .iter()
                .map(|v| v.as_text().unwrap_or_default())
                .collect();
            let previous = texts.pop().unwrap_or_default();
            let cell = (texts.join("\u{1f}"), dialect.ident_key(&column.0));
            if let Some((attribute, kept)) = held.get(&cell) {
                return Err(Error::Job(format!(
                    "merge refused: column {} of entity {} holds {} and would become NULL, but the source still holds {} for attribute {} outside source.where; in a merge, where is the scope the job reads: write the delta as source.changed: (each entity it names is re-pivoted from all its rows in the scope), or set changed: \"1 = 1\" to re-pivot every entity in the scope",
                    column.0,
                    texts.join(", "),
                    crate::error::shown(&previous),
                    crate::error::shown(kept),
                    crate::error::shown(attribute),
                )));
            }
            if sample.len() < NULLED_SAMPLE {
                sample.push(NulledCell {
                    entity: texts,
                    column: column.0.clone(),
                    previous,
                });
            }
        }
    }
    Ok((total, sample))
}

/// The cells the source holds outside `where` for entities in it, where the scope has no
/// value: by (entity texts, column key), the attribute and the value held.
async fn outside_scope(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    (job, scope): (&Job, &SourceQuery),
    shape: &TableShape,
    existing: &[String],
) -> Result<HashMap<(String, String), (String, String)>> {
    let source = session.source_dialect();
    let rows = session
        .query_source_in_load(
            &merge::outside_scope(source, scope),
            "merge guard: values the source holds outside source.where for the entities it selects",
        )
        .await?
        .unwrap_or_default();
    let keys = scope.entity.len();
    let mut cells = Vec::new();
    for row in rows {
        let texts: Vec<String> = row
            .iter()
            .map(|v| v.as_text().unwrap_or_default())
            .collect();
        let (Some(raw), Some(value)) = (row.get(keys), texts.get(keys + 1)) else {
            continue;
        };
        // The attribute as the engine keys it (SQL Server appends a sentinel), decoded.
        let Ok(Some(attribute)) = crate::plan::attribute_name(source, raw.clone()) else {
            continue;
        };
        cells.push((texts[..keys].join("\u{1f}"), attribute, value.clone()));
    }
    // An attribute the scope has for other entities has its planned column; one it lacks
    // entirely has the column a run that read it would give it in this target.
    let planned = |a: &str| shape.columns.iter().find(|c| c.attribute == a);
    let mut unplanned: Vec<String> = cells
        .iter()
        .filter(|(_, a, _)| planned(a).is_none())
        .map(|(_, a, _)| a.clone())
        .collect();
    unplanned.sort();
    unplanned.dedup();
    let named = columns_of_unplanned(job, dialect, shape, existing, &unplanned)?;
    let mut held = HashMap::new();
    for (entity, attribute, value) in cells {
        let column = match planned(&attribute) {
            Some(c) => c.column.clone(),
            None => match unplanned.binary_search(&attribute) {
                Ok(i) => named[i].clone(),
                Err(_) => continue, // every unplanned attribute was named above
            },
        };
        held.insert((entity, dialect.ident_key(&column)), (attribute, value));
    }
    Ok(held)
}
