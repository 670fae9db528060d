//! Creating, filling, verifying and swapping in the target tables, all or nothing.
//!
//! Where DDL is transactional (SQLite, PostgreSQL, SQL Server) everything happens inside one
//! transaction. Where it is not (MariaDB), tables are built under staging names, filled in a
//! transaction, and made visible only after verification by one atomic rename; on failure
//! the staging tables are dropped. `if_exists: replace` never loses the old target: it is
//! dropped only in the same step that puts the verified new one in its place.

use crate::backend::LoadTarget;
use crate::config::{IfExists, Job, TableRef};
use crate::dialect::{Dialect, EntityColumn, TableShape};
use crate::error::{Error, Result};
use crate::plan::{Discovery, Plan, Strategy};
use crate::transform::{SideTable, SideType, Transform};

use super::first_int;
use super::keys::{explain_key_violation, refuse_null_keys};
use super::session::Session;
use super::stream::{Pivoter, StreamStats};
use super::verify::{self, row_counts};

const STAGING_SUFFIX: &str = "__eavpivot_new";
pub(super) const VERIFY_NOTE: &str =
    "verify: rows and non-null cells written (must match the source)";

/// One table the job writes: a target table or a transform's companion table.
pub(super) struct Output {
    pub(super) shape: TableShape,
    /// Where rows go during the load: the final name, or a staging name.
    pub(super) build: TableRef,
    pub(super) exists: bool,
    /// Rows are appended to an existing table: no CREATE, counts taken before and after.
    pub(super) append: bool,
    /// A leftover staging table from an interrupted run, dropped before building.
    pub(super) stale_staging: bool,
}

impl Output {
    pub(super) fn staged(&self) -> bool {
        self.build != self.shape.table
    }
}

/// What the load wrote, for verification and the report.
#[derive(Debug, Clone, Default)]
pub struct LoadStats {
    pub rows_written: u64,
    pub cells_written: u64,
    pub conflicts: u64,
    pub transforms: Vec<serde_json::Value>,
}

pub struct Load {
    pub(super) targets: Vec<Output>,
    sides: Vec<Output>,
    began: bool,
    /// Staging tables created outside a transaction, to drop if anything fails.
    created_outside: Vec<TableRef>,
}

impl Load {
    /// Existence checks and `if_exists` policy: every refusal happens here, before any write.
    pub async fn prepare(
        session: &mut Session<'_>,
        job: &Job,
        plan: &Plan,
        sides: &[SideTable],
        null_keys: &[u64],
    ) -> Result<Load> {
        let dialect = session.backend.dialect();
        let mut targets = Vec::new();
        for shape in &plan.tables {
            let out = plan_output(session, dialect, job.target.if_exists, shape.clone()).await?;
            refuse_null_keys(dialect, &out, null_keys)?;
            targets.push(out);
        }
        let mut side_outputs = Vec::new();
        for side in sides {
            let shape = side_shape(dialect, side);
            side_outputs.push(plan_output(session, dialect, job.target.if_exists, shape).await?);
        }
        Ok(Load {
            targets,
            sides: side_outputs,
            began: false,
            created_outside: Vec::new(),
        })
    }

    pub async fn run(
        &mut self,
        session: &mut Session<'_>,
        job: &Job,
        plan: &Plan,
        discovery: &Discovery,
        transforms: Vec<Box<dyn Transform>>,
        source_pairs: Option<Vec<Vec<crate::value::Value>>>,
    ) -> Result<LoadStats> {
        let _interrupt = super::progress::InterruptGuard::arm();
        let dialect = session.backend.dialect();
        let tx_ddl = dialect.transactional_ddl();
        if !tx_ddl {
            self.create_all(session, dialect, false).await?;
        }
        session.change(&dialect.begin()).await?;
        self.began = true;
        let before = self.counts_before(session, dialect).await?;
        if tx_ddl {
            self.create_all(session, dialect, true).await?;
        }
        let mut stats = LoadStats::default();
        let verified_against_source = transforms.is_empty();
        let stream_expect = match plan.strategy {
            Strategy::Pushdown => {
                for out in &self.targets {
                    let shape = build_shape(out);
                    session
                        .change(&dialect.insert_select(&shape, job, job.pivot.aggregate))
                        .await
                        .map_err(|e| explain_key_violation(e, dialect, &self.targets, Some(out)))?;
                }
                None
            }
            Strategy::Stream => {
                let (expect, side_rows, reports) = self
                    .stream(session, dialect, job, plan, transforms)
                    .await
                    .map_err(|e| explain_key_violation(e, dialect, &self.targets, None))?;
                stats.conflicts = expect.conflicts;
                stats.transforms = reports;
                self.load_sides(session, side_rows).await?;
                Some(expect)
            }
        };
        let expected = if verified_against_source {
            let proof = stream_expect
                .as_ref()
                .filter(|_| !session.dry_run)
                .map(|s| {
                    let shapes: Vec<TableShape> =
                        self.targets.iter().map(|o| o.shape.clone()).collect();
                    verify::stream_proof(s, &shapes, discovery)
                });
            let streamed = plan.strategy == Strategy::Stream;
            self.expected_from_source(session, dialect, job, proof, streamed, source_pairs)
                .await?
        } else {
            match stream_expect {
                Some(s) if !session.dry_run => Some((s.entities, s.cells)),
                _ => None,
            }
        };
        let (rows, cells) = match expected {
            Some((rows, cells)) => self.verify(session, dialect, &before, rows, &cells).await?,
            None => self.record_target_counts(session, dialect).await?,
        };
        self.verify_typed(session, dialect, job).await?;
        stats.rows_written = rows;
        stats.cells_written = cells;
        if tx_ddl {
            self.swap_all(session, dialect).await?;
        }
        super::progress::check_interrupt()?;
        session.change(&dialect.commit()).await?;
        self.began = false;
        if !tx_ddl {
            self.swap_all(session, dialect).await?;
            self.created_outside.clear();
        }
        Ok(stats)
    }

    /// Undo after a failure; returns what was done, for the error message.
    pub async fn roll_back(&mut self, session: &mut Session<'_>) -> String {
        let dialect = session.backend.dialect();
        let mut said = "stopped before writing anything".to_string();
        if self.began && !session.dry_run {
            said = match session.backend.execute(&dialect.rollback()).await {
                Ok(_) => "rolled back: nothing was written".into(),
                Err(e) => format!("rolled back by the server (the ROLLBACK itself failed: {e})"),
            };
        }
        for table in std::mem::take(&mut self.created_outside) {
            if let Err(e) = session.backend.execute(&dialect.drop_table(&table)).await {
                said.push_str(&format!(
                    "; staging table {table} could not be dropped: {e}"
                ));
            }
        }
        said
    }

    async fn create_all(
        &mut self,
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
        in_transaction: bool,
    ) -> Result<()> {
        let mut created = Vec::new();
        for out in self.targets.iter().chain(self.sides.iter()) {
            if out.stale_staging {
                session.change(&dialect.drop_table(&out.build)).await?;
            }
            if !out.append {
                session
                    .change(&dialect.create_table(&build_shape(out)))
                    .await?;
                if !in_transaction {
                    created.push(out.build.clone());
                }
            }
        }
        self.created_outside.extend(created);
        Ok(())
    }

    async fn counts_before(
        &self,
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
    ) -> Result<Vec<Vec<u64>>> {
        let mut before = Vec::new();
        for out in &self.targets {
            let counts = if out.append {
                let rows = session
                    .query_in_load(
                        &dialect.count_table_cells(&out.shape),
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
        &self,
        session: &mut Session<'_>,
        dialect: &'static dyn Dialect,
        job: &Job,
        plan: &Plan,
        transforms: Vec<Box<dyn Transform>>,
    ) -> Result<(StreamStats, Vec<SideTable>, Vec<serde_json::Value>)> {
        let shapes: Vec<TableShape> = self.targets.iter().map(build_shape).collect();
        let loads: Vec<LoadTarget> = shapes.iter().map(load_target).collect();
        let examples: Vec<(String, &'static str)> = loads
            .iter()
            .map(|l| dialect.stream_load(&l.table, &l.columns))
            .collect();
        let mut pivoter = Pivoter::new(
            dialect,
            job.entity.len(),
            &shapes,
            job.pivot.aggregate,
            transforms,
        )
        .with_progress(super::progress::Progress::new(
            plan.source_rows,
            !session.dry_run,
        ));
        let loaded = session
            .stream(&dialect.ordered_rows(job), &examples, &mut pivoter, &loads)
            .await
            .map_err(|e| match e {
                // The server's errors say what failed, not which source: name it.
                Error::Database { .. } => {
                    e.with_context(&format!("streaming {}", job.source.table))
                }
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

    async fn load_sides(&self, session: &mut Session<'_>, side_rows: Vec<SideTable>) -> Result<()> {
        let dialect = session.backend.dialect();
        for (i, out) in self.sides.iter().enumerate() {
            let target = load_target(&build_shape(out));
            let shape = dialect.insert_values(&target.table, &target.columns, 1);
            let rows = side_rows.get(i).map_or(&[][..], |s| s.rows.as_slice());
            session.load_rows(&target, rows, &shape).await?;
        }
        Ok(())
    }

    async fn swap_all(&self, session: &mut Session<'_>, dialect: &dyn Dialect) -> Result<()> {
        for out in self.targets.iter().chain(self.sides.iter()) {
            if out.staged() {
                for sql in dialect.swap_in(&out.build, &out.shape.table, out.exists) {
                    session.change(&sql).await?;
                }
            }
        }
        Ok(())
    }
}

/// Existence checks and `if_exists` for one table: where it is built and what must happen.
pub(super) async fn plan_output(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    if_exists: IfExists,
    shape: TableShape,
) -> Result<Output> {
    let exists = first_int(&session.inspect(&dialect.table_exists(&shape.table)).await?) > 0;
    if exists && if_exists == IfExists::Fail {
        return Err(Error::Job(format!(
            "target table {} already exists (target.if_exists: fail): drop it, or set if_exists to replace or append",
            shape.table
        )));
    }
    let append = exists && if_exists == IfExists::Append;
    let staged = !append && (exists || !dialect.transactional_ddl());
    let build = if staged {
        shape.table.with_suffix(STAGING_SUFFIX)
    } else {
        shape.table.clone()
    };
    let stale_staging =
        staged && first_int(&session.inspect(&dialect.table_exists(&build)).await?) > 0;
    Ok(Output {
        shape,
        build,
        exists,
        append,
        stale_staging,
    })
}

pub(super) fn build_shape(out: &Output) -> TableShape {
    TableShape {
        table: out.build.clone(),
        ..out.shape.clone()
    }
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
fn side_shape(dialect: &dyn Dialect, side: &SideTable) -> TableShape {
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
