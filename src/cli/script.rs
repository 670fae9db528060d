//! `eavpivot script JOB --dialect D`: one self-contained SQL script that discovers the
//! attributes server-side and runs the pivot with dynamic SQL, for DBAs without eavpivot.
//!
//! The command only loads the job and prints; the T-SQL is rendered dialect-side
//! ([`crate::dialect::mssql_script`]), so golden tests and the parser check see the same text.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::output::print_stdout;
use crate::config;
use crate::dialect::{self, mssql_script};
use crate::error::Error;

#[derive(Debug, Args)]
pub struct ScriptArgs {
    /// The job file (YAML).
    pub job: PathBuf,
    /// The SQL dialect of the script.
    #[arg(long, default_value = "mssql")]
    pub dialect: String,
    /// SQL Server before 2017: build the column lists with FOR XML PATH instead of STRING_AGG.
    #[arg(long)]
    pub for_xml_path: bool,
}

pub fn run(args: &ScriptArgs) -> anyhow::Result<ExitCode> {
    let job = config::load_job(&args.job)?;
    let Some(dialect) = dialect::by_name(&args.dialect) else {
        return Err(Error::Usage(format!(
            "--dialect {}: unknown dialect (use mssql, postgres, mariadb or sqlite)",
            args.dialect
        ))
        .into());
    };
    if dialect.name() != "mssql" {
        return Err(Error::Usage(format!(
            "script is not supported for dialect {}: only mssql (T-SQL) has a standalone script; use eavpivot run --dry-run to see the statements",
            dialect.name()
        ))
        .into());
    }
    let aggregation = if args.for_xml_path {
        mssql_script::Aggregation::ForXmlPath
    } else {
        mssql_script::Aggregation::StringAgg
    };
    print_stdout(&mssql_script::render(&job, aggregation)?)?;
    Ok(ExitCode::SUCCESS)
}
