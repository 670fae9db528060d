//! The command line: clap derive, one file per subcommand. Commands parse, call the library
//! and turn its errors into exit codes (0 ok, 1 the job failed, 2 usage or config invalid).

mod conflicts;
mod examples;
pub mod inspect;
mod job;
mod manual;
pub mod output;
pub mod run;
pub mod script;
pub mod sudoku;
mod verbose;

pub use job::load_job;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::backend::ConnectionSpec;
use crate::config::{ConfigError, Job, StrategyName, Vars};

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
    /// Survey the source read-only: attributes, fill, conflicts, widths, types, the plan.
    Inspect(inspect::InspectArgs),
    /// Print one self-contained SQL script that does the job inside the database.
    Script(script::ScriptArgs),
    /// Solve, count or import Sudoku puzzles.
    Sudoku(sudoku::SudokuArgs),
    /// List the bundled example jobs, or write them out (`examples init DIR`).
    Examples(examples::ExamplesArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(manual::CompletionsArgs),
    /// Print the man page (roff) on stdout: `eavpivot man > eavpivot.1`, `eavpivot man run`,
    /// or write every page: `eavpivot man --out-dir DIR`.
    Man(manual::ManArgs),
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The job file (YAML), or a bundled job: `item_detail`, `builtin:item_detail`.
    pub job: PathBuf,
    #[command(flatten)]
    pub vars: VarArgs,
}

/// `--var NAME=VALUE`: shared by every command that loads a job, so a `${NAME}` job can be
/// checked, inspected and scripted exactly as it runs.
#[derive(Debug, Clone, Default, Args)]
pub struct VarArgs {
    /// A value for `${NAME}` in the job's operator SQL (where, on, expressions); repeatable.
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = crate::config::parse_var)]
    pub vars: Vec<(String, String)>,
}

impl VarArgs {
    /// Load the job `arg` names (a file or a bundled job) with these values for its `${NAME}`s.
    pub fn load_job(&self, arg: &Path) -> std::result::Result<job::LoadedJob, ConfigError> {
        let vars: Vars = self.vars.iter().cloned().collect();
        job::load_job_with_vars(arg, &vars)
    }
}

/// Where to connect; shared by every command that touches a database.
#[derive(Debug, Clone, Args)]
pub struct ConnectionArgs {
    /// sqlite:PATH, postgres://…, mysql://…, mariadb://…, mssql://… or an ADO.NET string.
    /// Default: the job's source.connection, else the embedded SQLite file eavpivot.db in the
    /// working directory.
    #[arg(long, env = "EAVPIVOT_CONNECTION", hide_env_values = true)]
    pub connection: Option<String>,
    /// Seconds to wait for a server to accept the connection, negotiate TLS and log in
    /// (transient failures are retried within it).
    #[arg(long, default_value_t = 15, value_name = "SECONDS")]
    pub connect_timeout: u64,
    /// A file holding the password (its first line), used when the connection string has
    /// none; before EAVPIVOT_PASSWORD and each server's own variables (docs/reference.md,
    /// "Where the password comes from").
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
}

impl ConnectionArgs {
    /// The source database: `--connection` (or `EAVPIVOT_CONNECTION`) wins over the job's
    /// `source.connection`; neither means the embedded default.
    pub fn source_spec(&self, job: &Job) -> crate::error::Result<ConnectionSpec> {
        let given = self.connection.as_deref();
        ConnectionSpec::parse(given.or(job.source.connection.as_deref()))
    }
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
        Command::Inspect(args) => inspect::run(args, verbosity),
        Command::Sudoku(args) => sudoku::run(args),
        Command::Examples(args) => examples::run(args, verbosity),
        Command::Completions(args) => manual::completions(args),
        Command::Man(args) => manual::man(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            let code = exit_code_of(&err);
            eprintln!("eavpivot: error: {}", one_line(&err));
            ExitCode::from(code)
        }
    }
}

/// Longest error line printed: room for any message and its cut names, never a whole
/// statement or a 10 MB value a driver put in its text.
const MAX_ERROR_BYTES: usize = 2_000;

/// The error and its causes as ONE line: each cause said once (a message that already ends
/// with its source's text, `cannot read job file x: Is a directory (os error 21)`, printed
/// the OS text twice under `{:#}`), line breaks folded, and cut with its length if still huge.
pub fn one_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        let text: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let text = text.join(" ");
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    if line.len() > MAX_ERROR_BYTES {
        let total = line.len();
        let mut cut = MAX_ERROR_BYTES;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
        line.push_str(&format!("… ({total} bytes in all)"));
    }
    line
}

/// 2 when the command line or job file is at fault, 1 when the job failed, and 130 or 143
/// when a SIGINT or SIGTERM stopped it (whatever error the stop surfaced as).
pub fn exit_code_of(err: &anyhow::Error) -> u8 {
    if let Some(code) = crate::interrupt::signal_exit_code() {
        code
    } else if let Some(e) = err.downcast_ref::<crate::Error>() {
        e.exit_code()
    } else if err.is::<crate::config::ConfigError>() || err.is::<clap::Error>() {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_one_line_with_each_cause_once() {
        let io = std::io::Error::other("Is a directory (os error 21)");
        let err = anyhow::Error::new(crate::Error::Io {
            context: "cannot read x".into(),
            source: io,
        });
        assert_eq!(
            one_line(&err),
            "cannot read x: Is a directory (os error 21)"
        );
        let err = anyhow::anyhow!("near \"x\": syntax error in\n  SELECT x\n  FROM y")
            .context("job j failed");
        assert_eq!(
            one_line(&err),
            "job j failed: near \"x\": syntax error in SELECT x FROM y"
        );
        let long = anyhow::anyhow!("{}", "é".repeat(MAX_ERROR_BYTES));
        let line = one_line(&long);
        assert!(line.len() < MAX_ERROR_BYTES + 40, "{}", line.len());
        assert!(line.ends_with(&format!("… ({} bytes in all)", 2 * MAX_ERROR_BYTES)));
    }
}
