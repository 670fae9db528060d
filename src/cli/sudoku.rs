//! Placeholder until the solver lands.
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct SudokuArgs {
    pub puzzle: Option<String>,
    #[arg(long)]
    pub count: bool,
    #[arg(long)]
    pub file: Option<PathBuf>,
    #[arg(long)]
    pub stats: bool,
    #[arg(long)]
    pub import: Option<PathBuf>,
    #[arg(long, env = "EAVPIVOT_CONNECTION", hide_env_values = true)]
    pub connection: Option<String>,
}

pub fn run(args: &SudokuArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    Err(crate::Error::Usage("sudoku is not available in this build yet".into()).into())
}
