//! The command line: clap derive, one file per subcommand. Commands parse, call the library
//! and turn its errors into exit codes (0 ok, 1 the job failed, 2 usage or config invalid).

pub mod inspect;
mod output;
pub mod run;
pub mod script;
pub mod sudoku;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::StrategyName;

#[derive(Debug, Parser)]
#[command(
    name = "eavpivot",
    version,
    about = "Turn key-value (entity-attribute-value) tables into wide tables"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a job: discover attributes, create the wide table, load and verify it.
    Run(run::RunArgs),
    /// Validate a job file without connecting to anything.
    Check(CheckArgs),
    /// Survey the source read-only: attributes, fill, conflicts, widths, types, the plan.
    Inspect(inspect::InspectArgs),
    /// Print one self-contained SQL script that does the job inside the database.
    Script(script::ScriptArgs),
    /// Solve, count or import Sudoku puzzles.
    Sudoku(sudoku::SudokuArgs),
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The job file (YAML).
    pub job: PathBuf,
}

/// Where to connect; shared by every command that touches a database.
#[derive(Debug, Clone, Args)]
pub struct ConnectionArgs {
    /// sqlite:PATH, postgres://…, mysql://…, mariadb://…, mssql://… or an ADO.NET string.
    /// Default: the embedded SQLite file eavpivot.db in the working directory.
    #[arg(long, env = "EAVPIVOT_CONNECTION", hide_env_values = true)]
    pub connection: Option<String>,
    /// Seconds to wait for a server to accept the connection.
    #[arg(long, default_value_t = 15, value_name = "SECONDS")]
    pub connect_timeout: u64,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum StrategyArg {
    Auto,
    Pushdown,
    Stream,
}

impl From<StrategyArg> for StrategyName {
    fn from(s: StrategyArg) -> StrategyName {
        match s {
            StrategyArg::Auto => StrategyName::Auto,
            StrategyArg::Pushdown => StrategyName::Pushdown,
            StrategyArg::Stream => StrategyName::Stream,
        }
    }
}

/// Parse arguments, run the command, report errors as one line on stderr.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Run(args) => run::run(args),
        Command::Check(args) => run::check(args),
        Command::Script(args) => script::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Sudoku(args) => sudoku::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            let code = exit_code_of(&err);
            eprintln!("eavpivot: error: {err:#}");
            ExitCode::from(code)
        }
    }
}

/// 2 when the command line or job file is at fault, 1 when the job failed.
pub fn exit_code_of(err: &anyhow::Error) -> u8 {
    if let Some(e) = err.downcast_ref::<crate::Error>() {
        e.exit_code()
    } else if err.is::<crate::config::ConfigError>() || err.is::<clap::Error>() {
        2
    } else {
        1
    }
}
