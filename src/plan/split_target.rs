//! A merge into a target that `split` spread over several tables (`<t>`, `<t>_2`, …): the
//! tables stay as they are. A fresh plan packs the columns anew, which would move an
//! attribute whose table filled up into the next one — a second column for it there and a
//! stale one left behind. So every attribute keeps the table that has its column, and
//! attributes new to the target go to the last table, where there is room for them.

use crate::config::{Job, OnCollision, OnNewAttributes, Split};
use crate::dialect::{Dialect, PivotColumn, TableShape};
use crate::error::{Error, Result};
use crate::table_ref::TableRef;

use super::naming::{self, NaturalNames, Renamed};
use super::{capacity, column_widths, fixed_sizes, Discovery};

/// One existing table of the target and its attribute columns (entity columns left out).
pub struct ExistingTable {
    pub table: TableRef,
    pub columns: Vec<String>,
}

/// The planned tables redrawn over the `existing` ones.
pub struct Redrawn {
    pub tables: Vec<TableShape>,
    /// New columns named apart from an existing column of another table.
    pub renamed: Vec<Renamed>,
    pub note: String,
    /// The attributes new to the target, put in the last table: [`refuse_overflow`] checks
    /// they fit there.
    pub new: Vec<String>,
    /// The last table's attribute columns as they exist, vanished attributes' too: they stay
    /// columns of it.
    pub last_existing: Vec<String>,
}

/// The planned tables redrawn over the `existing` ones (`<t>` first, then `<t>_2`, … as
/// they exist; at least one): each planned column goes to the table that has it; the rest,
/// new to the target, to the last table.
pub fn follow_existing(
    job: &Job,
    dialect: &dyn Dialect,
    planned: &[TableShape],
    existing: &[ExistingTable],
) -> Result<Redrawn> {
    let natural = &NaturalNames::of(job);
    let (Some(first), Some(last)) = (planned.first(), existing.last()) else {
        return Err(Error::Job("no table to merge into".into()));
    };
    let key = |c: &str| dialect.ident_key(c);
    let mut left: Vec<PivotColumn> = planned.iter().flat_map(|t| t.columns.clone()).collect();
    let mut tables: Vec<TableShape> = Vec::with_capacity(existing.len());
    for table in existing {
        // Which columns the merge will find in this table: exactly its own test
        // (`match_existing_columns`, then the name), renaming nothing here for real.
        let mut probe = TableShape {
            table: table.table.clone(),
            columns: left.clone(),
            ..first.clone()
        };
        naming::match_existing_columns(
            dialect,
            &mut probe,
            &table.columns,
            (natural, OnCollision::Rename),
        )?;
        let mut kept = Vec::new();
        let mut rest = Vec::new();
        for (column, probed) in left.into_iter().zip(probe.columns) {
            match table.columns.iter().any(|e| key(e) == key(&probed.column)) {
                true => kept.push(probed),
                false => rest.push(column),
            }
        }
        left = rest;
        tables.push(TableShape {
            table: table.table.clone(),
            columns: kept,
            ..first.clone()
        });
    }
    let mut renamed = Vec::new();
    let mut new_attributes = Vec::new();
    let mut note = format!(
        "merging into the split target {} ({} tables as they exist): every attribute keeps the table that has its column",
        first.table,
        existing.len()
    );
    if !left.is_empty() {
        // A new column is named apart from every table's columns, as one table would have it.
        let every: Vec<String> = existing.iter().flat_map(|t| t.columns.clone()).collect();
        let mut new = TableShape {
            table: first.table.clone(),
            columns: left,
            ..first.clone()
        };
        renamed = naming::match_existing_columns(
            dialect,
            &mut new,
            &every,
            (natural, job.pivot.on_collision),
        )?;
        new_attributes = new.columns.iter().map(|c| c.attribute.clone()).collect();
        if job.pivot.on_new_attributes == OnNewAttributes::Add {
            note.push_str(&format!(
                "; new attribute(s) {} go to {}, its last table",
                new_attributes.join(", "),
                last.table
            ));
        }
        if let Some(receiving) = tables.last_mut() {
            receiving.columns.extend(new.columns);
        }
    }
    Ok(Redrawn {
        tables,
        renamed,
        note,
        new: new_attributes,
        last_existing: last.columns.clone(),
    })
}

/// Refuse the new columns that `table`, the last of a split target, cannot take as `split`
/// packs a table: more than `split: N` columns, or more than `split: auto` would put in one.
/// Its columns of vanished attributes count as columns of unknown width: they stay, and keep
/// their values in the rows the merge does not touch. Asked after the run's guards (the
/// source, the lock): before any write.
pub fn refuse_overflow(
    job: &Job,
    dialect: &dyn Dialect,
    discovery: &Discovery,
    table: &TableShape,
    redrawn: &Redrawn,
) -> Result<()> {
    let new = &redrawn.new;
    if new.is_empty() || job.pivot.on_new_attributes != OnNewAttributes::Add {
        return Ok(());
    }
    let grown = &table.columns;
    let key = |c: &str| dialect.ident_key(c);
    let vanished = redrawn
        .last_existing
        .iter()
        .filter(|e| !grown.iter().any(|c| key(&c.column) == key(e)))
        .count();
    let all = grown.len() + vanished;
    let problem = match job.target.split {
        Split::Columns(n) if all > n => format!(
            "it would hold {all} attribute columns, and target.split: {n} puts at most {n} in a table"
        ),
        Split::Auto => {
            let mut widths = column_widths(discovery, grown);
            let mut fixed = fixed_sizes(grown);
            widths.extend(std::iter::repeat_n(None, vanished));
            fixed.extend(std::iter::repeat_n(None, vanished));
            let facts = capacity::DataFacts {
                widths: &widths,
                fixed: &fixed,
                max_cells_per_entity: None,
            };
            match capacity::tables_for(
                dialect,
                Split::Auto,
                &table.entity,
                &table.column_type,
                &facts,
            ) {
                Ok(ranges) if ranges.len() <= 1 => return Ok(()),
                Ok(_) => format!(
                    "target.split: auto would not keep its {all} attribute columns in one table"
                ),
                Err(err) => err.to_string(),
            }
        }
        _ => return Ok(()),
    };
    Err(Error::Job(format!(
        "cannot merge the new attribute(s) {} into the split target's last table {}: {problem}; \
         nothing was written: run with if_exists: replace to split the columns again",
        new.join(", "),
        table.table
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_job;
    use crate::dialect::{EntityColumn, MariaDb};

    fn job(extra: &str) -> Job {
        let text = format!(
            "name: t\nsource: {{ table: kv }}\nentity: [id]\nattribute: k\nvalue: v\ntarget: {{ table: w, if_exists: merge, split: 2 }}\n{extra}"
        );
        parse_job(&text, std::path::Path::new("t.yaml")).expect("valid job")
    }

    fn shape(table: &str, attributes: &[&str]) -> TableShape {
        TableShape {
            table: TableRef::parse(table).expect("table"),
            entity: vec![EntityColumn {
                name: "id".into(),
                sql_type: None,
            }],
            columns: attributes.iter().map(|a| PivotColumn::text(a, a)).collect(),
            column_type: "text".into(),
            primary_key: true,
        }
    }

    fn existing(table: &str, columns: &[&str]) -> ExistingTable {
        ExistingTable {
            table: TableRef::parse(table).expect("table"),
            columns: columns.iter().map(|c| c.to_string()).collect(),
        }
    }

    fn columns(shape: &TableShape) -> Vec<&str> {
        shape.columns.iter().map(|c| c.column.as_str()).collect()
    }

    /// A fresh plan of a, b, c, d with `split: 2` packs (a, b) (c, d); the target has c in
    /// its first table: c stays there, the new d goes to the last table, the vanished x stays
    /// a column of the first table (the merge clears it), nothing moves.
    #[test]
    fn every_attribute_keeps_its_table_and_new_ones_go_last() {
        let job = job("");
        let planned = [shape("w", &["a", "b"]), shape("w_2", &["c", "d"])];
        let target = [existing("w", &["c", "x"]), existing("w_2", &["a", "b"])];
        let redrawn = follow_existing(&job, &MariaDb, &planned, &target).expect("redrawn");
        let tables: Vec<Vec<&str>> = redrawn.tables.iter().map(columns).collect();
        assert_eq!(tables, [vec!["c"], vec!["a", "b", "d"]]);
        assert_eq!(redrawn.tables[1].table.to_string(), "w_2");
        assert_eq!(redrawn.new, ["d"]);
        assert!(
            redrawn.note.contains("new attribute(s) d go to w_2"),
            "{}",
            redrawn.note
        );
        let overflow = refuse_overflow(
            &job,
            &MariaDb,
            &Discovery::default(),
            &redrawn.tables[1],
            &redrawn,
        );
        let said = overflow.expect_err("3 columns > split: 2").to_string();
        assert!(
            said.contains(
                "new attribute(s) d into the split target's last table w_2: it would hold 3"
            ),
            "{said}"
        );
    }

    /// A new attribute whose name is another table's column as a MariaDB identifier (`A`
    /// beside `a` in the first table) is named apart, as one table would name it; under
    /// `on_collision: error` it is refused.
    #[test]
    fn a_new_name_is_kept_apart_from_every_tables_columns() {
        let planned = [shape("w", &["a", "A"])];
        let target = [existing("w", &["a"]), existing("w_2", &["b"])];
        let redrawn = follow_existing(&job(""), &MariaDb, &planned, &target).expect("redrawn");
        // The last table's shape lists the planned columns only (its b has vanished).
        let last = columns(&redrawn.tables[1]);
        assert!(last.len() == 1 && last[0].starts_with("A~"), "{last:?}");
        assert_eq!(columns(&redrawn.tables[0]), ["a"]);
        assert_eq!(redrawn.renamed.len(), 1);
        let err = follow_existing(
            &job("pivot: { on_collision: error }"),
            &MariaDb,
            &planned,
            &target,
        );
        assert!(err.is_err());
    }

    /// A vanished attribute's column stays a column of the last table: with `split: 2` and
    /// `x` left there, one new column fits and two do not (differential seed 813).
    #[test]
    fn vanished_columns_of_the_last_table_count() {
        let job = job("");
        let target = [existing("w", &["a"]), existing("w_2", &["x"])];
        for (planned, fits) in [(vec!["a", "b"], true), (vec!["a", "b", "c"], false)] {
            let planned = [shape("w", &planned)];
            let redrawn = follow_existing(&job, &MariaDb, &planned, &target).expect("redrawn");
            let last = &redrawn.tables[1];
            let checked = refuse_overflow(&job, &MariaDb, &Discovery::default(), last, &redrawn);
            assert_eq!(checked.is_ok(), fits, "{planned:?}: {checked:?}");
        }
    }
}
