//! `eavpivot script JOB --dialect D`: one self-contained SQL script that discovers the
//! attributes server-side and runs the pivot with dynamic SQL, for DBAs without eavpivot.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

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
    let _ = args;
    Err(crate::Error::Usage("script is not available in this build yet".into()).into())
}
