//! `eavpivot run JOB` and `eavpivot check JOB`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::conflicts;
use super::job::{load_sample_data, source_exists, LoadedJob};
use super::output::{print_stdout, with_json_failure, write_output};
use super::verbose::Logged;
use super::{CheckArgs, ConnectionArgs, StrategyArg, VarArgs, Verbosity};
use crate::backend::{self, Backend, ConnectOptions, ConnectionSpec};
use crate::error::{Error, Result};
use crate::execute::{self, RunOptions};
use crate::plan::PlanOptions;
use crate::report;

/// Rows `--preview` shows when not given.
const DEFAULT_PREVIEW_ROWS: usize = 5;
/// Extra rows read for the preview, so a group of rows (a 25×25 grid at most) ends whole.
const GROUP_READ_AHEAD: usize = 100;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The job file (YAML), or a bundled job: `item_detail`, `builtin:item_detail`
    /// (`eavpivot examples` lists them; a file of that name wins over the bundled job).
    pub job: PathBuf,
    /// Print every statement it would run, in order, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: write the script to FILE instead of stdout.
    #[arg(
        long,
        short,
        value_name = "FILE",
        requires = "dry_run",
        conflicts_with = "json"
    )]
    pub output: Option<PathBuf>,
    /// Write every conflicting entity/attribute pair with all its distinct values to FILE
    /// (CSV), before the job runs.
    #[arg(long, value_name = "FILE")]
    pub conflicts: Option<PathBuf>,
    /// Print the report as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Override the job's strategy.
    #[arg(long, value_enum)]
    pub strategy: Option<StrategyArg>,
    /// Load the job's sample data (`setup:`) when its source table is missing, on any backend
    /// (the embedded default does this on its own).
    #[arg(long)]
    pub load_sample: bool,
    /// Rows of the finished table to print (0 for none; default 5, none under --quiet). A
    /// job keyed by several columns shows whole groups (a whole Sudoku grid).
    #[arg(long, value_name = "ROWS")]
    pub preview: Option<usize>,
    /// Write the target into this database instead of the source's (also
    /// `EAVPIVOT_TARGET_CONNECTION`, or the job's target.connection); the stream moves the rows.
    #[arg(
        long,
        env = "EAVPIVOT_TARGET_CONNECTION",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub target_connection: Option<String>,
    #[command(flatten)]
    pub vars: VarArgs,
    /// Seconds any statement may wait for a lock before the run fails and rolls back
    /// (overrides the job's lock_timeout; default 30).
    #[arg(long, value_name = "SECONDS")]
    pub lock_timeout: Option<u64>,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

pub fn check(args: &CheckArgs, verbosity: Verbosity) -> anyhow::Result<ExitCode> {
    let job = args.vars.load_job(&args.job)?.job;
    verbosity.note(&format!(
        "{}: ok (job {}, source {}, target {}, {} entity key(s), {} transform(s))\n",
        args.job.display(),
        job.name,
        job.source.table,
        job.target.table,
        job.entity.len(),
        job.transforms.len()
    ));
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: &RunArgs, verbosity: Verbosity) -> anyhow::Result<ExitCode> {
    with_json_failure(args.json, run_job_file(args, verbosity))
}

fn run_job_file(args: &RunArgs, verbosity: Verbosity) -> anyhow::Result<ExitCode> {
    let mut job = args.vars.load_job(&args.job)?;
    if let Some(secs) = args.lock_timeout {
        job.job.lock_timeout = crate::config::validate_lock_timeout(Some(secs))
            .map_err(|m| Error::Usage(format!("--lock-timeout: {m}")))?;
    }
    // The command line wins over the job file, for the source as for the target.
    let spec = args.connection.source_spec(&job.job)?;
    let target = (args.target_connection.clone()).or_else(|| job.job.target.connection.clone());
    let target = target
        .as_deref()
        .map(|t| ConnectionSpec::parse(Some(t)))
        .transpose()?;
    // From here on SIGINT/SIGTERM cancel the running statement and roll back, and say so.
    let _interrupt = crate::interrupt::InterruptGuard::arm();
    let options = connect_options(&args.connection)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let specs = (&spec, target.as_ref());
    // What a dry run on a connection with no backend in this build (`sql_only`: Oracle) was
    // given before it stopped.
    let asked = backend::DryRunLog::default();
    let result = runtime.block_on(run_async(args, &job, specs, &options, verbosity, &asked));
    if result.is_err() && !args.json {
        let sql_only = [Some(&spec), target.as_ref()]
            .into_iter()
            .flatten()
            .find(|s| s.driver.sql_only);
        if let Some(script) =
            sql_only.and_then(|s| asked.script(&job.job.name, s.driver.name(), s.display()))
        {
            write_output(args.output.as_deref(), &script)?;
        }
    }
    result
}

/// The database a run across two databases writes to. A SQLite file that does not exist
/// is created for the output, except in a dry run, which writes nothing (an empty in-memory
/// database stands in for it).
async fn open_target(
    spec: &ConnectionSpec,
    options: &ConnectOptions,
    (dry_run, asked): (bool, &backend::DryRunLog),
    verbosity: Verbosity,
) -> anyhow::Result<Box<dyn Backend>> {
    verbosity.note(&format!("writing to {}\n", spec.display()));
    let backend = open_backend(spec, options, Some(""), (dry_run, asked), verbosity).await?;
    Ok(match verbosity >= Verbosity::Verbose {
        true => Box::new(Logged(backend)),
        false => backend,
    })
}

/// Connect to `spec`. A SQLite file that does not exist is created only where `create` says
/// why (a mistyped path must not silently become a new, empty database), and never in a dry
/// run, which gets an empty in-memory stand-in instead; the embedded default makes its own.
/// A dry run on a driver with no backend in this build gets the registry's stand-in, which
/// records into `asked`.
async fn open_backend(
    spec: &ConnectionSpec,
    options: &ConnectOptions,
    create: Option<&str>,
    (dry_run, asked): (bool, &backend::DryRunLog),
    verbosity: Verbosity,
) -> anyhow::Result<Box<dyn Backend>> {
    if let Some(stand_in) = dry_run
        .then(|| spec.driver.dry_run_stand_in(asked))
        .flatten()
    {
        return Ok(stand_in);
    }
    let missing = create.and_then(|why| Some((spec.missing_file()?, why)));
    Ok(match missing {
        Some(_) if dry_run => spec.driver.in_memory()?,
        Some((path, why)) if !spec.embedded => {
            std::fs::File::create(path)
                .with_context(|| format!("creating SQLite database {}", path.display()))?;
            verbosity.note(&format!(
                "created SQLite database {}{why}\n",
                path.display()
            ));
            backend::connect(spec, options).await?
        }
        _ => backend::connect(spec, options).await?,
    })
}

/// The timeout, and the password for a connection string without one: `--password-file`,
/// else `EAVPIVOT_PASSWORD` (each backend then looks at its server's own variables).
pub fn connect_options(args: &ConnectionArgs) -> Result<ConnectOptions> {
    let password = match &args.password_file {
        Some(path) => Some(read_password_file(path)?),
        None => std::env::var("EAVPIVOT_PASSWORD")
            .ok()
            .filter(|p| !p.is_empty()),
    };
    Ok(ConnectOptions {
        connect_timeout: Duration::from_secs(args.connect_timeout),
        password,
    })
}

/// The first line of `path`, without its line ending; an empty one is a mistake worth naming.
fn read_password_file(path: &Path) -> Result<String> {
    // Usage, not Io: its message already holds the OS text, and Io's source would repeat it.
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::Usage(format!(
            "cannot read --password-file {}: {e}",
            path.display()
        ))
    })?;
    let line = text.lines().next().unwrap_or("").to_string();
    if line.is_empty() {
        return Err(Error::Usage(format!(
            "--password-file {}: the first line is empty",
            path.display()
        )));
    }
    Ok(line)
}

async fn run_async(
    args: &RunArgs,
    loaded: &LoadedJob,
    (spec, target_spec): (&ConnectionSpec, Option<&ConnectionSpec>),
    options: &ConnectOptions,
    verbosity: Verbosity,
    asked: &backend::DryRunLog,
) -> anyhow::Result<ExitCode> {
    let job = &loaded.job;
    if loaded.bundled.is_some() {
        verbosity.note(&format!(
            "running the bundled job {} (`eavpivot examples init DIR` writes it out to edit)\n",
            job.path.display()
        ));
    }
    verbosity.note(&format!("connecting to {}\n", spec.display()));
    let may_create = spec.embedded || args.load_sample;
    let create = may_create.then_some(" for the sample data");
    let dry_run = (args.dry_run, asked);
    let mut backend = open_backend(spec, options, create, dry_run, verbosity).await?;
    let session_sql = backend.set_lock_timeout(job.lock_timeout).await?;
    if verbosity >= Verbosity::Verbose {
        super::verbose::echo_session(&session_sql);
    }
    let mut sample_loaded = false;
    if spec.embedded || args.load_sample {
        if args.dry_run && !source_exists(backend.as_mut(), job).await? && job.setup.is_some() {
            if !spec.embedded {
                return Err(Error::Usage(
                    "--dry-run with --load-sample needs the source tables to exist already".into(),
                )
                .into());
            }
            // A dry run writes nothing, not even sample data: use a private in-memory copy.
            backend = spec.driver.in_memory()?;
            verbosity.note("dry run: the sample data is loaded into a temporary in-memory database; nothing is written\n");
        }
        if let Some(from) = load_sample_data(backend.as_mut(), loaded).await? {
            verbosity.note(&format!(
                "source table {} was missing: loaded sample data from {from}\n",
                job.source.table
            ));
            sample_loaded = true;
        }
    }
    if verbosity >= Verbosity::Verbose {
        backend = Box::new(Logged(backend));
    }
    if let Some(path) = &args.conflicts {
        let pairs = conflicts::export(backend.as_mut(), job, path).await?;
        verbosity.note(&format!(
            "conflicts: {pairs} entity/attribute pairs with more than one value written to {}\n",
            path.display()
        ));
    }
    // Read past the rows asked for, to finish the last group of a several-column key.
    let read_ahead = if job.entity.len() > 1 {
        GROUP_READ_AHEAD
    } else {
        0
    };
    let run_options = RunOptions {
        dry_run: args.dry_run,
        plan: PlanOptions {
            strategy: args.strategy.map(Into::into),
            ..PlanOptions::default()
        },
        preview_rows: match (args.json, args.preview, verbosity) {
            (true, _, _) | (false, None, Verbosity::Quiet) | (false, Some(0), _) => 0,
            (false, rows, _) => rows.unwrap_or(DEFAULT_PREVIEW_ROWS) + read_ahead,
        },
        no_progress: verbosity == Verbosity::Quiet,
    };
    let (outcome, target_session_sql) = match target_spec {
        None => (
            execute::run_job(job, backend.as_mut(), &run_options).await?,
            Vec::new(),
        ),
        Some(target_spec) => {
            let mut target = open_target(target_spec, options, dry_run, verbosity).await?;
            let sent = target.set_lock_timeout(job.lock_timeout).await?;
            let outcome =
                execute::run_job_across(job, backend.as_mut(), target.as_mut(), &run_options)
                    .await?;
            (outcome, sent)
        }
    };
    let mut report = outcome.report;
    report.connection = spec.display().to_string();
    report.target_connection = target_spec.map(|t| t.display().to_string());
    report.sample_data_loaded = sample_loaded;
    record_session(&mut report, target_session_sql, job.lock_timeout, false);
    let across = target_spec.is_some();
    record_session(&mut report, session_sql, job.lock_timeout, across);
    if args.json {
        print_stdout(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    verbosity.note(&report.summary());
    verbosity.detail(&report.column_map());
    if args.dry_run {
        let script = report::dry_run_script(&report, &statements_of(&report));
        write_output(args.output.as_deref(), &script)?;
        if let Some(path) = &args.output {
            verbosity.note(&format!("dry run: the script is in {}\n", path.display()));
        }
    } else {
        if let Some(mut preview) = outcome.preview {
            let asked = run_options.preview_rows - read_ahead;
            let keys = outcome.plan.tables.first().map_or(1, |t| t.entity.len());
            let whole = preview.keep_whole_groups(asked, keys);
            let cut = if whole { "" } else { "…\n" };
            print_stdout(&format!(
                "first rows of {} ({} rows in all):\n{}{cut}",
                preview.table,
                preview.total_rows,
                preview.render()
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The session settings sent before the job's own statements go first in the report (which
/// lists every statement sent) and in the dry-run script (where they ran too).
fn record_session(
    report: &mut report::Report,
    sent: Vec<String>,
    timeout: Duration,
    on_source: bool,
) {
    let note = format!(
        "session: lock_timeout {} s (and this connection's id, to name lock holders)",
        timeout.as_secs()
    );
    let logged = sent.into_iter().map(|sql| execute::Statement {
        kind: execute::StatementKind::Inspect,
        sql,
        note: Some(note.clone()),
        on_source,
    });
    let logged: Vec<_> = logged.collect();
    report
        .statements
        .splice(0..0, logged.iter().map(|s| s.sql.clone()));
    report.statement_log.splice(0..0, logged);
}

/// The report keeps statements as text; the dry-run script wants them with their kinds.
fn statements_of(report: &report::Report) -> Vec<execute::Statement> {
    report.statement_log.clone()
}
