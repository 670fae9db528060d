//! Shell completions and the man page, generated from the clap definitions so they can never
//! disagree with the flags the binary accepts.

use std::process::ExitCode;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::output::print_stdout;
use super::Cli;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// `eavpivot completions SHELL`: e.g. `eavpivot completions bash > ~/.local/share/bash-completion/completions/eavpivot`.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "eavpivot", &mut out);
    print_stdout(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}

/// `eavpivot man`: the roff page (synopsis, options, the subcommands and what each does).
pub fn man() -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    print_stdout(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}
