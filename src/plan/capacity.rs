//! Will the target fit? Nominal column limits are not the real ones: a row must fit in its
//! page (PostgreSQL 8,160 bytes, InnoDB 8,126, SQL Server 8,060), and long values moved
//! off-row still leave a pointer behind. From a dialect's [`RowBudget`], its column limit and
//! the value widths discovery measured (smallest and largest, per attribute, in one scan),
//! this module prices every column twice, before any DDL:
//!
//! - **lo**: the fewest in-row bytes one non-null cell can take (the shortest value, or the
//!   off-row pointer if that is smaller and the value may move). A row whose lo-priced cells
//!   already overflow cannot be stored: the job is refused before DDL, naming the limit, the
//!   numbers and the fix. Which cells share a row comes from the data: the most non-null
//!   cells any entity has ([`crate::plan::Discovery::max_cells_per_entity`], counted only
//!   when it matters), else every column is assumed filled.
//! - **hi**: the most in-row bytes one cell can take once the database has moved what it can
//!   off-row. `split: auto` packs columns so that even a row with every cell at hi fits: no
//!   data can then make the load fail.
//!
//! Between the two the outcome depends on which values meet in one row; the load then fails
//! inside its transaction and rolls back.

use std::ops::Range;

use crate::config::Split;
use crate::dialect::{ColumnKind, Dialect, EntityColumn, RowBudget};
use crate::error::{Error, Result};

/// In-row bytes of one non-null cell of a column: the least and the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellCost {
    pub lo: usize,
    pub hi: usize,
}

/// Value widths in bytes of one attribute (smallest, largest non-null), where discovery
/// measured them.
pub type Widths = Option<(u64, u64)>;

/// What one table of this entity key and column type can hold, for pricing columns.
pub struct Capacity<'a> {
    dialect: &'a dyn Dialect,
    budget: Option<RowBudget>,
    entity: usize,
    /// hi / lo in-row bytes of the entity key columns.
    entity_hi: usize,
    entity_lo: usize,
    /// Pivoted columns one table may have by count alone.
    by_count: usize,
    /// Pivoted columns one table may have by CREATE TABLE's own per-column charge (InnoDB).
    by_create: usize,
    /// The widths mean something for this column type (it stores the value's text).
    text_columns: bool,
    fixed_columns: bool,
}

impl<'a> Capacity<'a> {
    pub fn new(dialect: &'a dyn Dialect, entity: &[EntityColumn], column_type: &str) -> Self {
        let by_count = dialect
            .max_columns()
            .map_or(usize::MAX, |m| m.saturating_sub(entity.len()));
        let budget = dialect.row_budget();
        let (mut entity_lo, mut entity_hi, mut by_create) = (0, 0, usize::MAX);
        if let Some(b) = &budget {
            for e in entity {
                let cost = entity_cost(dialect, b, e);
                entity_lo += cost;
                entity_hi += cost;
            }
            if let Some(charge) = b.create_charge.filter(|_| is_long_type(column_type)) {
                let fixed = b.overhead + entity_hi;
                // CREATE TABLE charges `charge` per column plus the null bits.
                by_create = (0..=b.max_bytes / charge.max(1))
                    .take_while(|&n| {
                        fixed + (n + entity.len()).div_ceil(8) + n * charge <= b.max_bytes
                    })
                    .last()
                    .unwrap_or(0);
            }
        }
        Capacity {
            dialect,
            budget,
            entity: entity.len(),
            entity_hi,
            entity_lo,
            by_count,
            by_create,
            text_columns: column_type.eq_ignore_ascii_case(dialect.text_type()),
            fixed_columns: is_fixed_type(column_type),
        }
    }

    /// Pivoted columns per table beyond which failure is certain whatever the data.
    pub fn hard(&self) -> usize {
        self.by_count.min(self.by_create)
    }

    /// The in-row price of one cell of a column whose values have `widths`.
    pub fn cell(&self, widths: Widths) -> CellCost {
        let Some(b) = &self.budget else {
            return CellCost { lo: 0, hi: 0 };
        };
        if self.fixed_columns {
            return CellCost { lo: 8, hi: 8 };
        }
        let inline = |w: usize| w + b.length_bytes;
        let worst_inline = inline(b.inline_max).max(b.pointer);
        match widths.filter(|_| self.text_columns) {
            None => CellCost {
                lo: b.length_bytes.min(b.pointer),
                hi: worst_inline,
            },
            Some((min, max)) => {
                let (min, max) = (to_usize(min), to_usize(max.max(min)));
                let hi = if max <= b.inline_max {
                    inline(max)
                } else if min <= b.inline_max {
                    worst_inline
                } else {
                    b.pointer
                };
                let lo = if min <= b.inline_max {
                    let shortest = inline(min);
                    if max > b.inline_max {
                        shortest.min(b.pointer)
                    } else {
                        shortest
                    }
                } else {
                    b.pointer
                };
                CellCost { lo, hi }
            }
        }
    }

    /// Per column, its cell's price: the fixed size where typed so, else by its widths.
    pub fn costs(&self, widths: &[Widths], fixed: &[Option<usize>]) -> Vec<CellCost> {
        widths
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                fixed
                    .get(i)
                    .copied()
                    .flatten()
                    .map_or_else(|| self.cell(w), |n| CellCost { lo: n, hi: n })
            })
            .collect()
    }

    /// Bytes of a row with these cells filled (and `columns` columns in all).
    fn row(&self, columns: usize, filled: usize, entity_bytes: usize) -> usize {
        let overhead = self.budget.as_ref().map_or(0, |b| b.overhead);
        overhead + (columns + self.entity).div_ceil(8) + entity_bytes + filled
    }

    fn max_bytes(&self) -> usize {
        self.budget.as_ref().map_or(usize::MAX, |b| b.max_bytes)
    }

    /// The smallest row a table with these columns can be asked to store: the `cells`
    /// cheapest non-null cells (all of them when unknown), each at its lo price.
    pub fn least_row(&self, costs: &[CellCost], cells: Option<u64>) -> usize {
        let mut lo: Vec<usize> = costs.iter().map(|c| c.lo).collect();
        lo.sort_unstable();
        let n = cells.map_or(lo.len(), |c| lo.len().min(to_usize(c)));
        self.row(costs.len(), lo[..n].iter().sum(), self.entity_lo)
    }

    /// The largest row a table with these columns can be asked to store: every cell filled
    /// at its hi price.
    pub fn greatest_row(&self, costs: &[CellCost]) -> usize {
        self.row(
            costs.len(),
            costs.iter().map(|c| c.hi).sum(),
            self.entity_hi,
        )
    }
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// In-row bytes of an entity key column: 8 for a fixed-size number or date; for a keyable
/// string type its full key width (key columns never move off-row); else a worst cell.
fn entity_cost(dialect: &dyn Dialect, budget: &RowBudget, column: &EntityColumn) -> usize {
    let ty = column.sql_type.as_deref().unwrap_or("");
    if is_fixed_type(ty) {
        return 8;
    }
    let worst = (budget.inline_max + budget.length_bytes).max(budget.pointer);
    match dialect.key_bytes(ty) {
        Some(n) if n > 0 && !ty.is_empty() => n + budget.length_bytes,
        _ => worst,
    }
}

fn is_fixed_type(ty: &str) -> bool {
    let ty = ty.to_ascii_lowercase();
    let fixed = [
        "int", "serial", "real", "double", "float", "date", "time", "bool", "decimal", "numeric",
    ];
    !ty.is_empty() && !is_long_type(&ty) && fixed.iter().any(|f| ty.contains(f))
}

/// Types stored off-row when long, which InnoDB charges a fixed in-row reference for.
fn is_long_type(ty: &str) -> bool {
    let ty = ty.to_ascii_lowercase();
    ["text", "blob", "char", "binary", "json"]
        .iter()
        .any(|t| ty.contains(t))
}

/// In-row bytes of a typed column of fixed size (PostgreSQL's sizes, which are also the
/// largest of the three servers' but for DECIMAL, priced at its widest); None for text kinds,
/// priced by their widths.
pub fn fixed_bytes(kind: &ColumnKind) -> Option<usize> {
    Some(match kind {
        ColumnKind::SmallInt => 2,
        ColumnKind::Int | ColumnKind::Date => 4,
        ColumnKind::BigInt | ColumnKind::Timestamp { .. } | ColumnKind::Float => 8,
        ColumnKind::Boolean => 1,
        // Header, weight, sign/scale, then 2 bytes per 4 digits (+1 for alignment of the point).
        ColumnKind::Decimal { precision, .. } => 8 + 2 * (*precision as usize).div_ceil(4),
        ColumnKind::Text { .. } | ColumnKind::UnboundedText | ColumnKind::Declared(_) => {
            return None
        }
    })
}

/// One table's row size in bytes against the database's limit (`inspect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RowEstimate {
    /// The fullest entity's cells at their shortest (every cell when not counted).
    pub least: usize,
    /// Every cell filled at its longest in-row size.
    pub greatest: usize,
    pub limit: usize,
}

/// The row estimate of one table of these columns; None where the database has no row
/// budget (SQLite).
pub fn row_estimate(
    dialect: &dyn Dialect,
    entity: &[EntityColumn],
    column_type: &str,
    facts: &DataFacts,
) -> Option<RowEstimate> {
    let cap = Capacity::new(dialect, entity, column_type);
    cap.budget?;
    let costs = cap.costs(facts.widths, facts.fixed);
    Some(RowEstimate {
        least: cap.least_row(&costs, facts.max_cells_per_entity),
        greatest: cap.greatest_row(&costs),
        limit: cap.max_bytes(),
    })
}

/// What the plan knows about the data, for [`tables_for`].
pub struct DataFacts<'a> {
    /// Per pivoted column, in order, its attribute's value widths.
    pub widths: &'a [Widths],
    /// Per pivoted column, its fixed in-row size where it is typed so ([`fixed_bytes`]); such
    /// a column is not charged as a long one. Empty: every column has the shared type.
    pub fixed: &'a [Option<usize>],
    /// The most non-null cells any entity has among these columns, where counted.
    pub max_cells_per_entity: Option<u64>,
}

/// The columns of each target table (as index ranges into the column list) for `split`, or
/// the refusal naming the limit, the numbers and the fix.
pub fn tables_for(
    dialect: &dyn Dialect,
    split: Split,
    entity: &[EntityColumn],
    column_type: &str,
    facts: &DataFacts,
) -> Result<Vec<Range<usize>>> {
    let cap = Capacity::new(dialect, entity, column_type);
    let fixed = |i: usize| facts.fixed.get(i).copied().flatten();
    let costs = cap.costs(facts.widths, facts.fixed);
    let columns = costs.len();
    let hard = cap.hard();
    // Columns of a fixed-size type are not charged as long ones at CREATE TABLE.
    let over_hard = |range: Range<usize>| {
        let charged = range.clone().filter(|&i| fixed(i).is_none()).count();
        range.len() > cap.by_count || charged > cap.by_create
    };
    let ranges = match split {
        Split::Off => {
            if over_hard(0..columns) {
                return Err(Error::Job(format!(
                    "the target needs {columns} attribute columns in one table, but {}; \
                     nothing was written: set target.split: auto to spread them over several tables \
                     (or exclude attributes)",
                    describe_hard_limit(&cap, column_type)
                )));
            }
            std::iter::once(0..columns).collect()
        }
        Split::Columns(n) => {
            if (0..columns)
                .step_by(n.max(1))
                .any(|s| over_hard(s..(s + n.max(1)).min(columns)))
            {
                return Err(Error::Job(format!(
                    "target.split: {n} puts {n} attribute columns in a table, but {}; \
                     nothing was written: use split: auto or at most {hard}",
                    describe_hard_limit(&cap, column_type)
                )));
            }
            // No column at all (a delta naming no entity) still makes the one table, as
            // `auto` and `off` do: a merge finds the target's tables through it.
            let ranges: Vec<Range<usize>> = (0..columns)
                .step_by(n.max(1))
                .map(|s| s..(s + n.max(1)).min(columns))
                .collect();
            match ranges.is_empty() {
                true => std::iter::once(0..0).collect(),
                false => ranges,
            }
        }
        Split::Auto => pack(&cap, &costs, &over_hard)?,
    };
    for range in &ranges {
        check_least_row(&cap, &costs[range.clone()], facts, split)?;
    }
    Ok(ranges)
}

/// `split: auto`: fill each table in column order while its greatest row still fits.
fn pack(
    cap: &Capacity,
    costs: &[CellCost],
    over_hard: &dyn Fn(Range<usize>) -> bool,
) -> Result<Vec<Range<usize>>> {
    let max = cap.max_bytes();
    let mut ranges = Vec::new();
    let mut start = 0;
    while start < costs.len() {
        let mut end = start;
        while end < costs.len()
            && !over_hard(start..end + 1)
            && cap.greatest_row(&costs[start..=end]) <= max
        {
            end += 1;
        }
        if end == start {
            return Err(Error::Job(format!(
                "target.split: auto cannot place attribute column {}: {} allows {max} bytes per row \
                 and the entity key with that one column would need {}",
                start + 1,
                cap.dialect.name(),
                cap.greatest_row(&costs[start..=start])
            )));
        }
        ranges.push(start..end);
        start = end;
    }
    if ranges.is_empty() {
        ranges.extend(std::iter::once(0..0));
    }
    Ok(ranges)
}

/// Refuse a table whose smallest possible filled row cannot fit its page.
fn check_least_row(
    cap: &Capacity,
    costs: &[CellCost],
    facts: &DataFacts,
    split: Split,
) -> Result<()> {
    let max = cap.max_bytes();
    let least = cap.least_row(costs, facts.max_cells_per_entity);
    if least <= max {
        return Ok(());
    }
    let cells = facts
        .max_cells_per_entity
        .map_or(costs.len() as u64, |c| c.min(costs.len() as u64));
    let counted = if facts.max_cells_per_entity.is_some() {
        "the fullest entity has"
    } else {
        "assuming every column filled, an entity has"
    };
    let fix = match split {
        Split::Auto => "exclude attributes",
        _ => "set target.split: auto to spread the columns over several tables (or exclude attributes)",
    };
    Err(Error::Job(format!(
        "a row of the target cannot fit: {} allows {max} bytes per row, and {counted} {cells} \
         non-null cells in one table, which take at least {least} bytes with the shortest values \
         discovery found; nothing was written: {fix}",
        cap.dialect.name()
    )))
}

fn describe_hard_limit(cap: &Capacity, column_type: &str) -> String {
    let name = cap.dialect.name();
    match (&cap.budget, cap.dialect.max_columns()) {
        (Some(b), _) if cap.by_create < cap.by_count => format!(
            "{name} allows at most {} {column_type} columns per table next to this entity key \
             (row size limit {} bytes, {} in-row bytes per column charged at CREATE TABLE)",
            cap.by_create,
            b.max_bytes,
            b.create_charge.unwrap_or(0)
        ),
        (_, Some(max)) => {
            format!("{name} allows at most {max} columns per table (entity key included)")
        }
        _ => format!(
            "{name} allows at most {} attribute columns per table",
            cap.hard()
        ),
    }
}

/// Whether `tables_for` with split off would refuse on data grounds if every column were
/// filled: only then is it worth counting the fullest entity's cells.
pub fn needs_entity_count(
    dialect: &dyn Dialect,
    entity: &[EntityColumn],
    column_type: &str,
    widths: &[Widths],
    fixed: &[Option<usize>],
) -> bool {
    let cap = Capacity::new(dialect, entity, column_type);
    let costs = cap.costs(widths, fixed);
    let charged = (0..widths.len())
        .filter(|&i| fixed.get(i).copied().flatten().is_none())
        .count();
    widths.len() <= cap.by_count
        && charged <= cap.by_create
        && cap.least_row(&costs, None) > cap.max_bytes()
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

    fn facts(widths: &[Widths]) -> DataFacts<'_> {
        DataFacts {
            widths,
            fixed: &[],
            max_cells_per_entity: None,
        }
    }

    fn sizes(ranges: &[Range<usize>]) -> Vec<usize> {
        ranges.iter().map(|r| r.len()).collect()
    }

    #[test]
    fn mariadb_matches_the_measured_text_column_limit() {
        // CREATE TABLE (id INT, 383 × LONGTEXT) works on MariaDB 10.11; 384 is refused.
        let cap = Capacity::new(&MariaDb, &int_key(), "LONGTEXT");
        assert_eq!(cap.hard(), 383);
        let widths = vec![Some((10, 14)); 1_000];
        let tables = tables_for(
            &MariaDb,
            Split::Auto,
            &int_key(),
            "LONGTEXT",
            &facts(&widths),
        )
        .expect("split");
        assert_eq!(sizes(&tables), vec![383, 383, 234]);
    }

    #[test]
    fn postgres_refuses_1000_dense_short_values_and_packs_them_by_width() {
        let widths = vec![Some((14, 14)); 1_000];
        let err = tables_for(&Postgres, Split::Off, &int_key(), "text", &facts(&widths))
            .expect_err("15 bytes × 1000 cannot fit 8160");
        let text = err.to_string();
        assert!(
            text.contains("8160") && text.contains("1000") && text.contains("split: auto"),
            "{text}"
        );
        let tables =
            tables_for(&Postgres, Split::Auto, &int_key(), "text", &facts(&widths)).expect("split");
        // 15 bytes a cell: ~535 a table, so two tables.
        assert_eq!(tables.len(), 2, "{tables:?}");
        assert!(tables[0].len() > 500, "{tables:?}");
    }

    #[test]
    fn sparse_data_is_not_refused_when_the_fullest_entity_fits() {
        let widths = vec![Some((14, 14)); 1_000];
        let sparse = DataFacts {
            widths: &widths,
            fixed: &[],
            max_cells_per_entity: Some(20),
        };
        let tables = tables_for(&Postgres, Split::Off, &int_key(), "text", &sparse).expect("fits");
        assert_eq!(sizes(&tables), vec![1_000]);
        assert!(needs_entity_count(
            &Postgres,
            &int_key(),
            "text",
            &widths,
            &[]
        ));
        // The same 1,000 attributes typed INT need no count: 4 bytes each fit.
        let ints = vec![Some(4); 1_000];
        assert!(!needs_entity_count(
            &Postgres,
            &int_key(),
            "text",
            &widths,
            &ints
        ));
        let typed = DataFacts {
            widths: &widths,
            fixed: &ints,
            max_cells_per_entity: None,
        };
        let tables = tables_for(&Postgres, Split::Off, &int_key(), "text", &typed).expect("fits");
        assert_eq!(sizes(&tables), vec![1_000]);
        // And on MariaDB INT columns are not charged like LONGTEXT at CREATE TABLE.
        let tables =
            tables_for(&MariaDb, Split::Auto, &int_key(), "LONGTEXT", &typed).expect("split");
        assert_eq!(sizes(&tables), vec![1_000]);
    }

    #[test]
    fn long_values_cost_a_pointer_and_unknown_widths_the_worst_inline() {
        let cap = Capacity::new(&Postgres, &int_key(), "text");
        assert_eq!(cap.cell(Some((3_000, 9_000))), CellCost { lo: 18, hi: 18 });
        assert_eq!(cap.cell(Some((5, 9_000))), CellCost { lo: 6, hi: 24 });
        assert_eq!(cap.cell(None).hi, 24);
        let other = Capacity::new(&Postgres, &int_key(), "integer");
        assert_eq!(other.cell(Some((1, 2))), CellCost { lo: 8, hi: 8 });
    }

    /// A delta naming no entity plans no column: `split: N` still makes the one table (it made
    /// none, so a merge into a split target reported no table; differential seed 1234).
    #[test]
    fn no_column_still_makes_one_table() {
        for split in [Split::Off, Split::Auto, Split::Columns(2)] {
            let tables =
                tables_for(&Postgres, split, &int_key(), "text", &facts(&[])).expect("fits");
            assert_eq!(
                tables,
                std::iter::once(0..0).collect::<Vec<_>>(),
                "{split:?}"
            );
        }
    }

    #[test]
    fn refusal_names_limit_numbers_and_fix() {
        let widths = vec![None; 1_000];
        let err = tables_for(
            &MariaDb,
            Split::Off,
            &int_key(),
            "LONGTEXT",
            &facts(&widths),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("383") && err.contains("1000") && err.contains("split: auto"),
            "{err}"
        );
        let tables = tables_for(&Sqlite, Split::Auto, &int_key(), "TEXT", &facts(&widths))
            .expect("no limit");
        assert_eq!(sizes(&tables), vec![1_000]);
    }
}
