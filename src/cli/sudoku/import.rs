//! `eavpivot sudoku --import FILE`: puzzle lines in, key–value givens out, so the shared puzzle
//! sets can feed `run config/sudoku.yaml` on any backend.
//!
//! Each puzzle becomes one row per given `(puzzle, row, col, value)`, numbered after the
//! largest puzzle already in the table, so importing twice appends instead of colliding. The
//! whole file is parsed before anything is written, and every row goes in through the one
//! write path ([`crate::execute::write`]) as an append: a bad line or a failed load leaves the
//! table as it was (a table it had to create is dropped again).

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context};
use async_trait::async_trait;

use crate::backend::{self, Backend, ConnectOptions, ConnectionSpec, LoadTarget};
use crate::config::{IfExists, TableRef};
use crate::execute::write::{Fill, Policy, Tables, Writes};
use crate::execute::Session;
use crate::transform::sudoku::sql as sudoku_sql;
use crate::transform::sudoku::Grid;
use crate::value::first_int;
use crate::value::Value;

/// Puzzles loaded per `load_rows` call: bounds memory on the 49,158-puzzle sets.
const PUZZLES_PER_BATCH: usize = 5_000;
const COLUMNS: [&str; 4] = ["puzzle", "row", "col", "value"];

/// What an import did, for the one-line summary.
pub struct Imported {
    pub puzzles: usize,
    pub rows: u64,
    pub first_id: i64,
    pub created: bool,
}

/// Read every puzzle of `path`; `#` lines and blank lines are skipped.
pub fn read_puzzles(path: &Path) -> anyhow::Result<Vec<Grid>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut grids = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match Grid::parse(line) {
            Ok(grid) => grids.push(grid),
            Err(e) => bail!(
                "cannot import {} line {}: {e}; nothing was written",
                path.display(),
                i + 1
            ),
        }
    }
    Ok(grids)
}

pub fn run(
    path: &Path,
    connection: Option<&str>,
    table: &str,
    options: &ConnectOptions,
) -> anyhow::Result<Imported> {
    let grids = read_puzzles(path)?;
    let table = TableRef::parse(table).map_err(crate::Error::Usage)?;
    let spec = ConnectionSpec::parse(connection)?;
    if let Some(db) = spec.missing_file() {
        // An empty file is an empty SQLite database: a scratch file needs no other setup.
        std::fs::File::create(db)
            .with_context(|| format!("cannot create SQLite file {}", db.display()))?;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        eprintln!("connecting to {}", spec.display());
        let mut backend = backend::connect(&spec, options).await?;
        // Like every run: a lock another session holds fails the import after the default
        // lock_timeout, naming the holder, instead of waiting for ever.
        let timeout = std::time::Duration::from_secs(crate::config::DEFAULT_LOCK_TIMEOUT_SECS);
        backend.set_lock_timeout(timeout).await?;
        let started = Instant::now();
        let done = import(backend.as_mut(), &table, &grids).await?;
        eprintln!(
            "imported {} puzzles (ids {}..{}), {} givens rows into {table}{} in {:.2} s",
            done.puzzles,
            done.first_id,
            done.first_id + done.puzzles as i64 - 1,
            done.rows,
            if done.created { " (created)" } else { "" },
            started.elapsed().as_secs_f64()
        );
        Ok(done)
    })
}

async fn import(
    backend: &mut dyn Backend,
    table: &TableRef,
    grids: &[Grid],
) -> anyhow::Result<Imported> {
    let dialect = backend.dialect();
    let mut session = Session::new(backend, false);
    let shape = sudoku_sql::givens_shape(dialect, table);
    let mut writes = Writes::prepare(
        &mut session,
        "sudoku --import",
        Policy::if_exists(IfExists::Append),
        &[],
        vec![shape],
        Vec::new(),
    )
    .await?;
    let exists = writes.tables().targets().iter().any(|t| t.exists);
    let first_id = match exists {
        true => {
            first_int(
                &session
                    .inspect_target(&sudoku_sql::max_puzzle(dialect, table))
                    .await?,
            ) as i64
                + 1
        }
        false => 1,
    };
    let mut fill = GivensRows { grids, first_id };
    let what = format!("importing into {table}");
    let rows = writes.run(&mut session, &what, &mut fill).await?;
    Ok(Imported {
        puzzles: grids.len(),
        rows,
        first_id,
        created: !exists,
    })
}

/// The givens of every puzzle, loaded in batches into the (new or existing) table.
struct GivensRows<'a> {
    grids: &'a [Grid],
    first_id: i64,
}

#[async_trait]
impl Fill for GivensRows<'_> {
    type Output = u64;

    async fn fill(&mut self, session: &mut Session<'_>, tables: &Tables) -> crate::Result<u64> {
        let mut rows_loaded = 0;
        for table in tables.targets() {
            let target = LoadTarget {
                table: table.build.clone(),
                columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
            };
            let shape = session
                .backend
                .dialect()
                .insert_values(&target.table, &target.columns, 1);
            for (batch_no, batch) in self.grids.chunks(PUZZLES_PER_BATCH).enumerate() {
                let first = self.first_id + (batch_no * PUZZLES_PER_BATCH) as i64;
                let rows = givens_rows(first, batch);
                rows_loaded += session.load_rows(&target, &rows, &shape).await?;
            }
        }
        Ok(rows_loaded)
    }
}

/// One `(puzzle, row, col, value)` row per given, puzzles numbered from `first`.
pub fn givens_rows(first: i64, grids: &[Grid]) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for (n, grid) in grids.iter().enumerate() {
        let side = grid.side();
        for (i, &v) in grid.cells().iter().enumerate() {
            if v != 0 {
                rows.push(vec![
                    Value::Int(first + n as i64),
                    Value::Int((i / side + 1) as i64),
                    Value::Int((i % side + 1) as i64),
                    Value::Int(i64::from(v)),
                ]);
            }
        }
    }
    rows
}
