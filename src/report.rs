//! What a run tells the user: a short summary on stderr, the `--json` object on stdout (a
//! contract with scripts: fields may be added, never renamed or removed), the dry-run script,
//! and a preview of the finished table.

use std::time::Duration;

use serde::Serialize;

use crate::config::Job;
use crate::dialect::Dialect;
use crate::plan::{Discovery, Plan, Renamed};
use crate::value::Value;

/// `schema_version` of the `--json` report (and of its failure object).
pub const SCHEMA_VERSION: u32 = 1;
/// `eavpivot_version` of the `--json` report.
pub const EAVPIVOT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// One statement a run sent (or, in a dry run, would send), in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementKind {
    /// Read-only; runs in a dry run too (discovery, existence checks, type probes).
    Inspect,
    /// Changes something, or only makes sense inside the load's transaction.
    Change,
}

#[derive(Debug, Clone, Serialize)]
pub struct Statement {
    pub kind: StatementKind,
    pub sql: String,
    /// A comment printed above the statement in a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Sent to the source database of a run across two databases (else to the target).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub on_source: bool,
}

/// What the load wrote, for verification and the report.
#[derive(Debug, Clone, Default)]
pub struct LoadStats {
    pub rows_written: u64,
    pub cells_written: u64,
    pub conflicts: u64,
    pub transforms: Vec<serde_json::Value>,
    /// One entry per target table merged into (`if_exists: merge` on an existing target).
    pub merged: Vec<MergeStats>,
}

/// What `if_exists: merge` did to one existing target table.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct MergeStats {
    pub table: String,
    /// Source entities new to the target.
    pub inserted: u64,
    /// Source entities already in the target with at least one cell changed.
    pub updated: u64,
    /// Source entities already in the target with every cell as before.
    pub unchanged: u64,
    /// Target entities the source no longer has, deleted (`target.on_missing: delete`).
    pub deleted: u64,
    /// Columns added for attributes the target did not have yet.
    pub added_columns: Vec<String>,
    /// The target's own columns the database fills (a DEFAULT, identity, generated) that
    /// are no attribute's: left as they were.
    pub kept_columns: Vec<String>,
    /// Cells of touched entities that held a value and are NULL after the merge (the
    /// source no longer has that attribute for that entity).
    pub nulled: u64,
    /// Up to [`NULLED_SAMPLE`] of them.
    pub nulled_sample: Vec<NulledCell>,
    /// Columns of this run's pivot the target has not, left out (`pivot.on_new_attributes:
    /// ignore`), and their non-null cells, which were not written.
    pub ignored_columns: Vec<String>,
    pub ignored_cells: u64,
    /// The merged table's type of each column whose type is not the one this run gave it
    /// (widened, or the target's own): `columns[].type` reports these.
    #[serde(skip)]
    pub column_types: Vec<ColumnType>,
}

/// Whether `column` of `table` was left out of a merge into it ([`MergeStats::ignored_columns`]).
fn ignored(merged: &[MergeStats], table: &str, column: &str) -> bool {
    merged
        .iter()
        .any(|m| m.table == table && m.ignored_columns.iter().any(|c| c == column))
}

/// How many nulled cells a merge's report lists.
pub const NULLED_SAMPLE: usize = 20;

/// One cell a merge set from a value to NULL.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct NulledCell {
    /// The entity key, one text per entity column.
    pub entity: Vec<String>,
    pub column: String,
    /// The value the cell held before the merge.
    pub previous: String,
}

/// A merged column's real type after the run, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnType {
    pub column: String,
    pub sql_type: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ColumnReport {
    pub attribute: String,
    pub column: String,
    pub table: String,
    /// The column's declared SQL type.
    #[serde(rename = "type")]
    pub sql_type: String,
    /// Why that type, where the job types its columns (`column_type: infer`, `pivot.types`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_reason: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Always true here; a failed run under `--json` prints `{"ok": false, "exit_code", "error"}`.
    pub ok: bool,
    /// The layout of this object ([`SCHEMA_VERSION`]); raised only if a field ever changes meaning.
    pub schema_version: u32,
    /// The eavpivot that wrote it.
    pub eavpivot_version: &'static str,
    pub job: String,
    pub dry_run: bool,
    pub dialect: String,
    pub connection: String,
    /// The database written to when it is not the one read (`target.connection`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_connection: Option<String>,
    pub target: String,
    pub tables: Vec<String>,
    pub strategy: crate::plan::Strategy,
    pub strategy_reason: String,
    /// What the plan could not do as asked and why (e.g. no primary key on the target).
    pub notes: Vec<String>,
    pub attributes_found: usize,
    pub columns: Vec<ColumnReport>,
    pub renamed: Vec<Renamed>,
    pub excluded: Vec<String>,
    pub rows_written: u64,
    pub cells_written: u64,
    pub conflicts: u64,
    pub skipped_empty_names: u64,
    pub sample_data_loaded: bool,
    pub transforms: Vec<serde_json::Value>,
    /// `if_exists: merge`: per target table merged into, what changed (empty otherwise).
    pub merged: Vec<MergeStats>,
    pub elapsed_ms: u128,
    pub statements: Vec<String>,
    /// The same statements with their kinds and notes, for the dry-run script.
    #[serde(skip)]
    pub statement_log: Vec<Statement>,
}

impl Report {
    #[allow(clippy::too_many_arguments)] // one call site; each argument is a distinct source
    pub fn new(
        job: &Job,
        dialect: &dyn Dialect,
        plan: &Plan,
        discovery: &Discovery,
        log: &[Statement],
        stats: &LoadStats,
        dry_run: bool,
        elapsed: Duration,
    ) -> Report {
        Report {
            ok: true,
            schema_version: SCHEMA_VERSION,
            eavpivot_version: EAVPIVOT_VERSION,
            job: job.name.clone(),
            dry_run,
            dialect: dialect.name().to_string(),
            connection: String::new(),
            target_connection: None,
            target: job.target.table.to_string(),
            tables: plan.tables.iter().map(|t| t.table.to_string()).collect(),
            strategy: plan.strategy,
            strategy_reason: plan.strategy_reason.clone(),
            notes: plan.notes.clone(),
            attributes_found: discovery.attributes.len(),
            columns: plan
                .columns()
                .filter(|(t, c)| !ignored(&stats.merged, &t.table.to_string(), &c.column))
                .map(|(t, c)| ColumnReport {
                    attribute: c.attribute.clone(),
                    column: c.column.clone(),
                    table: t.table.to_string(),
                    sql_type: c.sql_type(t).to_string(),
                    type_reason: c.typed.as_ref().map(|ty| ty.why.clone()),
                })
                .collect(),
            renamed: plan.renamed.clone(),
            excluded: plan.excluded.clone(),
            rows_written: stats.rows_written,
            cells_written: stats.cells_written
                - stats.merged.iter().map(|m| m.ignored_cells).sum::<u64>(),
            conflicts: stats.conflicts,
            skipped_empty_names: plan.empty_name_rows,
            sample_data_loaded: false,
            transforms: stats.transforms.clone(),
            merged: stats.merged.clone(),
            elapsed_ms: elapsed.as_millis(),
            statements: log.iter().map(|s| s.sql.clone()).collect(),
            statement_log: log.to_vec(),
        }
        .with_merged_types()
    }

    /// `columns[].type` of a merge: the target's real type (widened, or its own where it
    /// already held this run's values), not this run's inference.
    fn with_merged_types(mut self) -> Report {
        for m in &self.merged {
            for t in &m.column_types {
                if let Some(c) = self
                    .columns
                    .iter_mut()
                    .find(|c| c.table == m.table && c.column == t.column)
                {
                    c.sql_type = t.sql_type.clone();
                    c.type_reason = Some(t.reason.clone());
                }
            }
        }
        self
    }

    /// The human summary, for stderr.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let verb = if self.dry_run { "would write" } else { "wrote" };
        out.push_str(&format!(
            "job {}: {} attributes found, {} columns in {}; strategy {} ({})\n",
            self.job,
            self.attributes_found,
            self.columns.len(),
            self.tables.join(", "),
            self.strategy.as_str(),
            self.strategy_reason
        ));
        if !self.dry_run {
            out.push_str(&format!(
                "{verb} {} rows, {} non-null cells; conflicts: {}; skipped rows with empty attribute names: {}; {} ms\n",
                self.rows_written, self.cells_written, self.conflicts, self.skipped_empty_names, self.elapsed_ms
            ));
        }
        for m in self.merged.iter().filter(|_| !self.dry_run) {
            out.push_str(&format!(
                "merged into {}: {} inserted, {} updated, {} unchanged, {} deleted",
                m.table, m.inserted, m.updated, m.unchanged, m.deleted
            ));
            if m.nulled > 0 {
                out.push_str(&format!(
                    "; {} cells set from a value to NULL (the source no longer has them)",
                    m.nulled
                ));
            }
            if !m.added_columns.is_empty() {
                out.push_str(&format!("; columns added: {}", m.added_columns.join(", ")));
            }
            if !m.ignored_columns.is_empty() {
                out.push_str(&format!(
                    "; not in the target, ignored (pivot.on_new_attributes: ignore): {} ({} cells not written)",
                    m.ignored_columns.join(", "),
                    m.ignored_cells
                ));
            }
            if !m.kept_columns.is_empty() {
                out.push_str(&format!(
                    "; columns the database fills, left as they were: {}",
                    m.kept_columns.join(", ")
                ));
            }
            out.push('\n');
        }
        for r in &self.renamed {
            out.push_str(&format!(
                "renamed: attribute {} -> column {} ({})\n",
                crate::error::shown(&r.attribute),
                crate::error::shown(&r.column),
                r.reason
            ));
        }
        if !self.excluded.is_empty() {
            out.push_str(&format!("excluded: {}\n", self.excluded.len()));
        }
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        for t in self.transforms.iter().filter(|t| !t.is_null()) {
            out.push_str(&crate::transform::sentence(t));
            out.push('\n');
        }
        out
    }

    /// The attribute -> column map, one line each, for `--verbose`.
    pub fn column_map(&self) -> String {
        self.columns
            .iter()
            .map(|c| {
                format!(
                    "column: '{}' -> {}.{}\n",
                    c.attribute.escape_debug(),
                    c.table,
                    c.column
                )
            })
            .collect()
    }
}

/// The dry-run script: every statement in order, runnable, with the plan as comments.
pub fn dry_run_script(report: &Report, log: &[Statement]) -> String {
    let mut out = format!(
        "-- eavpivot dry run: job {} on {} ({})\n-- {}\n",
        report.job, report.dialect, report.connection, report.strategy_reason
    );
    let across = log.iter().any(|s| s.on_source);
    if let Some(target) = &report.target_connection {
        out.push_str(&format!(
            "-- source: {}; target: {target} ({})\n",
            report.connection, report.dialect
        ));
    }
    for n in &report.notes {
        out.push_str(&format!("-- note: {}\n", comment_safe(n)));
    }
    out.push_str("-- attribute -> column:\n");
    for c in &report.columns {
        out.push_str(&format!(
            "--   {} -> {} ({})",
            comment_safe(&c.attribute),
            comment_safe(&c.column),
            c.table
        ));
        if let Some(why) = &c.type_reason {
            // Values in a reason are already escaped (no raw newline can end the comment).
            out.push_str(&format!(
                " {}: {}",
                c.sql_type,
                why.replace(['\n', '\r'], " ")
            ));
        }
        out.push('\n');
    }
    for s in log {
        let ran = match s.kind {
            StatementKind::Inspect => "-- read-only, ran during the dry run:\n",
            StatementKind::Change => "",
        };
        out.push('\n');
        out.push_str(ran);
        if across {
            let side = if s.on_source { "source" } else { "target" };
            out.push_str(&format!("-- on the {side} database\n"));
        }
        if let Some(note) = &s.note {
            out.push_str(&format!("-- {note}\n"));
        }
        out.push_str(&s.sql);
        out.push_str(";\n");
    }
    out
}

/// Newlines in a name would end a `--` comment early and turn the rest into SQL.
fn comment_safe(text: &str) -> String {
    text.escape_debug().to_string()
}

/// The first rows of the finished target, for display after a run (read by
/// [`crate::execute::preview`]; this module only formats it).
#[derive(Debug, Clone)]
pub struct Preview {
    pub table: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    /// Rows the table holds (a merge's target holds more than the run wrote).
    pub total_rows: u64,
}

impl Preview {
    /// A plain text table, aligned by display width, long values cut with `…`.
    pub fn render(&self) -> String {
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|v| v.as_text().unwrap_or_default()).collect())
            .collect();
        crate::display::render_table(&self.header, &rows)
    }

    /// Keep `rows` rows and then the rest of the last one's group (rows sharing the first
    /// `key_columns - 1` entity values: a whole grid keyed `(grid, row)`, not its first five
    /// rows).
    /// False when rows were read but dropped for it not being a whole group.
    pub fn keep_whole_groups(&mut self, rows: usize, key_columns: usize) -> bool {
        let group = key_columns.saturating_sub(1);
        if self.rows.len() <= rows {
            return true;
        }
        let mut keep = rows;
        if group > 0 && rows > 0 {
            let last = &self.rows[rows - 1][..group];
            keep += self.rows[rows..]
                .iter()
                .take_while(|r| &r[..group] == last)
                .count();
        }
        let whole = keep < self.rows.len();
        self.rows.truncate(keep);
        whole
    }
}
