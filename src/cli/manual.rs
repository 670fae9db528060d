//! Shell completions and the man pages, generated from the clap definitions so they can never
//! disagree with the flags the binary accepts.
//!
//! `eavpivot man` prints eavpivot(1); its SUBCOMMANDS section names eavpivot-run(1) and the
//! others, which `eavpivot man run` prints and `eavpivot man --out-dir DIR` writes, every page
//! at once. Besides clap's sections each page has EXIT STATUS and ENVIRONMENT, and the pages of
//! commands that read a job have JOB FILE FORMAT, built from `schemas/job.schema.json` (the
//! schema editors validate with), so the page lists exactly the keys the schema does.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::Shell;
use serde_json::Value;

use super::output::print_stdout;
use super::Cli;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The page of one subcommand (`run` prints eavpivot-run(1); `examples-init` the page of
    /// `examples init`); none: eavpivot(1).
    #[arg(value_name = "SUBCOMMAND")]
    pub page: Option<String>,
    /// Write every page (eavpivot.1, eavpivot-run.1, …) into DIR, created when missing,
    /// instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "page")]
    pub out_dir: Option<PathBuf>,
}

/// `eavpivot completions SHELL`: e.g. `eavpivot completions bash > ~/.local/share/bash-completion/completions/eavpivot`.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "eavpivot", &mut out);
    print_stdout(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}

/// `eavpivot man [SUBCOMMAND] [--out-dir DIR]`.
pub fn man(args: &ManArgs) -> anyhow::Result<ExitCode> {
    let pages = pages()?;
    if let Some(dir) = &args.out_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for page in &pages {
            let path = dir.join(&page.file);
            std::fs::write(&path, &page.roff)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        eprintln!("wrote {} man pages into {}", pages.len(), dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let wanted = match &args.page {
        None => "eavpivot".to_string(),
        Some(sub) => format!("eavpivot-{}", sub.replace(' ', "-")),
    };
    let Some(page) = pages.iter().find(|p| p.name == wanted) else {
        let names: Vec<&str> = pages
            .iter()
            .skip(1)
            .map(|p| &p.name["eavpivot-".len()..])
            .collect();
        return Err(crate::Error::Usage(format!(
            "no man page for '{}': the subcommands are {}",
            args.page.as_deref().unwrap_or_default(),
            names.join(", ")
        ))
        .into());
    };
    print_stdout(&page.roff)?;
    Ok(ExitCode::SUCCESS)
}

/// One generated man page.
pub struct Page {
    /// `eavpivot`, `eavpivot-run`, `eavpivot-examples-init`.
    pub name: String,
    /// `eavpivot-run.1`.
    pub file: String,
    pub roff: String,
}

/// Every page: eavpivot(1) first, then one per subcommand, nested ones too.
pub fn pages() -> anyhow::Result<Vec<Page>> {
    let mut top = Cli::command().disable_help_subcommand(true);
    top.build();
    let mut out = Vec::new();
    collect(&top, true, &mut out)?;
    Ok(out)
}

fn collect(cmd: &clap::Command, top: bool, out: &mut Vec<Page>) -> anyhow::Result<()> {
    out.push(render(cmd, top)?);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, false, out)?;
    }
    Ok(())
}

/// clap's sections, then ours, then the version.
fn render(cmd: &clap::Command, top: bool) -> anyhow::Result<Page> {
    let name = cmd
        .get_display_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut roff = Vec::new();
    man.render_title(&mut roff)?;
    man.render_name_section(&mut roff)?;
    man.render_synopsis_section(&mut roff)?;
    man.render_description_section(&mut roff)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut roff)?;
    }
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut roff)?;
    }
    let mut roff = String::from_utf8(roff).context("the man page is not UTF-8")?;
    let reads_job = top || cmd.get_arguments().any(|a| a.get_id() == "job");
    if reads_job {
        roff.push_str(&job_file_format()?);
    }
    roff.push_str(EXIT_STATUS);
    roff.push_str(ENVIRONMENT);
    roff.push_str(&see_also(&name));
    // Only the top command carries the version (clap_mangen panics on a command without one).
    if cmd.get_version().is_some() {
        let mut version = Vec::new();
        man.render_version_section(&mut version)?;
        roff.push_str(&String::from_utf8_lossy(&version));
    }
    Ok(Page {
        file: format!("{name}.1"),
        name,
        roff,
    })
}

const EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
Success (also a merge whose delta names no entity, and a closed pipe on stdout).
.TP
\fB1\fR
The job failed: data, server, verification, a lock timeout or another run in the way; everything was rolled back and the error line says what was done and undone. \fBsudoku\fR: the puzzle has no solution, several, or invalid givens.
.TP
\fB2\fR
The command line or the job file is invalid (including a target that is the source); nothing ran.
.TP
\fB130\fR
Interrupted by Ctrl\-C (SIGINT), after rolling back (or after a COMMIT that was already running finished).
.TP
\fB143\fR
Stopped by SIGTERM, after rolling back.
"#;

const ENVIRONMENT: &str = r#".SH ENVIRONMENT
.TP
\fBEAVPIVOT_CONNECTION\fR
The source database, as \fB\-\-connection\fR (which wins); both win over the job's source.connection.
.TP
\fBEAVPIVOT_TARGET_CONNECTION\fR
The database to write to, as \fB\-\-target\-connection\fR.
.TP
\fBEAVPIVOT_PASSWORD\fR
The password when the connection string and \fB\-\-password\-file\fR give none.
.TP
\fBPGPASSWORD\fR, \fBMYSQL_PWD\fR, \fBSQLCMDPASSWORD\fR
Each server's own password variable, read after EAVPIVOT_PASSWORD.
.TP
\fBPGPASSFILE\fR
PostgreSQL's password file (default ~/.pgpass), read after the variables above; ignored, with a warning, when others can read it.
.TP
\fBPGHOST\fR, \fBPGPORT\fR, \fBPGUSER\fR, \fBPGDATABASE\fR
Fill what a PostgreSQL connection string leaves out.
.TP
\fBPGSSLMODE\fR, \fBPGSSLROOTCERT\fR, \fBPGSSLCERT\fR, \fBPGSSLKEY\fR
PostgreSQL TLS settings, as libpq reads them.
.TP
\fBCI\fR
When set, never prompt for a password (a prompt needs stdin and stderr to be terminals too).
"#;

/// The other pages: eavpivot(1) names the subcommands' pages itself.
fn see_also(name: &str) -> String {
    let mut out = String::from(".SH \"SEE ALSO\"\n");
    if name != "eavpivot" {
        out.push_str("\\fBeavpivot\\fR(1), ");
    }
    out.push_str(
        "docs/guide.md (migrations step by step), docs/reference.md (every key, flag and \
         \\-\\-json field), schemas/job.schema.json (the job file for editors)\n",
    );
    out
}

/// JOB FILE FORMAT: every key of `schemas/job.schema.json`, its choices and what it does.
fn job_file_format() -> anyhow::Result<String> {
    let schema: Value = serde_json::from_str(JOB_SCHEMA).context("schemas/job.schema.json")?;
    let mut out = String::from(
        ".SH \"JOB FILE FORMAT\"\n\
         A job is a YAML 1.2 file; unknown keys are an error naming the file, line and key. \
         Required: name, source.table, entity, attribute, value, target.table. \
         ${NAME} in the SQL of where, changed, on, entity, attribute and value takes \
         \\fB\\-\\-var\\fR NAME=VALUE. \
         Editors validate and complete job files with \
         # yaml\\-language\\-server: $schema=schemas/job.schema.json.\n",
    );
    let mut keys = Vec::new();
    job_keys(&schema, &schema, "", &mut keys);
    for (path, text) in keys {
        out.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{}\n",
            roff_text(&path),
            roff_text(&text)
        ));
    }
    Ok(out)
}

/// The job schema, compiled in.
const JOB_SCHEMA: &str = include_str!("../../schemas/job.schema.json");

/// `(key path, description and choices)` for every property under `node`, depth first.
fn job_keys(schema: &Value, node: &Value, prefix: &str, out: &mut Vec<(String, String)>) {
    let Some(props) = resolved(schema, node)["properties"].as_object() else {
        return;
    };
    for (key, value) in props {
        let value = resolved(schema, value);
        let path = format!("{prefix}{key}");
        let mut text = value["description"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if let Some(words) = value["enum"].as_array() {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            text = format!("{}. {text}", words.join(" | "));
        }
        out.push((path.clone(), text.trim().to_string()));
        match value["type"].as_str() {
            Some("array") => job_keys(schema, &value["items"], &format!("{path}[]."), out),
            _ => job_keys(schema, value, &format!("{path}."), out),
        }
    }
}

/// `node`, or the `$defs` entry its `$ref` names.
fn resolved<'a>(schema: &'a Value, node: &'a Value) -> &'a Value {
    match node["$ref"].as_str().and_then(|r| r.strip_prefix('#')) {
        Some(pointer) => schema.pointer(pointer).unwrap_or(node),
        None => node,
    }
}

/// Text safe in a roff line: backslashes escaped, no line starting a request.
fn roff_text(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    match text.starts_with(['.', '\'']) {
        true => format!("\\&{text}"),
        false => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `eavpivot-run(1)`-style references in a page.
    fn references(roff: &str) -> Vec<String> {
        let text = roff.replace("\\-", "-");
        let mut names = Vec::new();
        for (at, _) in text.match_indices("(1)") {
            let start = text[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(0, |i| i + 1);
            let name = text[start..at]
                .trim_start_matches("fB")
                .trim_end_matches("\\fR");
            if name.starts_with("eavpivot") {
                names.push(name.to_string());
            }
        }
        names
    }

    #[test]
    fn every_page_the_pages_name_is_generated_with_its_sections() {
        let pages = pages().expect("pages");
        let names: Vec<&str> = pages.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names[0], "eavpivot");
        let top_refs = references(&pages[0].roff);
        for sub in [
            "run",
            "check",
            "inspect",
            "script",
            "sudoku",
            "examples",
            "completions",
            "man",
        ] {
            let name = format!("eavpivot-{sub}");
            assert!(
                top_refs.contains(&name),
                "eavpivot(1) does not name {name}(1)"
            );
        }
        assert!(
            !top_refs.iter().any(|r| r == "eavpivot-help"),
            "{top_refs:?}"
        );
        for page in &pages {
            for name in references(&page.roff) {
                assert!(
                    names.contains(&name.as_str()),
                    "{} names {name}(1), which is not generated",
                    page.name
                );
            }
            for section in [
                ".SH NAME",
                ".SH SYNOPSIS",
                ".SH DESCRIPTION",
                ".SH \"EXIT STATUS\"",
                ".SH ENVIRONMENT",
                ".SH \"SEE ALSO\"",
            ] {
                assert!(page.roff.contains(section), "{} lacks {section}", page.name);
            }
            assert_eq!(page.file, format!("{}.1", page.name));
        }
        assert!(names.contains(&"eavpivot-examples-init"), "{names:?}");
        for (name, has_job_format) in [
            ("eavpivot", true),
            ("eavpivot-run", true),
            ("eavpivot-check", true),
            ("eavpivot-inspect", true),
            ("eavpivot-script", true),
            ("eavpivot-sudoku", false),
        ] {
            let page = pages.iter().find(|p| p.name == name).expect(name);
            assert_eq!(
                page.roff.contains(".SH \"JOB FILE FORMAT\""),
                has_job_format,
                "{name}"
            );
        }
        let run = pages
            .iter()
            .find(|p| p.name == "eavpivot-run")
            .expect("run page");
        for flag in [
            "\\-\\-dry\\-run",
            "\\-\\-target\\-connection",
            "\\-\\-lock\\-timeout",
            "\\-\\-var",
        ] {
            assert!(run.roff.contains(flag), "eavpivot-run(1) lacks {flag}");
        }
    }

    #[test]
    fn out_dir_writes_every_page_and_an_unknown_page_is_a_usage_error() {
        let dir = tempfile::tempdir().expect("tmp");
        let out = dir.path().join("man1");
        let args = ManArgs {
            page: None,
            out_dir: Some(out.clone()),
        };
        man(&args).expect("man --out-dir");
        for page in pages().expect("pages") {
            let written = std::fs::read_to_string(out.join(&page.file)).expect("page written");
            assert_eq!(written, page.roff, "{}", page.file);
        }
        let args = ManArgs {
            page: Some("nosuch".into()),
            out_dir: None,
        };
        let err = man(&args).expect_err("no such page");
        assert_eq!(super::super::exit_code_of(&err), 2);
        assert!(err.to_string().contains("run, check, inspect"), "{err}");
    }

    #[test]
    fn the_job_file_format_lists_every_key_of_the_schema() {
        let section = job_file_format().expect("section");
        for key in [
            "name",
            "setup",
            "source.table",
            "source.joins[].kind",
            "source.changed",
            "entity",
            "pivot.infer.widths",
            "pivot.on_new_attributes",
            "target.split",
            "target.on_missing",
            "transforms[].map.default",
            "transforms[].sudoku_solve.engine",
            "strategy",
            "lock_timeout",
        ] {
            let term = format!("\\fB{}\\fR\n", roff_text(key));
            assert!(
                section.contains(&term),
                "JOB FILE FORMAT lacks {key}:\n{section}"
            );
        }
        assert!(
            section.contains("fail | replace | append | merge"),
            "{section}"
        );
        // Every line is roff text or a request of ours, never a stray request from the text.
        for line in section.lines().filter(|l| l.starts_with('.')) {
            assert!(line == ".TP" || line.starts_with(".SH"), "{line}");
        }
    }
}
