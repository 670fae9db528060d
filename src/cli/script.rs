//! `eavpivot script JOB --dialect D [--output FILE]`: one self-contained SQL script that
//! discovers the attributes server-side and runs the pivot with dynamic SQL, for DBAs without
//! eavpivot.
//!
//! The command only loads the job and prints (or writes) the text; the scripts are rendered
//! dialect-side ([`crate::dialect::script`]), so golden tests and the parser checks see the
//! same text.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::output::print_stdout;
use super::VarArgs;
use crate::dialect::{self, script};
use crate::error::Error;

#[derive(Debug, Args)]
pub struct ScriptArgs {
    /// The job file (YAML), or a bundled job: `item_detail`, `builtin:item_detail`.
    pub job: PathBuf,
    /// The SQL dialect of the script: mssql (T-SQL), postgres (PL/pgSQL DO block), mariadb
    /// (compound statement) or oracle (PL/SQL block). sqlite has no dynamic SQL and is refused.
    #[arg(long, default_value = "mssql")]
    pub dialect: String,
    /// SQL Server before 2017: build the column lists with FOR XML PATH instead of STRING_AGG.
    #[arg(long)]
    pub for_xml_path: bool,
    /// Write the script to this file instead of stdout.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub vars: VarArgs,
}

pub fn run(args: &ScriptArgs) -> anyhow::Result<ExitCode> {
    let job = args.vars.load_job(&args.job)?.job;
    let Some(dialect) = dialect::by_name(&args.dialect) else {
        return Err(Error::Usage(format!(
            "--dialect {}: unknown dialect (use {})",
            args.dialect,
            dialect::known_names()
        ))
        .into());
    };
    let options = script::ScriptOptions {
        for_xml_path: args.for_xml_path,
    };
    let text = script::render(dialect, &crate::plan::script_plan(&job), options)?;
    match &args.output {
        None => print_stdout(&text)?,
        Some(path) => {
            std::fs::write(path, &text)
                .with_context(|| format!("writing the script to {}", path.display()))?;
            eprintln!(
                "eavpivot: {} script for job {} written to {}",
                dialect.name(),
                job.name,
                path.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
