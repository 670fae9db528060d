//! The command line: clap derive, one file per subcommand. Commands parse, call the library
//! and turn its errors into exit codes (0 ok, 1 the job failed, 2 usage or config invalid).

mod conflicts;
mod examples;
mod job;
mod manual;
pub mod output;
pub mod run;
pub mod script;
pub mod sudoku;
mod verbose;

pub use job::load_job;

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
    /// Print only errors and the output asked for (no progress notes or summary).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also print each statement as it runs, with its time, and the attribute -> column map.
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

/// How much a command says on stderr besides errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    Quiet,
    Normal,
    Verbose,
}

impl Verbosity {
    /// A progress note (connecting, sample data loaded, the summary): not under `--quiet`.
    pub fn note(self, text: &str) {
        if self >= Verbosity::Normal {
            eprint!("{text}");
        }
    }

    /// A detail for `--verbose` only.
    pub fn detail(self, text: &str) {
        if self >= Verbosity::Verbose {
            eprint!("{text}");
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a job: discover attributes, create the wide table, load and verify it.
    Run(run::RunArgs),
    /// Validate a job file without connecting to anything.
    Check(CheckArgs),
    /// Print one self-contained SQL script that does the job inside the database.
    Script(script::ScriptArgs),
    /// Solve, count or import Sudoku puzzles.
    Sudoku(sudoku::SudokuArgs),
    /// List the bundled example jobs, or write them out (`examples init DIR`).
    Examples(examples::ExamplesArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(manual::CompletionsArgs),
    /// Print the man page (roff) on stdout: `eavpivot man > eavpivot.1`.
    Man,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The job file (YAML), or a bundled job: `item_detail`, `builtin:item_detail`.
    pub job: PathBuf,
}

/// Where to connect; shared by every command that touches a database.
#[derive(Debug, Clone, Args)]
pub struct ConnectionArgs {
    /// sqlite:PATH, postgres://…, mysql://…, mariadb://…, mssql://… or an ADO.NET string.
    /// Default: the embedded SQLite file eavpivot.db in the working directory.
    #[arg(long, env = "EAVPIVOT_CONNECTION", hide_env_values = true)]
    pub connection: Option<String>,
    /// Seconds to wait for a server to accept the connection, negotiate TLS and log in
    /// (transient failures are retried within it).
    #[arg(long, default_value_t = 15, value_name = "SECONDS")]
    pub connect_timeout: u64,
    /// A file holding the password (its first line), used when the connection string has
    /// none; before EAVPIVOT_PASSWORD and each server's own variables (README "Connecting").
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
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
    let verbosity = match (cli.quiet, cli.verbose) {
        (true, _) => Verbosity::Quiet,
        (false, true) => Verbosity::Verbose,
        (false, false) => Verbosity::Normal,
    };
    let result = match &cli.command {
        Command::Run(args) => run::run(args, verbosity),
        Command::Check(args) => run::check(args, verbosity),
        Command::Script(args) => script::run(args),
        Command::Sudoku(args) => sudoku::run(args),
        Command::Examples(args) => examples::run(args, verbosity),
        Command::Completions(args) => manual::completions(args),
        Command::Man => manual::man(),
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
