//! `eavpivot examples`: what is bundled, and `examples init DIR` to write it out.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::output::print_stdout;
use super::Verbosity;
use crate::examples::{self, BUILTIN_PREFIX};

#[derive(Debug, Args)]
pub struct ExamplesArgs {
    #[command(subcommand)]
    pub action: Option<ExamplesAction>,
}

#[derive(Debug, Subcommand)]
pub enum ExamplesAction {
    /// Write the bundled jobs (config/) and sample data (sql/<dialect>/) into DIR.
    Init {
        /// Created when missing; the files keep the repository layout.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Overwrite bundled files that exist already (otherwise they are kept).
        #[arg(long)]
        force: bool,
    },
}

pub fn run(args: &ExamplesArgs, verbosity: Verbosity) -> anyhow::Result<ExitCode> {
    match &args.action {
        None => print_stdout(&listing())?,
        Some(ExamplesAction::Init { dir, force }) => {
            let done = examples::write_all(dir, *force)
                .with_context(|| format!("writing the examples into {}", dir.display()))?;
            for path in &done.written {
                verbosity.detail(&format!("wrote {}\n", path.display()));
            }
            if !done.kept.is_empty() {
                let kept: Vec<String> = done.kept.iter().map(|p| p.display().to_string()).collect();
                verbosity.note(&format!(
                    "kept {} existing files (--force overwrites them): {}\n",
                    kept.len(),
                    kept.join(", ")
                ));
            }
            verbosity.note(&format!(
                "wrote {} files into {}: run one with `eavpivot run {}`\n",
                done.written.len(),
                dir.display(),
                dir.join(examples::JOBS[0].file.path).display()
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per bundled job, then how to run and copy them.
fn listing() -> String {
    let width = examples::JOBS
        .iter()
        .map(|j| j.name.len())
        .max()
        .unwrap_or(0);
    let mut out = String::from("bundled jobs (embedded in this binary):\n");
    for job in examples::JOBS {
        out.push_str(&format!("  {:width$}  {}\n", job.name, job.description()));
    }
    out.push_str(&format!(
        "sample data for each: sql/{{sqlite,postgres,mariadb,mssql}}/<job>.sql\n\
         run one:    eavpivot run {first}   (or {BUILTIN_PREFIX}{first}; a file of that name wins)\n\
         copy them:  eavpivot examples init DIR\n",
        first = examples::JOBS[0].name
    ));
    out
}
