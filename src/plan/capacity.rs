//! Will the target fit? Nominal column limits are not the real ones: a row must fit in its
//! page (PostgreSQL 8,160 bytes, InnoDB 8,126, SQL Server 8,060), and long values moved
//! off-row still leave a pointer behind. This module turns a dialect's [`RowBudget`] and
//! column limit into two numbers, before any DDL:
//!
//! - the **hard** limit: columns per table beyond which failure is certain (the column
//!   count, and InnoDB's per-column charge at CREATE TABLE), which refuses the job up front;
//! - the **safe** width: columns per table that fit even if every cell is non-null and long,
//!   which is what `split: auto` uses.
//!
//! Between the two, failure depends on the data (how many cells an entity has, how long they
//! are); the load then fails inside its transaction and rolls back.

use crate::config::Split;
use crate::dialect::{Dialect, EntityColumn, RowBudget};
use crate::error::{Error, Result};

/// Per-table column counts for one dialect, entity columns excluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    /// More pivoted columns than this in one table cannot work.
    pub hard: usize,
    /// This many pivoted columns always fit, whatever the data.
    pub safe: usize,
}

/// The capacity of one target table with these entity columns and pivoted column type.
pub fn capacity(dialect: &dyn Dialect, entity: &[EntityColumn], column_type: &str) -> Capacity {
    let by_count = dialect
        .max_columns()
        .map_or(usize::MAX, |m| m.saturating_sub(entity.len()));
    let Some(budget) = dialect.row_budget() else {
        return Capacity {
            hard: by_count,
            safe: by_count,
        };
    };
    let entity_bytes: usize = entity.iter().map(|e| entity_cost(&budget, e)).sum();
    let by_bytes = fitting_columns(&budget, entity.len(), entity_bytes);
    let safe = by_count.min(by_bytes);
    let hard = if budget.checked_at_create && is_long_type(column_type) {
        safe
    } else {
        by_count
    };
    Capacity { hard, safe }
}

/// The most pivoted columns whose worst-case row fits `budget`.
fn fitting_columns(budget: &RowBudget, entity_columns: usize, entity_bytes: usize) -> usize {
    let row = |n: usize| {
        budget.overhead + (n + entity_columns).div_ceil(8) + entity_bytes + n * budget.cell
    };
    // The row grows monotonically with n: binary search for the last n that fits.
    let (mut lo, mut hi) = (0usize, budget.max_bytes / budget.cell.max(1) + 1);
    if row(0) > budget.max_bytes {
        return 0;
    }
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if row(mid) <= budget.max_bytes {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// In-row bytes of an entity key: 8 for a fixed-size number or date, else a full cell.
fn entity_cost(budget: &RowBudget, column: &EntityColumn) -> usize {
    let ty = column
        .sql_type
        .as_deref()
        .unwrap_or("")
        .to_ascii_lowercase();
    let fixed = [
        "int", "serial", "real", "double", "float", "date", "time", "bool", "decimal", "numeric",
    ];
    if !ty.is_empty() && !is_long_type(&ty) && fixed.iter().any(|f| ty.contains(f)) {
        8
    } else {
        budget.cell
    }
}

/// Types stored off-row when long, which InnoDB charges a fixed in-row reference for.
fn is_long_type(ty: &str) -> bool {
    let ty = ty.to_ascii_lowercase();
    ["text", "blob", "char", "binary", "json"]
        .iter()
        .any(|t| ty.contains(t))
}

/// Columns per table for `split`, or the refusal naming the limit, the numbers and the fix.
pub fn columns_per_table(
    dialect: &dyn Dialect,
    split: Split,
    entity: &[EntityColumn],
    column_type: &str,
    columns: usize,
) -> Result<usize> {
    let cap = capacity(dialect, entity, column_type);
    let limit = describe_limit(dialect, column_type, cap);
    match split {
        Split::Off if columns > cap.hard => Err(Error::Job(format!(
            "the target needs {columns} attribute columns in one table, but {limit}; \
             nothing was written: set target.split: auto to spread them over several tables \
             (or exclude attributes)"
        ))),
        Split::Off => Ok(columns.max(1)),
        Split::Columns(n) if n > cap.hard => Err(Error::Job(format!(
            "target.split: {n} puts {n} attribute columns in a table, but {limit}; \
             nothing was written: use split: auto or at most {}",
            cap.hard
        ))),
        Split::Columns(n) => Ok(n),
        Split::Auto if cap.safe == 0 => Err(Error::Job(format!(
            "target.split: auto cannot place any attribute column: {limit} and the entity key alone fills the row"
        ))),
        Split::Auto => Ok(cap.safe.min(columns.max(1))),
    }
}

fn describe_limit(dialect: &dyn Dialect, column_type: &str, cap: Capacity) -> String {
    let name = dialect.name();
    match (dialect.row_budget(), dialect.max_columns()) {
        (Some(b), _)
            if b.checked_at_create && is_long_type(column_type) && cap.hard == cap.safe =>
        {
            format!(
                "{name} allows at most {} {column_type} columns per table next to this entity key \
                 (row size limit {} bytes, {} in-row bytes per column)",
                cap.hard, b.max_bytes, b.cell
            )
        }
        (_, Some(max)) => {
            format!("{name} allows at most {max} columns per table (entity key included)")
        }
        _ => format!(
            "{name} allows at most {} attribute columns per table",
            cap.hard
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::{MariaDb, Postgres, Sqlite};

    fn int_key() -> Vec<EntityColumn> {
        vec![EntityColumn {
            name: "id".into(),
            sql_type: Some("INT".into()),
        }]
    }

    #[test]
    fn mariadb_matches_the_measured_text_column_limit() {
        // CREATE TABLE (id INT, 383 × LONGTEXT) works on MariaDB 10.11; 384 is refused.
        let cap = capacity(&MariaDb, &int_key(), "LONGTEXT");
        assert_eq!(cap.safe, 383);
        assert_eq!(cap.hard, 383);
    }

    #[test]
    fn postgres_splits_conservatively_but_refuses_only_past_1600() {
        let cap = capacity(&Postgres, &int_key(), "text");
        assert!((430..=450).contains(&cap.safe), "{cap:?}");
        assert_eq!(cap.hard, 1_599);
    }

    #[test]
    fn refusal_names_limit_numbers_and_fix() {
        let err = columns_per_table(&MariaDb, Split::Off, &int_key(), "LONGTEXT", 1_000)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("383") && err.contains("1000") && err.contains("split: auto"),
            "{err}"
        );
        assert_eq!(
            columns_per_table(&MariaDb, Split::Auto, &int_key(), "LONGTEXT", 1_000).unwrap(),
            383
        );
        assert_eq!(
            columns_per_table(&Sqlite, Split::Auto, &int_key(), "TEXT", 1_000).unwrap(),
            1_000
        );
    }
}
