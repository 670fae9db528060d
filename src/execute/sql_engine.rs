//! `sudoku_solve: { engine: sql }`: the puzzles are solved by a recursive CTE inside the
//! database instead of by the streaming transform, for servers that must do the work
//! in-database and to compare the two. There is no stream to run, so this path replaces the
//! load: discovery and the plan as usual, then one transaction holding `CREATE TABLE` and one
//! `INSERT … SELECT` (the CTE, pivoted), a verification query, and the commit. Every
//! statement goes through the [`Session`], so `--dry-run` prints exactly what would run.

use crate::dialect::{ddl, query};
use std::time::Instant;

use async_trait::async_trait;

use crate::backend::Backend;
use crate::config::{Job, SudokuSolveSpec};
use crate::dialect::{sudoku_join, sudoku_sql, TableShape};
use crate::error::{Error, Result};
use crate::plan;
use crate::report::LoadStats;
use crate::transform::sudoku::SudokuTransform;
use crate::transform::Transform;
use crate::value::Value;

use super::write::{Fill, Policy, Tables, Writes};
use super::{Outcome, RunOptions, Session};
use crate::value::first_int;

pub async fn run_job(
    job: &Job,
    spec: &SudokuSolveSpec,
    backend: &mut dyn Backend,
    options: &RunOptions,
) -> Result<Outcome> {
    let started = Instant::now();
    let dialect = backend.dialect();
    if job.transforms.len() != 1 {
        return Err(Error::Usage(
            "sudoku_solve with engine: sql must be the job's only transform".into(),
        ));
    }
    let mut session = Session::new(backend, options.dry_run);
    let rows = session
        .inspect(&query::discover_attributes(
            dialect,
            &crate::plan::source_query(job),
        ))
        .await
        .map_err(|e| e.with_context(&format!("discovering columns in {}", job.source.table)))?;
    let found = plan::decode_discovery(dialect, rows)?;
    let discovery = SudokuTransform::new(spec.clone(), &job.target.table).attributes(found)?;
    let side = discovery.attributes.len();
    let box_size = (2..=5).find(|b| b * b == side).unwrap_or(3);
    let entity_types = session
        .inspect_types(&dialect.describe_entity(&crate::plan::source_query(job)))
        .await?;
    let plan = plan::build_plan(job, dialect, &discovery, &entity_types, options.plan)?;
    let [shape] = plan.tables.as_slice() else {
        return Err(Error::Usage(
            "sudoku_solve with engine: sql writes one table: remove target.split".into(),
        ));
    };
    // engine: sql_join generates its SELECTs from the givens: read them, and refuse puzzles
    // past the join limit, before anything is written.
    let givens = match spec.sql_join {
        true => {
            let rows = session
                .inspect(&sudoku_join::givens_query(dialect, job)?)
                .await?;
            sudoku_join::check_join_limit(dialect, &rows, box_size)?;
            Some(rows)
        }
        false => None,
    };
    let mut writes = Writes::prepare(
        &mut session,
        &job.name,
        Policy::of(job),
        &job.source.tables(),
        vec![shape.clone()],
        Vec::new(),
    )
    .await?;
    let puzzles = first_int(&session.inspect(&sudoku_sql::count_puzzles(job)).await?);
    let mut fill = SolveInDatabase {
        job,
        box_size,
        side,
        givens,
    };
    let what = format!("job {}", job.name);
    let (rows_written, cells_written) = writes.run(&mut session, &what, &mut fill).await?;

    let solved = rows_written / side as u64;
    let stats = LoadStats {
        rows_written,
        cells_written,
        conflicts: 0,
        transforms: vec![serde_json::json!({
            "transform": "sudoku_solve",
            "engine": if spec.sql_join { "sql_join" } else { "sql" },
            "box_size": box_size,
            "puzzles": puzzles,
            "solved": solved,
            "not_written": puzzles.saturating_sub(solved),
        })],
        merged: Vec::new(),
    };
    super::finish(session, job, plan, &discovery, &stats, options, started).await
}

/// One `INSERT … SELECT` of the recursive CTE into the grid, then a check that every solved
/// puzzle wrote whole grids; returns rows and non-null cells written.
struct SolveInDatabase<'a> {
    job: &'a Job,
    box_size: usize,
    side: usize,
    /// engine: sql_join: the givens its SELECTs are generated from.
    givens: Option<Vec<Vec<Value>>>,
}

#[async_trait]
impl Fill for SolveInDatabase<'_> {
    type Output = (u64, u64);

    async fn fill(&mut self, session: &mut Session<'_>, tables: &Tables) -> Result<(u64, u64)> {
        let dialect = session.backend.dialect();
        let Some(table) = tables.targets().first() else {
            return Ok((0, 0));
        };
        let shape = table.build_shape();
        let insert = match &self.givens {
            Some(givens) => {
                sudoku_join::solve_into(dialect, self.job, &shape, self.box_size, givens)?
            }
            None => sudoku_sql::solve_into(dialect, self.job, &shape, self.box_size)?,
        };
        let counts = ddl::count_table_cells(dialect, &shape);
        let before = match table.append {
            true => session
                .query_in_load(&counts, "append: counts before loading")
                .await?
                .map_or(0, |r| first_int(&r)),
            false => 0,
        };
        session.change(&insert).await?;
        let written = session
            .query_in_load(
                &counts,
                "verify: every solved puzzle wrote n full rows (rows, then non-null cells per column)",
            )
            .await?;
        match written {
            Some(r) => verify(&shape, &r, before, self.side),
            None => Ok((0, 0)),
        }
    }
}

/// A solved grid is whole: the new rows come in multiples of n and no cell is NULL.
fn verify(shape: &TableShape, rows: &[Vec<Value>], before: u64, side: usize) -> Result<(u64, u64)> {
    let counts: Vec<u64> = rows
        .first()
        .map(|r| {
            r.iter()
                .map(|v| v.as_i64().unwrap_or(0).max(0) as u64)
                .collect()
        })
        .unwrap_or_default();
    let total = counts.first().copied().unwrap_or(0);
    let new_rows = total.saturating_sub(before);
    let whole = counts.iter().skip(1).all(|&c| c == total);
    if new_rows % side as u64 != 0 || !whole || counts.len() != side + 1 {
        return Err(Error::Job(format!(
            "verification failed: {} holds {new_rows} new rows and column counts {:?}; every solved puzzle must give {side} full rows",
            shape.table,
            &counts[1.min(counts.len())..]
        )));
    }
    Ok((new_rows, new_rows * side as u64))
}
