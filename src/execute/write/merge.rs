//! `if_exists: merge`: the run's rows go into a staging table as for `replace` (loaded and
//! verified against the source by the fill), then, inside the same transaction, are upserted
//! into the existing target: every column of a touched entity is set from the source (NULL
//! where the entity no longer has the attribute, NULL in target columns the source has no
//! attribute for, except the user's own columns the database fills, which are left as they
//! are) — a row that already is so is not written —, new entities are inserted, entities
//! only in the target are kept or deleted (`target.on_missing`), and new attributes become
//! columns
//! (`pivot.on_new_attributes`). The merged table is verified before commit: its rows and
//! per-column counts must equal the untouched target rows plus the staging rows.
//!
//! Where DDL is not transactional (MariaDB) a new column cannot be added inside the
//! transaction, so the merge then goes into a copy of the target (created with the new
//! columns beside the staging table, filled inside the transaction) that replaces the target
//! by the same atomic rename as `replace`; a write another session committed to the target
//! between the copy and the rename is caught by comparing the replaced table with what was
//! copied, and the rename is then undone ([`check_swapped`]). Cells going to NULL are
//! counted, and guarded against the old delta pattern, in `nulled.rs`.

use crate::config::{Job, OnCollision, OnMissing, OnNewAttributes, TableRef};
use crate::dialect::merge::{self, MergeColumns};
use crate::dialect::SourceQuery;
use crate::dialect::{ddl, portable};
use crate::dialect::{ColumnKind, Dialect, PivotColumn, TableShape};
use crate::error::{Error, Result};
use crate::plan::naming::{match_existing_columns, NaturalNames, Renamed};
use crate::plan::split_target::ExistingTable;
use crate::report::MergeStats;
use crate::value::Value;

use super::super::session::Session;
use super::nulled;
use super::widen::Widening;
use super::Table;
use crate::value::row_counts;

/// How one existing target takes the staging table's rows.
#[derive(Debug, Clone)]
pub struct MergePlan {
    pub(super) keys: Vec<String>,
    /// The key and set columns whose target type may hold text ([`MergeColumns::spelled`]).
    spelled: Vec<String>,
    /// The set columns of a floating-point type ([`MergeColumns::floats`]).
    floats: Vec<String>,
    /// The target's attribute columns as they are, in order.
    existing: Vec<String>,
    /// The target's columns the database fills itself that are no attribute's: the user's
    /// own, left as they are ([`crate::dialect::Catalog::filled_columns`]). The copy takes
    /// those that hold written values (not the generated ones, which it computes again).
    filled: Vec<String>,
    filled_copied: Vec<String>,
    /// New attribute columns and their types.
    added: Vec<(String, String)>,
    set: Vec<String>,
    cleared: Vec<String>,
    on_missing: OnMissing,
    /// Non-transactional DDL with new columns: the copy merged into and swapped in.
    pub copy: Option<TableRef>,
    /// The copy's tag in its name and mark.
    pub copy_tag: String,
    /// With a copy: the statement that gives the target its own comment back once the swap's
    /// cleanup is done (the copy carries the run's mark in it).
    pub(super) restore_comment: Option<String>,
    /// A merge whose `source.where` may be meant as a delta (no `source.changed`): refuse a
    /// cell going to NULL that the source still holds outside `where` ([`MergePlan::guard`]).
    /// The job and the source query the guard reads outside `where` with.
    pub(super) scope_guard: Option<(Job, SourceQuery)>,
    /// Typed merges: the target columns that widen to take the run's values (widen.rs).
    widening: Widening,
    /// Why the upsert cannot find the target's rows ([`refuse_without_entity_key`]): raised
    /// before any write, after the other checks of preparing (a Citus target distributed by
    /// another column has no such key either, and its own refusal says more).
    pub(super) keyless: Option<String>,
    /// Attributes whose planned column collided with another attribute's existing column,
    /// and the column each got instead ([`crate::plan::naming::match_existing_columns`]).
    pub renamed: Vec<Renamed>,
}

/// The refusal of a target none of whose unique keys (`rows`: key name, column) is exactly
/// the entity columns, which the upsert finds rows by: MariaDB's would insert every merged
/// entity again (caught only by the count check after the merge), `ON CONFLICT` fails.
fn refuse_without_entity_key(
    dialect: &dyn Dialect,
    table: &TableRef,
    keys: &[String],
    rows: &[Vec<Value>],
) -> std::result::Result<(), String> {
    let key_of = |name: &str| dialect.ident_key(name);
    let mut entity: Vec<String> = keys.iter().map(|k| key_of(k)).collect();
    entity.sort();
    let keyed = super::super::keys::unique_keys_of(rows)
        .into_iter()
        .any(|(_, columns)| {
            let mut columns: Vec<String> = columns.iter().flatten().map(|c| key_of(c)).collect();
            columns.sort();
            columns == entity
        });
    match keyed {
        true => Ok(()),
        false => Err(format!(
            "cannot merge into {table}: it has no primary key or unique index on exactly its entity columns ({}), by which {}'s upsert finds each entity's row; nothing was written. A table eavpivot made without one said why in its plan notes (an entity type the database cannot index); use if_exists: replace, or add the key (CREATE UNIQUE INDEX {} ON {table} ({}))",
            keys.join(", "),
            dialect.name(),
            dialect.quote_ident(&format!("{}_entity", table.name())),
            keys.iter().map(|k| dialect.quote_ident(k)).collect::<Vec<_>>().join(", ")
        )),
    }
}

impl MergePlan {
    /// Read the target's columns and decide, before any write, what the merge does with
    /// each; refuses a target that lacks the entity columns, and new attributes under
    /// `on_new_attributes: error`. A planned column that is another attribute's existing
    /// column as an identifier is renamed in `shape` first.
    pub async fn read(
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
        shape: &mut TableShape,
        on_new: OnNewAttributes,
        on_missing: OnMissing,
        naming: (&NaturalNames, OnCollision),
        (copy, copy_tag): (TableRef, String),
    ) -> Result<MergePlan> {
        let rows = session
            .inspect_target(&dialect.column_types(&shape.table))
            .await?;
        let columns: Vec<String> = rows
            .iter()
            .filter_map(|r| r.first().and_then(Value::as_text))
            .collect();
        let key_of = |name: &str| dialect.ident_key(name);
        let keys: Vec<String> = shape.entity.iter().map(|e| e.name.clone()).collect();

        if !columns.is_empty() {
            if let Some(missing) = keys
                .iter()
                .find(|k| !columns.iter().any(|c| key_of(c) == key_of(k)))
            {
                return Err(Error::Job(format!(
                    "cannot merge into {}: it has no entity column {missing} (it was not built by this job; its columns: {})",
                    shape.table,
                    columns.join(", ")
                )));
            }
        }
        // An existing target only (no columns: the run creates it, with its key).
        let mut keyless = None;
        if let Some(sql) = dialect
            .upsert_keys(&shape.table)
            .filter(|_| !columns.is_empty())
        {
            let rows = session.inspect_target(&sql).await?;
            keyless = refuse_without_entity_key(dialect, &shape.table, &keys, &rows).err();
        }
        let is_key = |c: &str| keys.iter().any(|k| key_of(k) == key_of(c));
        let mut existing: Vec<String> = columns.into_iter().filter(|c| !is_key(c)).collect();
        let renamed = match_existing_columns(dialect, shape, &existing, naming)?;
        let filled_rows = match dialect.filled_columns(&shape.table) {
            Some(sql) if !existing.is_empty() => session.inspect_target(&sql).await?,
            _ => Vec::new(),
        };
        // Filled by the database and no attribute's column: the user's own.
        let planned = |c: &str| shape.columns.iter().any(|p| key_of(&p.column) == key_of(c));
        let (mut filled, mut filled_copied) = (Vec::new(), Vec::new());
        for row in &filled_rows {
            let Some(name) = row.first().and_then(Value::as_text) else {
                continue;
            };
            let Some(at) = existing.iter().position(|e| key_of(e) == key_of(&name)) else {
                continue;
            };
            if planned(&name) {
                continue;
            }
            let column = existing.remove(at);
            if row.get(1).and_then(Value::as_i64) != Some(1) {
                filled_copied.push(column.clone());
            }
            filled.push(column);
        }
        let in_target = |c: &PivotColumn| existing.iter().any(|e| key_of(e) == key_of(&c.column));
        let new: Vec<&PivotColumn> = shape.columns.iter().filter(|c| !in_target(c)).collect();
        if on_new == OnNewAttributes::Error && !new.is_empty() {
            let names: Vec<&str> = new.iter().map(|c| c.attribute.as_str()).collect();
            return Err(Error::Job(format!(
                "{} has no column for {} new attribute(s) ({}) and pivot.on_new_attributes is error; nothing was written",
                shape.table,
                names.len(),
                names.join(", ")
            )));
        }
        let added: Vec<(String, String)> = match on_new {
            OnNewAttributes::Add => new
                .iter()
                .map(|c| (c.column.clone(), c.sql_type(shape).to_string()))
                .collect(),
            _ => Vec::new(),
        };
        let set: Vec<String> = shape
            .columns
            .iter()
            .filter(|c| in_target(c) || added.iter().any(|(a, _)| *a == c.column))
            .map(|c| c.column.clone())
            .collect();
        let cleared = existing
            .iter()
            .filter(|e| !set.iter().any(|s| key_of(s) == key_of(e)))
            .cloned()
            .collect();
        // Typed merges: which target columns must widen (widen.rs); a widening needs the copy
        // where DDL is not transactional, as a new column does.
        let widening = Widening::read(session, dialect, shape).await?;
        let altered = !added.is_empty() || widening.widens();
        let copy = (!dialect.transactional_ddl() && altered).then_some(copy);
        let mut restore_comment = None;
        if copy.is_some() {
            refuse_losing_by_copy(session, dialect, shape, &added, &widening).await?;
            if let Some(sql) = dialect.restore_comment(&shape.table) {
                let rows = session.inspect_target(&sql).await?;
                restore_comment = rows
                    .first()
                    .and_then(|r| r.first())
                    .and_then(Value::as_text);
            }
        }
        // Keys and cells a collation may count as one in two spellings: by their bytes.
        let declared_of = |c: &String| {
            rows.iter()
                .find(|r| r.first().and_then(Value::as_text).map(|n| key_of(&n)) == Some(key_of(c)))
                .and_then(|r| r.get(1).and_then(Value::as_text))
        };
        let may_hold_text = |c: &String| portable::may_hold_text(declared_of(c).as_deref());
        let spelled = keys
            .iter()
            .chain(&set)
            .filter(|c| may_hold_text(c))
            .cloned()
            .collect();
        let floats = set
            .iter()
            .filter(|c| declared_of(c).and_then(|d| portable::parse(&d)) == Some(ColumnKind::Float))
            .cloned()
            .collect();
        Ok(MergePlan {
            keys,
            spelled,
            floats,
            existing,
            filled,
            filled_copied,
            added,
            set,
            cleared,
            on_missing,
            copy,
            copy_tag,
            restore_comment,
            scope_guard: None,
            widening,
            keyless,
            renamed,
        })
    }

    /// Guard this merge of `job` against the old delta pattern: `where` used as the delta,
    /// which would set every attribute it did not read to NULL. Off with `source.changed`
    /// (then `where` is the scope) and without `where` (nothing lies outside it). `source` is
    /// the run's own query: its attribute key tells `Color` from `color` where the source's
    /// collation would not, so the guard compares names as the run does.
    pub fn guard(&mut self, job: &Job, source: &SourceQuery) {
        let delta_like = job.source.filter.is_some() && job.source.changed.is_none();
        self.scope_guard = delta_like.then(|| (job.clone(), source.clone()));
    }

    /// The columns the copy takes from the target: keys, the existing attributes, then the
    /// user's own that hold written values.
    fn copied_columns(&self) -> Vec<String> {
        self.keys
            .iter()
            .chain(&self.existing)
            .chain(&self.filled_copied)
            .cloned()
            .collect()
    }

    /// Each existing target column with the staging column it is set from (None: cleared).
    pub(super) fn nulled_columns(&self, dialect: &dyn Dialect) -> Vec<(String, Option<String>)> {
        let key = |c: &str| dialect.ident_key(c);
        self.existing
            .iter()
            .map(|e| {
                let staged = self.set.iter().find(|s| key(s) == key(e)).cloned();
                (e.clone(), staged)
            })
            .collect()
    }

    fn columns(&self) -> MergeColumns<'_> {
        MergeColumns {
            keys: &self.keys,
            set: &self.set,
            cleared: &self.cleared,
            spelled: &self.spelled,
            floats: &self.floats,
        }
    }

    /// Every attribute column the merged table has, in order.
    /// The target's attribute columns as the merge found them.
    pub(super) fn existing(&self) -> &[String] {
        &self.existing
    }

    fn all_columns(&self) -> Vec<String> {
        self.existing
            .iter()
            .cloned()
            .chain(self.added.iter().map(|(c, _)| c.clone()))
            .collect()
    }

    /// Outside the transaction, where DDL is not transactional: the copy, marked as this
    /// run's, with the new columns. Returns the statements to run.
    pub fn create_copy(&self, dialect: &dyn Dialect, target: &TableRef, mark: &str) -> Vec<String> {
        let Some(copy) = &self.copy else {
            return Vec::new();
        };
        let Some(like) = dialect.create_table_like(copy, target) else {
            return Vec::new();
        };
        let mut sql = vec![like, merge::mark_copy(dialect, copy, mark)];
        sql.extend(column_changes(dialect, copy, &self.added, &self.widening));
        sql
    }
}

/// The statements that give `table` the merge's new columns and widened types: the copy's,
/// or those a user runs on the target so that the merge needs no copy.
fn column_changes(
    dialect: &dyn Dialect,
    table: &TableRef,
    added: &[(String, String)],
    widening: &Widening,
) -> Vec<String> {
    added
        .iter()
        .map(|(c, ty)| dialect.add_column(table, c, ty))
        .chain(widening.alter_types(dialect, table))
        .collect()
}

/// A merge that needs the copy (MariaDB: new or widened columns) is refused, before a write,
/// where the copy would lose what the target has besides its columns (a trigger, a foreign
/// key): the error gives the statements that add or widen the columns in place, after which
/// the merge needs no copy.
async fn refuse_losing_by_copy(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    shape: &TableShape,
    added: &[(String, String)],
    widening: &Widening,
) -> Result<()> {
    let Some(sql) = dialect.lost_by_copy(&shape.table) else {
        return Ok(());
    };
    let lost: Vec<String> = session
        .inspect_target(&sql)
        .await?
        .iter()
        .filter_map(|r| {
            Some(format!(
                "{} {}",
                r.first()?.as_text()?,
                r.get(1)?.as_text()?
            ))
        })
        .collect();
    if lost.is_empty() {
        return Ok(());
    }
    let target = &shape.table;
    let statements = column_changes(dialect, target, added, widening);
    Err(Error::Job(format!(
        "cannot merge into {target}: its new or widened columns need a copy of it here (DDL is not transactional), which would lose its {}; nothing was written (add them in place first, then the merge needs no copy: {};)",
        lost.join(", "),
        statements.join("; ")
    )))
}

/// Inside the transaction, after the fill: merge `table`'s staging rows into the target (or
/// its copy), verify the result, and drop the staging table where DDL is transactional.
pub async fn merge(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    table: &Table,
    plan: &MergePlan,
) -> Result<Merged> {
    let target = &table.shape.table;
    let staging = &table.build;
    let into = plan.copy.as_ref().unwrap_or(target);
    let cols = plan.columns();
    let mut copied = None;
    match &plan.copy {
        Some(copy) => {
            session
                .change(&merge::copy_rows(
                    dialect,
                    copy,
                    target,
                    &plan.copied_columns(),
                ))
                .await?;
            // The target as copied: the fingerprint is a locking read, so it sees what the
            // INSERT … SELECT read (the latest committed rows, which that statement keeps
            // locked until commit). Not the copy: its widened columns print otherwise
            // (DECIMAL(3,1) `27.8` as DECIMAL(4,2) `27.80`) than the replaced table does.
            copied = match dialect.table_fingerprint(target, &plan.copied_columns()) {
                Some(sql) => session
                    .query_in_load(
                        &sql,
                        "merge: the target as copied (checked again after the swap)",
                    )
                    .await?
                    .map(|rows| fingerprint_texts(&rows)),
                None => None,
            };
        }
        None => {
            for (column, ty) in &plan.added {
                session
                    .change(&dialect.add_column(target, column, ty))
                    .await?;
            }
        }
    }
    // Typed merges: refuse values that cannot fit, widen the target (widen.rs).
    let altered = plan.copy.is_none().then_some(target);
    let at_staging = (staging, &table.shape);
    let widening = plan
        .widening
        .apply(session, dialect, altered, at_staging)
        .await?;
    let staged = table.build_shape();
    let staging_counts = session
        .query_in_load(
            &ddl::count_table_cells(dialect, &staged),
            "merge: rows and cells of the source's entities (staging)",
        )
        .await?
        .map(|r| row_counts(&r));
    let survey = session
        .query_in_load(
            &merge::survey(dialect, into, staging, &cols),
            "merge: entities new to the target, and entities unchanged",
        )
        .await?;
    let all = plan.all_columns();
    let untouched = session
        .query_in_load(
            &merge::untouched_counts(dialect, into, staging, &plan.keys, &all),
            "merge: rows and cells of the target's entities the source does not have",
        )
        .await?
        .map(|r| row_counts(&r));
    let (nulled, nulled_sample) =
        nulled::nulled(session, dialect, (into, staging), plan, &table.shape).await?;
    for sql in merge::upsert(dialect, into, staging, &cols) {
        session.change(&sql).await?;
    }
    if plan.on_missing == OnMissing::Delete {
        session
            .change(&merge::delete_missing(dialect, into, staging, &plan.keys))
            .await?;
    }
    // Typed merges: every merged cell is its staging cell, so no rounding can commit.
    let tables = (into, staging);
    widening
        .check_cells(session, dialect, tables, &table.shape, &plan.set)
        .await?;
    let merged_shape = TableShape {
        table: into.clone(),
        columns: all.iter().map(|c| PivotColumn::text(c, c)).collect(),
        ..table.shape.clone()
    };
    let merged = session
        .query_in_load(
            &ddl::count_table_cells(dialect, &merged_shape),
            "merge: verify rows and non-null cells (target before, less what was replaced or deleted, plus the source's)",
        )
        .await?
        .map(|r| row_counts(&r));
    if dialect.transactional_ddl() {
        session.change(&dialect.drop_table(staging)).await?;
    }
    let added_columns = plan.added.iter().map(|(c, _)| c.clone()).collect();
    // Pivoted, staged and verified, but with no column in the target (`ignore`).
    let ignored: Vec<(String, u64)> = staged
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| !plan.set.contains(&c.column))
        .map(|(p, c)| {
            let cells = staging_counts.as_ref().and_then(|n| n.get(p + 1).copied());
            (c.column.clone(), cells.unwrap_or(0))
        })
        .collect();
    let ignored_columns = ignored.iter().map(|(c, _)| c.clone()).collect();
    let ignored_cells = ignored.iter().map(|(_, n)| n).sum();
    let (Some(staging_counts), Some(survey), Some(untouched), Some(merged)) =
        (staging_counts, survey, untouched, merged)
    else {
        // A dry run: the statements are recorded, nothing is counted.
        let stats = MergeStats {
            table: target.to_string(),
            added_columns,
            kept_columns: plan.filled.clone(),
            nulled,
            nulled_sample,
            ignored_columns,
            column_types: widening.column_types(),
            ..MergeStats::default()
        };
        return Ok(Merged { stats, copied });
    };
    let survey = row_counts(&survey);
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    let staged_rows = at(&staging_counts, 0);
    let inserted = at(&survey, 0);
    let unchanged = at(&survey, 1);
    let keep = plan.on_missing == OnMissing::Keep;
    let deleted = if keep { 0 } else { at(&untouched, 0) };
    let kept = |i: usize| if keep { at(&untouched, i) } else { 0 };
    let mut expected = vec![kept(0) + staged_rows];
    for (i, column) in all.iter().enumerate() {
        let from_source = staged
            .columns
            .iter()
            .position(|c| {
                dialect.ident_key(&c.column) == dialect.ident_key(column)
                    && plan.set.contains(&c.column)
            })
            .map_or(0, |p| at(&staging_counts, p + 1));
        expected.push(kept(i + 1) + from_source);
    }
    if merged != expected {
        return Err(Error::Job(format!(
            "verification failed: after the merge {into} holds rows and cells {merged:?}, expected {expected:?} (untouched target rows plus the source's)"
        )));
    }
    let stats = MergeStats {
        table: target.to_string(),
        inserted,
        updated: staged_rows.saturating_sub(inserted + unchanged),
        unchanged,
        deleted,
        added_columns,
        kept_columns: plan.filled.clone(),
        nulled,
        nulled_sample,
        ignored_columns,
        ignored_cells,
        column_types: widening.column_types(),
    };
    Ok(Merged { stats, copied })
}

/// What one merge did, and where it went into a copy, the target's fingerprint as copied.
pub struct Merged {
    pub stats: MergeStats,
    pub copied: Option<Vec<String>>,
}

fn fingerprint_texts(rows: &[Vec<Value>]) -> Vec<String> {
    rows.iter()
        .flatten()
        .map(|v| v.as_text().unwrap_or_default())
        .collect()
}

/// Right after the copy replaced the target (non-transactional DDL): the replaced table must
/// be as the copy saw it. A write another session committed between the copy and the swap
/// would otherwise be swapped away: then the swap is undone, so that write stays in the
/// target, and the merge is refused.
pub async fn check_swapped(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    (target, built, replaced): (&TableRef, &TableRef, &TableRef),
    plan: &MergePlan,
    copied: &[String],
) -> Result<()> {
    let Some(sql) = dialect.table_fingerprint(replaced, &plan.copied_columns()) else {
        return Ok(());
    };
    let Some(now) = session
        .query_in_load(&sql, "merge: the replaced table, unchanged since the copy?")
        .await?
    else {
        return Ok(());
    };
    if fingerprint_texts(&now) == copied {
        return Ok(());
    }
    let back = dialect.swap_in(replaced, target, Some(built));
    if let Some(back) = back.first() {
        session.change(back).await.map_err(|e| {
            Error::Job(format!(
                "another session wrote to {target} while the merge was put in place, and undoing the swap failed ({e}): the table as that session left it is {replaced}"
            ))
        })?;
    }
    Err(Error::Job(format!(
        "another session wrote to {target} after the merge copied it (committed between the copy and the swap): the swap was undone so that write is kept; run the job again"
    )))
}

/// A merge into a split target: the target's tables as they exist (`<t>`, then `<t>_2`,
/// `<t>_3`, … up to the first missing one) with their attribute columns, so that the plan
/// keeps each attribute in its table ([`crate::plan::split_target`]). Empty when `<t>`
/// itself does not exist: the run creates the tables as planned. A gap (`<t>_3` without
/// `<t>_2`) is refused: the tables after it would be left behind, their attributes given
/// second columns.
pub async fn read_split_target(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    shape: &TableShape,
) -> Result<Vec<ExistingTable>> {
    let key_of = |name: &str| dialect.ident_key(name);
    let is_key = |c: &str| shape.entity.iter().any(|e| key_of(&e.name) == key_of(c));
    let name = |n: usize| crate::plan::split_table_name(&shape.table, n);
    let mut tables = Vec::new();
    loop {
        let table = name(tables.len());
        if !session.target_exists(&table).await? {
            let next = name(tables.len() + 1);
            if session.target_exists(&next).await? {
                return Err(Error::Job(format!(
                    "cannot merge into the split target {}: {next} exists but {table} does not; \
                     nothing was written: restore {table}, or drop the target's tables and run with if_exists: replace",
                    shape.table
                )));
            }
            return Ok(tables);
        }
        let rows = session
            .inspect_target(&dialect.column_types(&table))
            .await?;
        let columns = rows
            .iter()
            .filter_map(|r| r.first().and_then(Value::as_text))
            .filter(|c| !is_key(c))
            .collect();
        tables.push(ExistingTable { table, columns });
    }
}
