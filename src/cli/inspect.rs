//! `eavpivot inspect JOB`: survey the source before migrating it. One read-only scan
//! ([`crate::plan::inspect::Census`]), then the plan `run` would make on this database, and a
//! report readable at 1,000 attributes: the summary and warnings first, then the widest,
//! rarest and problem attributes, then all of them. Writes nothing, not even the embedded
//! database file (a missing one is replaced by an in-memory copy of the sample data).

use crate::dialect::query;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::job::load_sample_data;
use super::output::{print_stdout, with_json_failure};
use super::run::connect_options;
use super::{ConnectionArgs, VarArgs, Verbosity};
use crate::backend::{self, Backend, RowPipeline};
use crate::config::{ColumnType, Job};
use crate::dialect::Dialect;
use crate::error::Result;
use crate::plan::inspect::{AttributeReport, Census, Inspection, PlanSummary, TableSummary};
use crate::plan::{self, Plan, PlanOptions};
use crate::report::Preview;
use crate::value::Value;

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The job file (YAML), or a bundled job: `item_detail`, `builtin:item_detail`.
    pub job: PathBuf,
    /// Print the survey as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub vars: VarArgs,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Attributes listed in each of the widest / rarest / problem sections.
const TOP: usize = 10;

/// `inspect --json`: the survey under the same version fields as `run --json`'s report.
#[derive(serde::Serialize)]
struct InspectJson<'a> {
    ok: bool,
    schema_version: u32,
    eavpivot_version: &'static str,
    #[serde(flatten)]
    inspection: &'a Inspection,
}

pub fn run(args: &InspectArgs, verbosity: Verbosity) -> anyhow::Result<ExitCode> {
    with_json_failure(args.json, survey(args, verbosity))
}

fn survey(args: &InspectArgs, verbosity: Verbosity) -> anyhow::Result<ExitCode> {
    let loaded = args.vars.load_job(&args.job)?;
    let job = &loaded.job;
    let spec = args.connection.source_spec(job)?;
    let options = connect_options(&args.connection)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let inspection = runtime.block_on(async {
        verbosity.note(&format!("connecting to {}\n", spec.display()));
        let mut db: Box<dyn Backend> = match spec.missing_file() {
            // Never create the file: a missing database is an in-memory one.
            Some(_) => spec.driver.in_memory()?,
            None => backend::connect(&spec, &options).await?,
        };
        if spec.embedded {
            if let Some(from) = load_sample_data(db.as_mut(), &loaded).await? {
                verbosity.note(&format!(
                    "source table {} was missing: using sample data from {from} (in memory)\n",
                    job.source.table
                ));
            }
        }
        inspect(db.as_mut(), job, spec.display()).await
    })?;
    if args.json {
        let json = InspectJson {
            ok: true,
            schema_version: crate::report::SCHEMA_VERSION,
            eavpivot_version: crate::report::EAVPIVOT_VERSION,
            inspection: &inspection,
        };
        print_stdout(&format!("{}\n", serde_json::to_string_pretty(&json)?))?;
    } else {
        print_stdout(&render(&inspection))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The scan's pipeline: decodes each `(e…, a, v)` row into the census.
struct Scan<'a> {
    dialect: &'static dyn Dialect,
    census: &'a mut Census,
    entity_width: usize,
    bar: Option<ProgressBar>,
}

impl RowPipeline for Scan<'_> {
    fn push(&mut self, mut row: Vec<Value>) -> Result<()> {
        if row.len() != self.entity_width + 2 {
            return Err(crate::Error::Job(format!(
                "inspect: expected {} columns per source row, got {}",
                self.entity_width + 2,
                row.len()
            )));
        }
        let value = row.pop().unwrap_or(Value::Null);
        let name = plan::attribute_name(self.dialect, row.pop().unwrap_or(Value::Null))?;
        self.census.add(row, name, value);
        if self.census.source_rows & 4_095 == 0 {
            crate::interrupt::check_interrupt()?;
            if let Some(bar) = &self.bar {
                bar.set_position(self.census.source_rows);
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        self.census.finish();
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        Ok(())
    }

    fn take_ready(&mut self) -> Vec<Vec<Vec<Value>>> {
        Vec::new()
    }

    fn ready_rows(&self) -> usize {
        0
    }
}

/// A spinner with rows and rows/s on a terminal (the total is what the scan finds out).
fn progress_bar() -> Option<ProgressBar> {
    let target = ProgressDrawTarget::stderr_with_hz(4);
    if target.is_hidden() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(None, target);
    if let Ok(style) = ProgressStyle::with_template("inspect {spinner} {human_pos} rows, {per_sec}")
    {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(250));
    Some(bar)
}

/// The survey: one ordered scan, then the plans (as written, and typed) from its figures.
pub async fn inspect(db: &mut dyn Backend, job: &Job, connection: &str) -> Result<Inspection> {
    let dialect = db.dialect();
    let mut source_query = crate::plan::source_query(job);
    // Values read as a run reads them (Session::describe_value).
    crate::execute::Session::new(&mut *db, false)
        .describe_value(&mut source_query)
        .await?;
    let entity_types = db
        .column_types(&dialect.describe_entity(&source_query))
        .await?;
    let mut census = Census::default();
    let mut scan = Scan {
        dialect,
        census: &mut census,
        entity_width: job.entity.len(),
        bar: progress_bar(),
    };
    db.stream_into(&query::ordered_rows(dialect, &source_query), &mut scan, &[])
        .await
        .map_err(|e| e.with_context(&format!("inspecting {}", job.source.table)))?;
    let discovery = census.discovery();
    let mut options = crate::transform::plan_options(job, PlanOptions::default());
    // Named as a run names them: by the server's comparison where the dialect asks it.
    if let Some(ask) = plan::naming::ClassQuery::of(job, dialect, &discovery.attributes) {
        let rows = db.query(&ask.sql).await?;
        options.identifier_classes = Some(ask.classes(&rows)?);
    }
    let written = plan::build_plan(job, dialect, &discovery, &entity_types, options.clone());
    let mut typed_job = job.clone();
    typed_job.pivot.column_type = ColumnType::Infer;
    let typed = plan::build_plan(&typed_job, dialect, &discovery, &entity_types, options).ok();
    let mut summary = PlanSummary::default();
    match &written {
        Ok(p) => {
            summary.strategy = Some(format!("{} ({})", p.strategy.as_str(), p.strategy_reason));
            summary.tables = p
                .tables
                .iter()
                .map(|t| TableSummary {
                    table: t.table.to_string(),
                    columns: t.columns.len(),
                    row: plan::table_row_estimate(dialect, &discovery, t),
                })
                .collect();
            summary.warnings.extend(p.notes.iter().cloned());
        }
        Err(e) => summary
            .warnings
            .push(format!("run would refuse this job: {e}")),
    }
    summary.warnings.extend(warnings(
        job,
        &census,
        &summary,
        written.as_ref().ok(),
        typed.as_ref(),
    ));
    let attributes = census
        .attributes
        .iter()
        .map(|a| {
            attribute_report(
                dialect,
                a,
                census.entities,
                written.as_ref().ok(),
                typed.as_ref(),
            )
        })
        .collect();
    Ok(Inspection {
        job: job.name.clone(),
        dialect: dialect.name().to_string(),
        connection: connection.to_string(),
        source_rows: census.source_rows,
        entities: census.entities,
        attributes_found: census.attributes.len(),
        empty_name_rows: census.empty_name_rows,
        null_key_rows: census.null_key_rows,
        conflicting_pairs: census.conflicts(),
        fullest_entity: census.fullest_entity,
        plan: summary,
        attributes,
    })
}

fn warnings(
    job: &Job,
    census: &Census,
    summary: &PlanSummary,
    written: Option<&Plan>,
    typed: Option<&Plan>,
) -> Vec<String> {
    let mut out = Vec::new();
    if census.empty_name_rows > 0 {
        out.push(format!(
            "{} rows have a NULL or empty attribute name (pivot.empty_names: skip counts them, error refuses)",
            census.empty_name_rows
        ));
    }
    if census.null_key_rows > 0 {
        out.push(format!(
            "{} rows have a NULL entity key: a keyed target refuses them",
            census.null_key_rows
        ));
    }
    if census.conflicts() > 0 {
        out.push(format!(
            "{} entity/attribute pairs hold more than one value: pivot.aggregate {} keeps one",
            census.conflicts(),
            format!("{:?}", job.pivot.aggregate).to_lowercase()
        ));
    }
    for t in &summary.tables {
        if let Some(r) = t.row.filter(|r| r.greatest > r.limit) {
            out.push(format!(
                "{}: a row may take up to {} bytes of the {}-byte limit when every cell is at its longest",
                t.table, r.greatest, r.limit
            ));
        }
    }
    if let (Some(w), Some(t)) = (written, typed) {
        if job.pivot.column_type != ColumnType::Infer && t.tables.len() < w.tables.len() {
            out.push(format!(
                "typed columns (pivot.column_type: infer) would need {} tables instead of {}",
                t.tables.len(),
                w.tables.len()
            ));
        }
    }
    out
}

fn attribute_report(
    dialect: &dyn Dialect,
    a: &plan::inspect::AttributeCensus,
    entities: u64,
    written: Option<&Plan>,
    typed: Option<&Plan>,
) -> AttributeReport {
    let placed = written.and_then(|p| p.columns().find(|(_, c)| c.attribute == a.name));
    let renamed = written.and_then(|p| p.renamed.iter().find(|r| r.attribute == a.name));
    let typed_column = typed.and_then(|p| p.columns().find(|(_, c)| c.attribute == a.name));
    let (kind, why) = a.survey.decide();
    let mixed = kind.is_text() && a.survey.typed_values > 0;
    let (sql_type, type_reason) = match typed_column.and_then(|(_, c)| c.typed.as_ref()) {
        Some(t) => (t.sql_type.clone(), t.why.clone()),
        None => (dialect.column_sql_type(&kind), why),
    };
    AttributeReport {
        attribute: a.name.clone(),
        column: placed.map(|(_, c)| c.column.clone()),
        renamed_because: renamed.map(|r| r.reason.to_string()),
        table: placed.map(|(t, _)| t.table.to_string()),
        rows: a.rows,
        values: a.values,
        entities: a.entities,
        fill_percent: if entities == 0 {
            0.0
        } else {
            (a.entities as f64 * 1000.0 / entities as f64).round() / 10.0
        },
        conflicting_entities: a.conflicting,
        min_bytes: a.survey.min_bytes,
        max_bytes: a.survey.max_bytes,
        min_chars: a.survey.min_chars,
        max_chars: a.survey.max_chars,
        sql_type,
        type_reason,
        mixed,
    }
}

/// The human report: summary, plan and warnings, the top lists, the full table.
pub fn render(i: &Inspection) -> String {
    let mut out = format!(
        "inspect: job {} on {} ({})\nsource rows {} | entities {} | attributes {} | NULL/empty names {} | NULL keys {} | conflicting pairs {} | fullest entity {} attributes\n",
        i.job, i.dialect, i.connection, i.source_rows, i.entities, i.attributes_found,
        i.empty_name_rows, i.null_key_rows, i.conflicting_pairs, i.fullest_entity
    );
    for t in &i.plan.tables {
        let row = t.row.map_or_else(
            || "no row size limit".to_string(),
            |r| format!("row {}..{} of {} bytes", r.least, r.greatest, r.limit),
        );
        out.push_str(&format!(
            "plan: table {} ({} columns, {row})\n",
            t.table, t.columns
        ));
    }
    if let Some(s) = &i.plan.strategy {
        out.push_str(&format!("plan: strategy {s}\n"));
    }
    for w in &i.plan.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    let mut widest: Vec<&AttributeReport> = i.attributes.iter().collect();
    widest.sort_by_key(|a| std::cmp::Reverse(a.max_bytes));
    let mut rarest: Vec<&AttributeReport> = i.attributes.iter().collect();
    rarest.sort_by(|a, b| a.fill_percent.total_cmp(&b.fill_percent));
    let problems: Vec<&AttributeReport> = i.attributes.iter().filter(|a| a.is_problem()).collect();
    out.push_str(&section(&format!("widest {TOP} (longest value)"), &widest));
    out.push_str(&section(&format!("rarest {TOP} (fill %)"), &rarest));
    out.push_str(&section(
        &format!("problems ({} in all; first {TOP})", problems.len()),
        &problems,
    ));
    out.push_str(&format!("\nall {} attributes:\n", i.attributes.len()));
    out.push_str(&table(i.attributes.iter().collect::<Vec<_>>().as_slice()));
    out
}

fn section(title: &str, rows: &[&AttributeReport]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{title}:\n");
    for a in rows.iter().take(TOP) {
        out.push_str(&format!(
            "  {}: {} bytes max, {}% filled, {} conflicting, {} ({}){}\n",
            a.attribute.escape_debug(),
            a.max_bytes,
            a.fill_percent,
            a.conflicting_entities,
            a.sql_type,
            a.type_reason,
            a.renamed_because
                .as_ref()
                .map(|r| format!(", renamed: {r}"))
                .unwrap_or_default()
        ));
    }
    out
}

fn table(rows: &[&AttributeReport]) -> String {
    let header = [
        "attribute",
        "column",
        "rows",
        "entities",
        "fill %",
        "conflicts",
        "bytes",
        "chars",
        "type",
    ];
    let range = |lo: Option<u64>, hi: u64| lo.map_or(String::new(), |lo| format!("{lo}-{hi}"));
    let preview = Preview {
        table: String::new(),
        header: header.iter().map(|h| h.to_string()).collect(),
        rows: rows
            .iter()
            .map(|a| {
                vec![
                    Value::Text(a.attribute.escape_debug().to_string()),
                    a.column.clone().map_or(Value::Null, Value::Text),
                    Value::Int(a.rows as i64),
                    Value::Int(a.entities as i64),
                    Value::Float(a.fill_percent),
                    Value::Int(a.conflicting_entities as i64),
                    Value::Text(range(a.min_bytes, a.max_bytes)),
                    Value::Text(range(a.min_chars, a.max_chars)),
                    Value::Text(a.sql_type.clone()),
                ]
            })
            .collect(),
        total_rows: rows.len() as u64,
    };
    preview.render()
}
