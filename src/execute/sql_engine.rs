//! `sudoku_solve: { engine: sql }`: the puzzles are solved by a recursive CTE inside the
//! database instead of by the streaming transform, for servers that must do the work
//! in-database and to compare the two. There is no stream to run, so this path replaces the
//! load: discovery and the plan as usual, then one transaction holding `CREATE TABLE` and one
//! `INSERT … SELECT` (the CTE, pivoted), a verification query, and the commit. Every
//! statement goes through the [`Session`], so `--dry-run` prints exactly what would run.

use std::time::Instant;

use crate::backend::Backend;
use crate::config::{IfExists, Job, SudokuSolveSpec, TableRef, TransformSpec};
use crate::dialect::{sudoku_join, sudoku_sql, Dialect, TableShape};
use crate::error::{Error, Result};
use crate::plan::{self, Strategy};
use crate::transform::sudoku::SudokuTransform;
use crate::transform::Transform;

use super::{first_int, LoadStats, Outcome, RunOptions, Session};

/// The job's `sudoku_solve` settings when it asks for the in-database engine.
pub fn wanted(job: &Job) -> Option<&SudokuSolveSpec> {
    job.transforms.iter().find_map(|t| match t {
        TransformSpec::SudokuSolve(spec) if spec.engine_sql => Some(spec),
        _ => None,
    })
}

/// Where the grid is built and what must happen to put it in place.
struct Build {
    shape: TableShape,
    target: TableRef,
    exists: bool,
    append: bool,
    stale_staging: bool,
}

impl Build {
    fn staged(&self) -> bool {
        self.shape.table != self.target
    }
}

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
        .inspect(&dialect.discover_attributes(job))
        .await
        .map_err(|e| e.with_context(&format!("discovering columns in {}", job.source.table)))?;
    let found = plan::decode_discovery(dialect, rows)?;
    let discovery = SudokuTransform::new(spec.clone(), &job.target.table).attributes(found)?;
    let side = discovery.attributes.len();
    let box_size = (2..=5).find(|b| b * b == side).unwrap_or(3);
    let entity_types = session.inspect_types(&dialect.describe_entity(job)).await?;
    let mut plan = plan::build_plan(job, dialect, &discovery, &entity_types, options.plan)?;
    plan.strategy = Strategy::Pushdown;
    plan.strategy_reason =
        "sudoku_solve engine: sql: a recursive CTE solves and pivots in the database".into();
    let [shape] = plan.tables.as_slice() else {
        return Err(Error::Usage(
            "sudoku_solve with engine: sql writes one table: remove target.split".into(),
        ));
    };
    let build = prepare(&mut session, dialect, job.target.if_exists, shape.clone()).await?;
    let insert = match spec.sql_join {
        true => {
            let givens = session
                .inspect(&sudoku_join::givens_query(dialect, job)?)
                .await?;
            sudoku_join::solve_into(dialect, job, &build.shape, box_size, &givens)?
        }
        false => sudoku_sql::solve_into(dialect, job, &build.shape, box_size)?,
    };
    let puzzles = first_int(
        &session
            .inspect(&sudoku_sql::count_puzzles(dialect, job))
            .await?,
    );

    let mut began = false;
    let result = load(&mut session, dialect, &build, &insert, side, &mut began).await;
    let (rows_written, cells_written) = match result {
        Ok(counts) => counts,
        Err(err) => {
            let undo = roll_back(&mut session, dialect, &build, began).await;
            return Err(err.with_context(&format!("job {} failed and was {undo}", job.name)));
        }
    };

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
    };
    super::finish(session, job, plan, &discovery, &stats, options, started).await
}

/// Existence checks and `if_exists`, before any write: the ordinary load's own decision.
async fn prepare(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    if_exists: IfExists,
    shape: TableShape,
) -> Result<Build> {
    let out = super::load::plan_output(session, dialect, if_exists, shape).await?;
    Ok(Build {
        shape: super::load::build_shape(&out),
        target: out.shape.table,
        exists: out.exists,
        append: out.append,
        stale_staging: out.stale_staging,
    })
}

/// CREATE, INSERT … SELECT, verify, swap, commit; returns rows and non-null cells written.
async fn load(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    build: &Build,
    insert: &str,
    side: usize,
    began: &mut bool,
) -> Result<(u64, u64)> {
    let tx_ddl = dialect.transactional_ddl();
    if !tx_ddl {
        create(session, dialect, build).await?;
    }
    session.change(&dialect.begin()).await?;
    *began = true;
    if tx_ddl {
        create(session, dialect, build).await?;
    }
    let counts = dialect.count_table_cells(&build.shape);
    let before = match build.append {
        true => session
            .query_in_load(&counts, "append: counts before loading")
            .await?
            .map_or(0, |r| first_int(&r)),
        false => 0,
    };
    session.change(insert).await?;
    let written = session
        .query_in_load(
            &counts,
            "verify: every solved puzzle wrote n full rows (rows, then non-null cells per column)",
        )
        .await?;
    let (rows, cells) = match written {
        Some(r) => verify(&build.shape, &r, before, side)?,
        None => (0, 0),
    };
    if tx_ddl && build.staged() {
        swap(session, dialect, build).await?;
    }
    session.change(&dialect.commit()).await?;
    *began = false;
    if !tx_ddl && build.staged() {
        swap(session, dialect, build).await?;
    }
    Ok((rows, cells))
}

async fn create(session: &mut Session<'_>, dialect: &dyn Dialect, build: &Build) -> Result<()> {
    if build.stale_staging {
        session
            .change(&dialect.drop_table(&build.shape.table))
            .await?;
    }
    if !build.append {
        session.change(&dialect.create_table(&build.shape)).await?;
    }
    Ok(())
}

async fn swap(session: &mut Session<'_>, dialect: &dyn Dialect, build: &Build) -> Result<()> {
    for sql in dialect.swap_in(&build.shape.table, &build.target, build.exists) {
        session.change(&sql).await?;
    }
    Ok(())
}

/// A solved grid is whole: the new rows come in multiples of n and no cell is NULL.
fn verify(
    shape: &TableShape,
    rows: &[Vec<crate::value::Value>],
    before: u64,
    side: usize,
) -> Result<(u64, u64)> {
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

/// Undo after a failure; returns what was done, for the error message.
async fn roll_back(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    build: &Build,
    began: bool,
) -> String {
    let mut said = "stopped before writing anything".to_string();
    if began && !session.dry_run {
        said = match session.backend.execute(&dialect.rollback()).await {
            Ok(_) => "rolled back: nothing was written".into(),
            Err(e) => format!("rolled back by the server (the ROLLBACK itself failed: {e})"),
        };
    }
    if !dialect.transactional_ddl() && build.staged() && !session.dry_run {
        if let Err(e) = session
            .backend
            .execute(&dialect.drop_table(&build.shape.table))
            .await
        {
            said.push_str(&format!(
                "; staging table {} could not be dropped: {e}",
                build.shape.table
            ));
        }
    }
    said
}
