//! What a run tells the user: a short summary on stderr, the `--json` object on stdout (a
//! contract with scripts: fields may be added, never renamed or removed), the dry-run script,
//! and a preview of the finished table.

use std::time::Duration;

use serde::Serialize;

use crate::backend::Backend;
use crate::config::Job;
use crate::dialect::{entity_order, Dialect};
use crate::error::Result;
use crate::execute::{LoadStats, Statement, StatementKind};
use crate::plan::{Discovery, Plan, Renamed};
use crate::value::Value;

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
    pub job: String,
    pub dry_run: bool,
    pub dialect: String,
    pub connection: String,
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
            job: job.name.clone(),
            dry_run,
            dialect: dialect.name().to_string(),
            connection: String::new(),
            target: job.target.table.to_string(),
            tables: plan.tables.iter().map(|t| t.table.to_string()).collect(),
            strategy: plan.strategy,
            strategy_reason: plan.strategy_reason.clone(),
            notes: plan.notes.clone(),
            attributes_found: discovery.attributes.len(),
            columns: plan
                .columns()
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
            cells_written: stats.cells_written,
            conflicts: stats.conflicts,
            skipped_empty_names: plan.empty_name_rows,
            sample_data_loaded: false,
            transforms: stats.transforms.clone(),
            elapsed_ms: elapsed.as_millis(),
            statements: log.iter().map(|s| s.sql.clone()).collect(),
            statement_log: log.to_vec(),
        }
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
        for r in &self.renamed {
            out.push_str(&format!(
                "renamed: attribute '{}' -> column '{}' ({})\n",
                r.attribute.escape_debug(),
                r.column.escape_debug(),
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
            out.push_str(&format!("transform: {t}\n"));
        }
        out
    }
}

/// The dry-run script: every statement in order, runnable, with the plan as comments.
pub fn dry_run_script(report: &Report, log: &[Statement]) -> String {
    let mut out = format!(
        "-- eavpivot dry run: job {} on {} ({})\n-- {}\n",
        report.job, report.dialect, report.connection, report.strategy_reason
    );
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

/// The first rows of the finished target, for display after a run.
#[derive(Debug, Clone)]
pub struct Preview {
    pub table: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

impl Preview {
    pub async fn read(
        backend: &mut dyn Backend,
        dialect: &dyn Dialect,
        plan: &Plan,
        n: usize,
    ) -> Result<Preview> {
        let shape = &plan.tables[0];
        let query = format!(
            "SELECT * FROM {} ORDER BY {}",
            shape.table,
            entity_order(dialect, shape)
        );
        let rows = backend.query(&dialect.limit(&query, n as u64)).await?;
        let header = shape
            .entity
            .iter()
            .map(|e| e.name.clone())
            .chain(shape.columns.iter().map(|c| c.column.clone()))
            .collect();
        Ok(Preview {
            table: shape.table.to_string(),
            header,
            rows,
        })
    }

    /// A plain text table.
    pub fn render(&self) -> String {
        let cells: Vec<Vec<String>> = std::iter::once(self.header.clone())
            .chain(self.rows.iter().map(|r| {
                r.iter()
                    .map(|v| {
                        if v.is_null() {
                            String::new()
                        } else {
                            v.to_string()
                        }
                    })
                    .collect()
            }))
            .collect();
        let cols = self.header.len();
        let widths: Vec<usize> = (0..cols)
            .map(|c| {
                cells
                    .iter()
                    .map(|r| r.get(c).map_or(0, |s| s.chars().count()).min(24))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for (i, row) in cells.iter().enumerate() {
            let line: Vec<String> = (0..cols)
                .map(|c| {
                    let s: String = row
                        .get(c)
                        .map(String::as_str)
                        .unwrap_or("")
                        .chars()
                        .take(24)
                        .collect();
                    format!("{s:<w$}", w = widths[c])
                })
                .collect();
            out.push_str(line.join(" | ").trim_end());
            out.push('\n');
            if i == 0 {
                let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
                out.push_str(&rule.join("-+-"));
                out.push('\n');
            }
        }
        out
    }
}
