//! Filling a pivot's tables inside the one write path ([`super::write`]): the pushdown's
//! `INSERT … SELECT` or the stream (with its transforms and their companion tables), then
//! verification against the source before the write path commits.

use crate::dialect::{ddl, query};
use async_trait::async_trait;

use crate::backend::LoadTarget;
use crate::config::Job;
use crate::dialect::{Dialect, EntityColumn, SourceQuery, TableShape};
use crate::error::{Error, Result};
use crate::plan::{Discovery, Plan, Strategy};
use crate::report::LoadStats;
use crate::terms::Aggregate;
use crate::transform::{SideTable, SideType, Transform};

use super::discover::StoredOrder;
use super::keys::explain_key_violation;
use super::session::Session;
use super::stream::{Pivoter, StreamStats};
use super::verify::{self, PairCounts, PushdownCounts};
use super::write::{Fill, Table, Tables};
use crate::value::row_counts;

/// The pivot's load: what it reads, how, and what it knows for verification.
pub struct PivotFill<'a> {
    pub job: &'a Job,
    pub plan: &'a Plan,
    pub discovery: &'a Discovery,
    pub transforms: Vec<Box<dyn Transform>>,
    /// The pushdown's pair counts, known before loading.
    pub source_pairs: Option<PairCounts>,
    /// Planner settings for the statements that read the source in entity order.
    pub stored_order: StoredOrder,
    /// Draw the progress bar (when stderr is a terminal).
    pub show_progress: bool,
}

#[async_trait]
impl Fill for PivotFill<'_> {
    type Output = LoadStats;

    /// The pushdown makes a new table itself where `CREATE TABLE … AS` its pivot gives the
    /// table exactly as `CREATE TABLE` would ([`ddl::created_as_exactly`]): that way when the
    /// engine would run it on parallel workers ([`parallel_pivot`]).
    fn creates_target(&self, dialect: &dyn Dialect, table: &Table) -> bool {
        self.plan.strategy == Strategy::Pushdown
            && ddl::created_as_exactly(dialect, &table.build_shape())
    }

    async fn fill(&mut self, session: &mut Session<'_>, tables: &Tables) -> Result<LoadStats> {
        let dialect = session.backend.dialect();
        let source = session.source_dialect();
        let (job, plan) = (self.job, self.plan);
        let targets = tables.targets();
        let before = counts_before(session, dialect, targets).await?;
        let mut stats = LoadStats::default();
        let verified_against_source = self.transforms.is_empty();
        let mut inserted = Vec::new();
        let stream_expect = match plan.strategy {
            Strategy::Pushdown => {
                let show = self.show_progress && !session.dry_run;
                let mut steps = super::progress::Steps::new(targets.len(), show);
                let keyed =
                    super::discover::keyed_source(session, dialect, job, &plan.source).await;
                let ordered = &self.stored_order;
                for setting in dialect.pushdown_settings().iter().chain(&ordered.set) {
                    session.change(setting).await?;
                }
                for out in targets {
                    let shape = out.build_shape();
                    steps.start(&format!("INSERT INTO {}", out.shape.table));
                    let aggregate = job.pivot.aggregate;
                    let parallel = match out.create_as {
                        true => parallel_pivot(session, &shape, &keyed, aggregate).await?,
                        false => false,
                    };
                    let (fill, key) = match (out.create_as, parallel) {
                        (true, true) => (
                            query::create_select(dialect, &shape, &keyed, aggregate),
                            ddl::add_primary_key(dialect, &shape),
                        ),
                        (create, _) => {
                            if create {
                                // In the transaction, like every table made here.
                                session.change(&out.create_statement(dialect)).await?;
                            }
                            let insert = query::insert_select(dialect, &shape, &keyed, aggregate);
                            (Some(insert), None)
                        }
                    };
                    let Some(fill) = fill else {
                        return Err(Error::Job(format!(
                            "{} was left to CREATE TABLE … AS, which cannot make it exactly",
                            out.build
                        )));
                    };
                    let violation = |e| explain_key_violation(e, dialect, targets, Some(out));
                    // The rows the statement made (CREATE TABLE … AS reports them too).
                    let rows = session.change(&fill).await.map_err(violation)?;
                    if let Some(key) = key {
                        session.change(&key).await.map_err(violation)?;
                    }
                    inserted.push(rows);
                    steps.finish_one();
                }
                for reset in &ordered.reset {
                    session.change(reset).await?;
                }
                if session.dry_run || !dialect.counts_inserted_rows() {
                    inserted.clear();
                }
                None
            }
            Strategy::Stream => {
                let transforms = std::mem::take(&mut self.transforms);
                let dialects = (source, dialect);
                let (expect, side_rows, reports) = stream(
                    session,
                    dialects,
                    (job, plan),
                    targets,
                    transforms,
                    (&self.stored_order.set, self.show_progress),
                )
                .await
                .map_err(|e| explain_key_violation(e, dialect, targets, None))?;
                stats.conflicts = expect.conflicts;
                stats.transforms = reports;
                load_companions(session, tables.companions(), side_rows).await?;
                Some(expect)
            }
        };
        let expected = if verified_against_source {
            let proof = stream_expect
                .as_ref()
                .filter(|_| !session.dry_run)
                .map(|s| {
                    let shapes: Vec<TableShape> = targets.iter().map(|o| o.shape.clone()).collect();
                    verify::stream_proof(s, &shapes, self.discovery)
                });
            let streamed = plan.strategy == Strategy::Stream;
            let pushdown = match self.source_pairs.take() {
                Some(pairs) => {
                    PushdownCounts::new(dialect, targets, self.discovery, pairs, &inserted)
                }
                None => PushdownCounts::default(),
            };
            verify::expected_from_source(
                session,
                source,
                &plan.source,
                targets,
                proof,
                streamed,
                pushdown,
            )
            .await?
        } else {
            match &stream_expect {
                Some(s) if !session.dry_run => Some((s.entities, s.cells.clone())),
                _ => None,
            }
        };
        let (rows, cells) = match expected {
            Some((rows, cells)) => {
                match verify::verify(session, dialect, targets, &before, rows, &cells).await {
                    Ok(counted) => counted,
                    Err(e) if stream_expect.is_none() && job.transforms.is_empty() => {
                        let source = &plan.source;
                        return Err(
                            verify::name_misprints(session, dialect, source, targets, e).await
                        );
                    }
                    Err(e) => return Err(e),
                }
            }
            None => verify::record_target_counts(session, dialect, targets).await?,
        };
        let job_source = (job, &plan.source);
        verify::verify_typed(
            session,
            dialect,
            job_source,
            targets,
            stream_expect.as_ref(),
        )
        .await?;
        stats.rows_written = rows;
        stats.cells_written = cells;
        Ok(stats)
    }
}

/// Whether the engine would run the pivot into `shape` on parallel workers as `CREATE TABLE
/// … AS` (then that is how the table is made; else `CREATE TABLE` and the INSERT, as ever).
async fn parallel_pivot(
    session: &mut Session<'_>,
    shape: &TableShape,
    source: &SourceQuery,
    aggregate: Aggregate,
) -> Result<bool> {
    let dialect = session.backend.dialect();
    let Some((probe, parallel)) = query::create_select_probe(dialect, shape, source, aggregate)
    else {
        return Ok(false);
    };
    let plan = session.inspect(&probe).await?;
    Ok(plan
        .iter()
        .flatten()
        .any(|v| v.as_text().is_some_and(|t| t.contains(parallel))))
}

/// Counts of the tables appended to, before loading: verification compares the difference.
async fn counts_before(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    targets: &[Table],
) -> Result<Vec<Vec<u64>>> {
    let mut before = Vec::new();
    for out in targets {
        let counts = if out.append {
            let rows = session
                .query_in_load(
                    &ddl::count_table_cells(dialect, &out.shape),
                    "append: counts before loading",
                )
                .await?;
            rows.map(|r| row_counts(&r)).unwrap_or_default()
        } else {
            Vec::new()
        };
        before.push(counts);
    }
    Ok(before)
}

async fn stream(
    session: &mut Session<'_>,
    (source, dialect): (&'static dyn Dialect, &'static dyn Dialect),
    (job, plan): (&Job, &Plan),
    targets: &[Table],
    transforms: Vec<Box<dyn Transform>>,
    (read_settings, show_progress): (&[String], bool),
) -> Result<(StreamStats, Vec<SideTable>, Vec<serde_json::Value>)> {
    let shapes: Vec<TableShape> = targets.iter().map(Table::build_shape).collect();
    let loads: Vec<LoadTarget> = shapes.iter().map(load_target).collect();
    let examples: Vec<(String, &'static str)> = loads
        .iter()
        .map(|l| dialect.stream_load(&l.table, &l.columns))
        .collect();
    let mut pivoter = Pivoter::new(
        source,
        job.entity.len(),
        &shapes,
        job.pivot.aggregate,
        transforms,
    )
    .with_progress(super::progress::Progress::new(
        plan.source_rows,
        show_progress && !session.dry_run,
    ))
    .with_print_check(session.across_databases())
    .with_decimal_values(
        plan.source
            .value_type
            .as_deref()
            .and_then(|t| source.portable_type(t))
            .is_some_and(|kind| matches!(kind, crate::dialect::ColumnKind::Decimal { .. })),
    )
    .with_float_text(session.float_text(&plan.source));
    // On one server the read itself tests every typed value's round trip (the transforms'
    // values are not the source's; across two databases, see verify_printed).
    let checked =
        (!session.across_databases() && job.transforms.is_empty() && source.checks_types_in_read())
            .then(|| query::ordered_rows_checked(source, &plan.source, &shapes))
            .flatten();
    pivoter = pivoter.with_misprint_check(checked.is_some());
    let read = match checked {
        Some(sql) => (sql, "stream: read key-value rows in entity order, pivot in eavpivot; column misprinted is the typed round-trip check (no second source scan)"),
        None => (
            query::ordered_rows(source, &plan.source),
            "stream: read key-value rows in entity order, pivot in eavpivot",
        ),
    };
    let loaded = session
        .stream(
            (&read.0, read.1, read_settings),
            &examples,
            &mut pivoter,
            &loads,
        )
        .await
        .map_err(|e| match e {
            // The server's errors say what failed, not which source: name it.
            Error::Database { .. } => e.with_context(&format!("streaming {}", job.source.table)),
            other => other,
        })?;
    let stats = pivoter.stats.clone();
    if !session.dry_run && loaded.iter().any(|&n| n != stats.entities) {
        return Err(Error::Job(format!(
            "stream: {} entities read but {:?} rows loaded",
            stats.entities, loaded
        )));
    }
    let mut transforms = pivoter.take_transforms();
    let reports = transforms.iter().map(|t| t.report()).collect();
    let sides = transforms
        .iter_mut()
        .flat_map(|t| t.side_tables())
        .collect();
    Ok((stats, sides, reports))
}

async fn load_companions(
    session: &mut Session<'_>,
    companions: &[Table],
    side_rows: Vec<SideTable>,
) -> Result<()> {
    let dialect = session.backend.dialect();
    for (i, out) in companions.iter().enumerate() {
        let target = load_target(&out.build_shape());
        let shape = dialect.insert_values(&target.table, &target.columns, 1);
        let rows = side_rows.get(i).map_or(&[][..], |s| s.rows.as_slice());
        session.load_rows(&target, rows, &shape).await?;
    }
    Ok(())
}

fn load_target(shape: &TableShape) -> LoadTarget {
    LoadTarget {
        table: shape.table.clone(),
        columns: shape
            .entity
            .iter()
            .map(|e| e.name.clone())
            .chain(shape.columns.iter().map(|c| c.column.clone()))
            .collect(),
    }
}

/// A companion table as a shape: all of its columns typed, none pivoted.
pub fn side_shape(dialect: &dyn Dialect, side: &SideTable) -> TableShape {
    TableShape {
        table: side.table.clone(),
        entity: side
            .columns
            .iter()
            .map(|(name, ty)| EntityColumn {
                name: name.clone(),
                sql_type: Some(match ty {
                    SideType::Integer => dialect.integer_type().to_string(),
                    SideType::Text => dialect.text_type().to_string(),
                }),
            })
            .collect(),
        columns: Vec::new(),
        column_type: dialect.text_type().to_string(),
        // A transform's companion rows are not one per entity (a grid has many cells).
        primary_key: false,
    }
}
