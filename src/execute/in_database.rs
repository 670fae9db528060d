//! A job whose transform runs inside the database ([`InDatabase`]): there is no stream to
//! run, so this path replaces the load: discovery and the plan as usual, then one
//! transaction holding `CREATE TABLE` and the statement the transform builds, the
//! transform's verification of the written counts, and the commit. Every statement goes
//! through the [`Session`], so `--dry-run` prints exactly what would run.

use crate::dialect::{ddl, query};
use std::time::Instant;

use async_trait::async_trait;

use crate::backend::Backend;
use crate::config::Job;
use crate::dialect::SourceQuery;
use crate::error::{Error, Result};
use crate::plan;
use crate::report::LoadStats;
use crate::transform::{self, InDatabase};

use super::write::{Fill, Policy, Tables, Writes};
use super::{Outcome, RunOptions, Session};
use crate::value::first_int;

pub async fn run_job(
    job: &Job,
    mut work: Box<dyn InDatabase>,
    backend: &mut dyn Backend,
    options: &RunOptions,
) -> Result<Outcome> {
    let started = Instant::now();
    let dialect = backend.dialect();
    if job.transforms.len() != 1 {
        return Err(Error::Usage(format!(
            "{} must be the job's only transform",
            work.label()
        )));
    }
    let source = plan::source_query(job);
    let mut session = Session::new(backend, options.dry_run);
    let rows = session
        .inspect(&query::discover_attributes(dialect, &source))
        .await
        .map_err(|e| e.with_context(&format!("discovering columns in {}", job.source.table)))?;
    let found = plan::decode_discovery(dialect, rows)?;
    let discovery = work.attributes(found)?;
    let entity_types = session
        .inspect_types(&dialect.describe_entity(&source))
        .await?;
    let plan_options = transform::plan_options(job, options.plan.clone());
    let plan = plan::build_plan(job, dialect, &discovery, &entity_types, plan_options)?;
    let [shape] = plan.tables.as_slice() else {
        return Err(Error::Usage(format!(
            "{} writes one table: remove target.split",
            work.label()
        )));
    };
    // Whatever the statement is generated from is read, and checked, before anything is
    // written.
    if let Some(read) = work.read_first(dialect, &source)? {
        let rows = session.inspect(&read).await?;
        work.take_read(dialect, rows)?;
    }
    let mut writes = Writes::prepare(
        &mut session,
        &job.name,
        Policy::of(job),
        &job.source.tables(),
        vec![shape.clone()],
        Vec::new(),
    )
    .await?;
    let counted = first_int(&session.inspect(&work.count_query(&source)).await?);
    let mut fill = FillInDatabase {
        work: work.as_ref(),
        source: &source,
    };
    let what = format!("job {}", job.name);
    let (rows_written, cells_written) = writes.run(&mut session, &what, &mut fill).await?;

    let stats = LoadStats {
        rows_written,
        cells_written,
        conflicts: 0,
        transforms: vec![work.report(rows_written, counted)],
        merged: Vec::new(),
    };
    super::finish(session, job, plan, &discovery, &stats, options, started).await
}

/// The transform's statement into the target, then its check of the target's counts;
/// returns rows and non-null cells written.
struct FillInDatabase<'a> {
    work: &'a dyn InDatabase,
    source: &'a SourceQuery,
}

#[async_trait]
impl Fill for FillInDatabase<'_> {
    type Output = (u64, u64);

    async fn fill(&mut self, session: &mut Session<'_>, tables: &Tables) -> Result<(u64, u64)> {
        let dialect = session.backend.dialect();
        let Some(table) = tables.targets().first() else {
            return Ok((0, 0));
        };
        let shape = table.build_shape();
        let statement = self.work.fill(dialect, self.source, &shape)?;
        let counts = ddl::count_table_cells(dialect, &shape);
        let before = match table.append {
            true => session
                .query_in_load(&counts, "append: counts before loading")
                .await?
                .map_or(0, |r| first_int(&r)),
            false => 0,
        };
        session.change(&statement).await?;
        let written = session
            .query_in_load(&counts, self.work.verify_note())
            .await?;
        match written {
            Some(r) => self.work.verify(&shape, &r, before),
            None => Ok((0, 0)),
        }
    }
}
