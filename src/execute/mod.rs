//! Run a job: discover → plan → (in one transaction) create, load, verify, swap → commit.
//!
//! Nothing is written before the plan has passed every check, every write happens inside one
//! transaction (or, where DDL is not transactional, in staging tables made visible by one
//! rename), and verification runs before commit. Any failure rolls back and says so: no
//! half-built target, and the source is only ever read.

mod discover;
mod fault;
mod in_database;
mod keys;
mod link;
mod load;
pub mod preview;
pub mod progress;
pub mod session;
pub mod stream;
mod verify;
pub mod write;

use crate::dialect::query;
use std::time::Instant;

use crate::backend::Backend;
use crate::config::{Aggregate, IfExists, Job, Split, StrategyName};
use crate::dialect::{Dialect, SourceQuery};
use crate::error::{Error, Result};
use crate::plan::{self, Plan, PlanOptions, Strategy};
use crate::report::{Preview, Report};
use crate::transform;
use crate::value::{first_int, Value};

pub use crate::report::LoadStats;
pub use session::{Session, Statement, StatementKind};
use write::{Policy, Writes};

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub dry_run: bool,
    pub plan: PlanOptions,
    /// Rows of the finished table to read back for display (0 = none).
    pub preview_rows: usize,
    /// No progress bar even on a terminal (`--quiet`).
    pub no_progress: bool,
}

/// The result of a run: the report and, when asked for, the first rows of the target.
pub struct Outcome {
    pub report: Report,
    pub plan: Plan,
    pub preview: Option<Preview>,
}

pub async fn run_job(
    job: &Job,
    backend: &mut dyn Backend,
    options: &RunOptions,
) -> Result<Outcome> {
    if let Some(work) = transform::in_database(job) {
        return in_database::run_job(job, work, backend, options).await;
    }
    run(job, Session::new(backend, options.dry_run), options).await
}

/// Read the source from `source` and write the target into `target`: two databases, by the
/// stream (the only strategy that can move rows between them).
pub async fn run_job_across(
    job: &Job,
    source: &mut dyn Backend,
    target: &mut dyn Backend,
    options: &RunOptions,
) -> Result<Outcome> {
    if let Some(work) = transform::in_database(job) {
        return Err(Error::Usage(format!(
            "{} runs inside one database: remove target.connection",
            work.label()
        )));
    }
    if options.plan.strategy.unwrap_or(job.strategy) == StrategyName::Pushdown {
        return Err(Error::Usage(
            "strategy pushdown runs inside one database, but the target is in another (target.connection): use stream or auto".into(),
        ));
    }
    let options = RunOptions {
        plan: PlanOptions {
            across_databases: true,
            ..options.plan.clone()
        },
        ..options.clone()
    };
    run(
        job,
        Session::across(source, target, options.dry_run),
        &options,
    )
    .await
}

async fn run(job: &Job, mut session: Session<'_>, options: &RunOptions) -> Result<Outcome> {
    let started = Instant::now();
    let source = session.source_dialect();
    let dialect = session.backend.dialect();
    let whole_scope = first_merge_of_a_delta(&mut session, job).await?;
    let job = whole_scope.as_ref().unwrap_or(job);
    let mut transforms = transform::build(job)?;

    // The reads before the plan share one source query; the plan keeps its own (`plan.source`).
    let mut source_query = plan::source_query(job);
    // The value's type, as the source describes it: whether it is read as another type to
    // reach us exactly (before discovery, which infers types from it), how both strategies keep
    // the same value of a conflicting pair (texts by their bytes, numbers by value: the stream
    // reads a decimal as its text), and where the pushdown cannot write it as the stream does
    // (a type its MAX does not take, a conversion to text that rounds).
    source_query.value_type = session.describe_value(&mut source_query).await?;
    let collates = keys::exact_attribute_key(&mut session, source, job, &mut source_query).await?;
    let mut discovery =
        discover::discover(&mut session, source, (job, &source_query), &transforms).await?;
    let source_types = session.describe_keys(&mut source_query).await?;
    let (entity_types, type_notes) = match session.across_databases() {
        true => map_entity_types(source, dialect, &source_types),
        false => (source_types, Vec::new()),
    };
    if transforms.is_empty() {
        let dialects = (source, dialect);
        let job_source = (job, &source_query);
        count_fullest_entity(
            &mut session,
            dialects,
            job_source,
            &mut discovery,
            &entity_types,
        )
        .await?;
    }
    let mut plan_options = options.plan.clone();
    // Only `auto` weighs the link, and only within one database (across two, only the stream
    // can run).
    if plan_options.strategy.unwrap_or(job.strategy) == StrategyName::Auto
        && !session.across_databases()
    {
        plan_options.link = link::measure(&mut *session.backend, job, &discovery).await;
    }
    if let Some(ask) = plan::naming::ClassQuery::of(job, dialect, &discovery.attributes) {
        let rows = session.inspect_target(&ask.sql).await?;
        plan_options.identifier_classes = Some(ask.classes(&rows)?);
    }
    let mut plan = plan::build_plan(job, dialect, &discovery, &entity_types, plan_options)?;
    plan.source
        .attribute_key
        .clone_from(&source_query.attribute_key);
    plan.source.entity.clone_from(&source_query.entity);
    plan.source.value.clone_from(&source_query.value);
    plan.source.value_type.clone_from(&source_query.value_type);
    plan.notes.extend(type_notes);
    if whole_scope.is_some() {
        plan.notes.push(format!(
            "{} does not exist yet: this first merge loads the whole scope (source.where); source.changed selects the delta from the next run on",
            job.target.table
        ));
    }
    if whole_scope.is_none() && query::delta_read_directly(source, &plan.source) {
        plan.notes.push(
            "source.changed tests only the entity key: the source is filtered by it directly (its rows are whole entities), not through the entities with a row matching it".into(),
        );
    }
    if plan.source_rows == 0 {
        // The delta names no entity (build_plan refuses every other plan without a column).
        // One that names entities whose rows all lack an attribute name goes on: those
        // entities are re-pivoted like any other, to no cell.
        plan.notes.push(
            "source.changed selects no entity: nothing to merge, the target is as it was".into(),
        );
        let stats = LoadStats {
            merged: vec![crate::report::MergeStats {
                table: job.target.table.to_string(),
                ..Default::default()
            }],
            ..Default::default()
        };
        return finish(session, job, plan, &discovery, &stats, options, started).await;
    }
    if plan.strategy == Strategy::Pushdown && !transforms.is_empty() {
        return Err(Error::Usage(
            "transforms need strategy: stream (or auto); pushdown cannot run them".into(),
        ));
    }
    if plan.strategy == Strategy::Pushdown {
        let collates = match collates {
            Some(known) => known,
            None => keys::may_collate(&mut session, dialect, &plan.source).await?,
        };
        if let Some(reason) = stream_for_value_type(
            job,
            &options.plan,
            dialect,
            plan.source.value_type.as_deref(),
        )? {
            plan.strategy = Strategy::Stream;
            plan.strategy_reason = reason;
        } else {
            if collates {
                keys::refuse_keys_one_under_collation(
                    &mut session,
                    dialect,
                    (job, &plan.source),
                    &entity_types,
                )
                .await?;
            }
            // An engine that orders text as it compares it (SQLite: BINARY unless declared)
            // needs no other order unless the value may collate.
            if collates || !dialect.orders_text_as_it_compares() {
                plan.source.value_order =
                    query::value_order(dialect, plan.source.value_type.as_deref());
            }
        }
    }
    let redrawn = match job.target.if_exists == IfExists::Merge && job.target.split != Split::Off {
        true => follow_split_target(&mut session, job, &mut plan).await?,
        false => None,
    };
    let companions = transforms
        .iter()
        .flat_map(|t| t.side_table_shapes())
        .map(|side| load::side_shape(dialect, &side))
        .collect();
    let mut writes = Writes::prepare(
        &mut session,
        &job.name,
        Policy::of(job),
        &job.source.tables(),
        plan.tables.clone(),
        companions,
    )
    .await?;
    writes.guard_merges(job, &plan.source);
    // After prepare: the source guard and the lock speak before this refusal.
    if let (Some(last), Some(redrawn)) = (plan.tables.last(), &redrawn) {
        plan::split_target::refuse_overflow(job, dialect, &discovery, last, redrawn)?;
    }
    plan.notes
        .extend(writes.plan_distribution(&mut session, job).await?);
    // An existing target's key columns keep their names (an older table's case); a merged
    // attribute takes its own existing column, never another attribute's.
    for (planned, table) in plan.tables.iter_mut().zip(writes.tables().targets()) {
        planned.entity.clone_from(&table.shape.entity);
        planned.columns.clone_from(&table.shape.columns);
        for r in table.merge.iter().flat_map(|m| &m.renamed) {
            plan.renamed.retain(|p| p.attribute != r.attribute);
            plan.renamed.push(r.clone());
        }
    }
    let columns: Vec<_> = plan.tables.iter().flat_map(|t| &t.columns).collect();
    plan.renamed.retain(|r| {
        columns
            .iter()
            .any(|c| c.attribute == r.attribute && c.column == r.column)
    });
    plan.notes.extend_from_slice(writes.notes());
    // A transform may rewrite entity keys: the source's NULL count then proves nothing.
    if transforms.is_empty() {
        for table in writes.tables().targets() {
            keys::refuse_null_keys(dialect, table, &discovery.null_keys)?;
        }
    }

    let survey = match plan.strategy {
        Strategy::Pushdown => {
            Some(survey_pairs(&mut session, dialect, job, &discovery, &mut plan).await?)
        }
        Strategy::Stream => None,
    };
    let conflicts = survey.as_ref().map_or(0, |s| s.conflicts);
    let stored_order = discover::stored_order(&mut session, source, job).await;
    plan.notes.extend(stored_order.note.clone());
    let mut fill = load::PivotFill {
        job,
        plan: &plan,
        discovery: &discovery,
        transforms: std::mem::take(&mut transforms),
        source_pairs: survey.map(|s| s.pairs),
        stored_order,
        show_progress: !options.no_progress,
    };
    let what = format!("job {}", job.name);
    let mut stats = writes.run(&mut session, &what, &mut fill).await?;
    stats.merged = writes.merged().to_vec();

    stats.conflicts = stats.conflicts.max(conflicts);
    finish(session, job, plan, &discovery, &stats, options, started).await
}

/// A merge into a split target keeps each attribute in the table that has its column
/// ([`plan::split_target`]) instead of packing the columns anew. Returns what was redrawn
/// (its tables now the plan's), for the check that new columns fit the last table.
async fn follow_split_target(
    session: &mut Session<'_>,
    job: &Job,
    plan: &mut Plan,
) -> Result<Option<plan::split_target::Redrawn>> {
    let dialect = session.backend.dialect();
    let Some(first) = plan.tables.first() else {
        return Ok(None);
    };
    let existing = write::read_split_target(session, dialect, first).await?;
    if existing.is_empty() {
        return Ok(None);
    }
    let mut redrawn = plan::split_target::follow_existing(job, dialect, &plan.tables, &existing)?;
    plan.tables = std::mem::take(&mut redrawn.tables);
    plan.renamed.append(&mut redrawn.renamed);
    plan.notes.push(redrawn.note.clone());
    Ok(Some(redrawn))
}

/// The pushdown writes the values through the database's own conversion to text (a text
/// column, and the print-back check of a typed one): where that loses digits for the source's
/// value type (SQL Server's FLOAT, MONEY, DATETIME), `auto` streams instead — the stream
/// writes each value's exact text — and an asked-for pushdown is refused before any write.
/// So too where its MAX/MIN cannot take the value's type (PostgreSQL's `boolean`, `json`…,
/// SQL Server's `bit`): every run of such a job failed in the conflict survey.
fn stream_for_value_type(
    job: &Job,
    options: &PlanOptions,
    dialect: &dyn Dialect,
    value_type: Option<&str>,
) -> Result<Option<String>> {
    let Some(declared) = value_type else {
        return Ok(None);
    };
    if let Some(why) = dialect.unaggregated_value(declared) {
        return match options.strategy.unwrap_or(job.strategy) {
            StrategyName::Auto => Ok(Some(format!(
                "auto: the source's values are {declared} and {why}: the stream picks among them itself"
            ))),
            _ => Err(Error::Usage(format!(
                "strategy: pushdown cannot pick among the source's {declared} values: {why}; nothing was written: use strategy: stream (or auto), or convert the value in `value:` yourself (e.g. CAST(v AS text))"
            ))),
        };
    }
    let Some(loss) = dialect.text_conversion_loss(declared) else {
        return Ok(None);
    };
    match options.strategy.unwrap_or(job.strategy) {
        StrategyName::Auto => Ok(Some(format!(
            "auto: the source's values are {declared} and {loss}: the stream writes each value's exact text"
        ))),
        _ => Err(Error::Usage(format!(
            "strategy: pushdown would write the source's {declared} values as text through the database's own conversion, and {loss}; nothing was written: use strategy: stream (or auto), or convert the value in `value:` yourself"
        ))),
    }
}

/// A merge with `source.changed` into a target that does not exist yet: the job without the
/// delta, so that the first load holds every entity in the scope, not only the changed ones
/// (None: the job runs as written).
async fn first_merge_of_a_delta(session: &mut Session<'_>, job: &Job) -> Result<Option<Job>> {
    if job.source.changed.is_none() || job.target.if_exists != IfExists::Merge {
        return Ok(None);
    }
    if session.target_exists(&job.target.table).await? {
        return Ok(None);
    }
    let mut whole = job.clone();
    whole.source.changed = None;
    Ok(Some(whole))
}

/// After commit (or at the end of a dry run): read the preview and write the report. Shared by
/// every way of running a job, so their reports cannot drift apart.
async fn finish(
    session: Session<'_>,
    job: &Job,
    plan: Plan,
    discovery: &plan::Discovery,
    stats: &LoadStats,
    options: &RunOptions,
    started: Instant,
) -> Result<Outcome> {
    let dialect = session.backend.dialect();
    let preview = if options.dry_run || options.preview_rows == 0 {
        None
    } else {
        Some(preview::read(session.backend, dialect, &plan, options.preview_rows).await?)
    };
    let report = Report::new(
        job,
        dialect,
        &plan,
        discovery,
        &session.log,
        stats,
        options.dry_run,
        started.elapsed(),
    );
    Ok(Outcome {
        report,
        plan,
        preview,
    })
}

/// Where a row could be too big only if one entity filled every column, count the cells of
/// the fullest entity (one read-only query), so the plan refuses what certainly cannot fit
/// and lets sparse data through.
async fn count_fullest_entity(
    session: &mut Session<'_>,
    (source, target): (&dyn Dialect, &dyn Dialect),
    (job, source_query): (&Job, &SourceQuery),
    discovery: &mut plan::Discovery,
    entity_types: &[Option<String>],
) -> Result<()> {
    if let Some(attributes) = plan::attributes_to_count(job, target, discovery, entity_types) {
        let rows = session
            .inspect(&query::max_cells_per_entity(
                source,
                source_query,
                &attributes,
            ))
            .await
            .map_err(|e| e.with_context("counting the fullest entity's cells"))?;
        discovery.max_cells_per_entity = Some(first_int(&rows));
    }
    Ok(())
}

/// The pushdown's survey of the source ([`crate::dialect::query::pairs_per_attribute`]).
struct PairSurvey {
    /// Each column's expected cells, for verification.
    pairs: verify::PairCounts,
    conflicts: u64,
}

/// Entity/attribute pairs per attribute and how many conflict, in one read-only scan (a dry
/// run makes it too), unless the source's unique key proves every pair single (then no pair
/// can conflict, and the plan says so). Under `aggregate: error` the job stops here, before
/// anything is written, listing the first ten conflicts.
async fn survey_pairs(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    job: &Job,
    discovery: &plan::Discovery,
    plan: &mut Plan,
) -> Result<PairSurvey> {
    if let Some(key) = discover::unique_pairs(session, dialect, job, discovery).await {
        plan.notes.push(format!(
            "pushdown: {}'s unique key {key} makes every (entity, attribute) pair single: no conflict survey; each column's cells are discovery's value counts",
            job.source.table
        ));
        return Ok(PairSurvey {
            pairs: verify::PairCounts::Unique,
            conflicts: 0,
        });
    }
    let pairs = session
        .inspect(&query::pairs_per_attribute(dialect, &plan.source))
        .await
        .map_err(|e| e.with_context(&format!("surveying {}", job.source.table)))?;
    let count: u64 = pairs
        .iter()
        .filter_map(|r| r.get(2).and_then(Value::as_i64))
        .map(|n| n.max(0) as u64)
        .sum();
    if count > 0 && job.pivot.aggregate == Aggregate::Error {
        let sample = session
            .inspect(&dialect.limit(&query::conflicts(dialect, &plan.source), 10))
            .await?;
        let width = job.entity.len();
        let float_text = plan.source.float_text(dialect);
        let lines: Vec<String> = sample
            .iter()
            .map(|r| {
                let key: Vec<String> = r.iter().take(width).map(ToString::to_string).collect();
                let attr = r
                    .get(width)
                    .map(|a| dialect.decode_attribute_key(a.as_text().unwrap_or_default()))
                    .unwrap_or_default();
                let lo = r
                    .get(width + 1)
                    .map(|v| stream::value_shown(v, float_text))
                    .unwrap_or_default();
                let hi = r
                    .get(width + 2)
                    .map(|v| stream::value_shown(v, float_text))
                    .unwrap_or_default();
                stream::conflict_sample(&key, &attr, &lo, &hi)
            })
            .collect();
        return Err(stream::conflict_error(count, &lines));
    }
    Ok(PairSurvey {
        pairs: verify::PairCounts::Surveyed(pairs),
        conflicts: count,
    })
}

/// The source's entity types as the target database spells them, with a note for every
/// mapping that is lossy or widens.
fn map_entity_types(
    source: &dyn Dialect,
    target: &dyn Dialect,
    types: &[Option<String>],
) -> (Vec<Option<String>>, Vec<String>) {
    let mut notes = Vec::new();
    let mapped = types
        .iter()
        .map(|ty| {
            ty.as_deref().map(|ty| {
                let (spelled, note) = crate::dialect::portable::map(source, target, ty);
                notes.extend(note);
                spelled
            })
        })
        .collect();
    (mapped, notes)
}
