//! Using eavpivot as a library: load a job file, run it against an in-memory SQLite database
//! holding the bundled sample data, and read the report — the same path the CLI takes.
//!
//! `cargo run --example library`

use std::path::Path;

use eavpivot::backend::sqlite::SqliteBackend;
use eavpivot::backend::Backend;
use eavpivot::config;
use eavpivot::execute::{self, RunOptions};

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let job = config::load_job(&root.join("config/item_detail.yaml"))?;

    let mut db = SqliteBackend::in_memory()?;
    db.execute_script(&std::fs::read_to_string(
        root.join("sql/sqlite/item_detail.sql"),
    )?)
    .await?;

    let options = RunOptions {
        preview_rows: 3,
        ..RunOptions::default()
    };
    let outcome = execute::run_job(&job, &mut db, &options).await?;
    let report = &outcome.report;
    println!(
        "{}: {} rows, {} cells, {} columns via {}",
        report.target,
        report.rows_written,
        report.cells_written,
        report.columns.len(),
        report.strategy.as_str()
    );
    for c in &report.columns {
        println!("  {:?} -> {:?}", c.attribute, c.column);
    }
    if let Some(preview) = outcome.preview {
        print!("{}", preview.render());
    }
    Ok(())
}
