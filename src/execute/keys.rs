//! The entity key as primary key, seen from the load: refuse NULL keys before anything is
//! written, and turn the database's constraint errors into one line naming the table and its
//! key columns (the database's own words follow), known by the error's kind, not its text.

use super::write::Table;
use crate::dialect::ddl;
use crate::dialect::Dialect;
use crate::error::{Error, Result};

/// A keyed table cannot take a NULL entity key: say so before anything is written, naming
/// the table and the column, rather than letting the constraint fail mid-load.
pub(super) fn refuse_null_keys(
    dialect: &dyn Dialect,
    out: &Table,
    null_keys: &[u64],
) -> Result<()> {
    if out.append
        || !out.shape.primary_key
        || ddl::primary_key_problem(dialect, &out.shape.entity).is_some()
    {
        return Ok(());
    }
    let Some((column, n)) = out.shape.entity.iter().zip(null_keys).find(|(_, &n)| n > 0) else {
        return Ok(());
    };
    Err(Error::Job(format!(
        "entity column {} is NULL in {n} source rows, but it is part of the primary key of {}; \
         nothing was written: filter those rows out (source.where: … IS NOT NULL)",
        column.name, out.shape.table
    )))
}

/// Turn a primary-key violation during the load into one line naming the table and its key
/// columns (the database's own words follow); other errors pass through unchanged. The
/// violation is known by the kind the backend read from the server's error code, so the
/// explanation appears whatever language the server speaks.
pub(super) fn explain_key_violation(
    err: Error,
    dialect: &dyn Dialect,
    targets: &[Table],
    current: Option<&Table>,
) -> Error {
    if !err.kind().is_key_violation() {
        return err;
    }
    let text = err.to_string();
    let keyed = |o: &&Table| {
        o.shape.primary_key && ddl::primary_key_problem(dialect, &o.shape.entity).is_none()
    };
    let named = targets
        .iter()
        .filter(keyed)
        .find(|o| text.contains(&o.build.to_string()) || text.contains(&o.build.name()));
    let Some(out) = current
        .filter(keyed)
        .or(named)
        .or(targets.iter().find(keyed))
    else {
        return err;
    };
    let columns: Vec<&str> = out.shape.entity.iter().map(|e| e.name.as_str()).collect();
    let what = if out.append {
        "an entity already in the table, or a NULL or repeated entity key"
    } else {
        "a NULL or repeated entity key (keys the database's collation treats as equal count as repeated)"
    };
    Error::Job(format!(
        "{} has primary key ({}) and the load brought {what}: {}",
        out.shape.table,
        columns.join(", "),
        text.lines().next().unwrap_or_default()
    ))
}
