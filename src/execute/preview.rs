//! Read the finished table back for display after a run: the queries are the dialect's
//! ([`crate::dialect::preview`]), the formatting is [`crate::report::Preview`]'s.

use crate::backend::Backend;
use crate::dialect::{preview, Dialect};
use crate::error::Result;
use crate::plan::Plan;
use crate::report::Preview;
use crate::value::{first_int, Value};

/// The first `n` rows of the plan's first table, and how many it holds.
pub async fn read(
    backend: &mut dyn Backend,
    dialect: &dyn Dialect,
    plan: &Plan,
    n: usize,
) -> Result<Preview> {
    let shape = &plan.tables[0];
    // The table as it is, not as this run planned it: a merge keeps columns the run has
    // no attribute for, in the table's own order. Header and values come from one list.
    let listed = backend.query(&dialect.table_columns(&shape.table)).await?;
    let mut header: Vec<String> = listed
        .iter()
        .filter_map(|r| r.first().and_then(Value::as_text))
        .collect();
    if header.is_empty() {
        header = shape
            .entity
            .iter()
            .map(|e| e.name.clone())
            .chain(shape.columns.iter().map(|c| c.column.clone()))
            .collect();
    }
    let rows = backend
        .query(&preview::first_rows(dialect, shape, &header, n as u64))
        .await?;
    let counted = backend.query(&preview::count_rows(&shape.table)).await?;
    Ok(Preview {
        table: shape.table.to_string(),
        header,
        rows,
        total_rows: first_int(&counted),
    })
}
