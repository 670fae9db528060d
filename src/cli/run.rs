//! `eavpivot run JOB` and `eavpivot check JOB`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::output::print_stdout;
use super::{CheckArgs, ConnectionArgs, StrategyArg};
use crate::backend::{self, Backend, ConnectOptions, ConnectionSpec, Driver};
use crate::config::{self, Job};
use crate::error::{Error, Result};
use crate::execute::{self, RunOptions};
use crate::plan::PlanOptions;
use crate::report;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The job file (YAML).
    pub job: PathBuf,
    /// Print every statement it would run, in order, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
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
    /// Rows of the finished table to print (0 for none).
    #[arg(long, default_value_t = 5, value_name = "ROWS")]
    pub preview: usize,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

pub fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let job = config::load_job(&args.job)?;
    eprintln!(
        "{}: ok (job {}, source {}, target {}, {} entity key(s), {} transform(s))",
        args.job.display(),
        job.name,
        job.source.table,
        job.target.table,
        job.entity.len(),
        job.transforms.len()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let result = run_job_file(args);
    if let (true, Err(err)) = (args.json, &result) {
        // Scripts reading --json get an object on failure too; the error line still goes to stderr.
        let code = super::exit_code_of(err);
        let object =
            serde_json::json!({ "ok": false, "exit_code": code, "error": format!("{err:#}") });
        print_stdout(&format!("{object}\n"))?;
    }
    result
}

fn run_job_file(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let job = config::load_job(&args.job)?;
    let spec = ConnectionSpec::parse(args.connection.connection.as_deref())?;
    let options = connect_options(&args.connection);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(run_async(args, &job, &spec, &options))
}

pub fn connect_options(args: &ConnectionArgs) -> ConnectOptions {
    ConnectOptions {
        connect_timeout: Duration::from_secs(args.connect_timeout),
        password: std::env::var("EAVPIVOT_PASSWORD").ok(),
    }
}

async fn run_async(
    args: &RunArgs,
    job: &Job,
    spec: &ConnectionSpec,
    options: &ConnectOptions,
) -> anyhow::Result<ExitCode> {
    eprintln!("connecting to {}", spec.display());
    // A SQLite file that does not exist is created only where sample data is to be loaded
    // (a mistyped path must not silently become a new, empty database), and never in a dry run.
    let may_create = spec.embedded || args.load_sample;
    let missing_sqlite = match &spec.driver {
        Driver::Sqlite { path } if may_create && !path.exists() => Some(path),
        _ => None,
    };
    let mut backend: Box<dyn Backend> = match missing_sqlite {
        Some(_) if args.dry_run => Box::new(backend::sqlite::SqliteBackend::in_memory()?),
        Some(path) if !spec.embedded => {
            std::fs::File::create(path)
                .with_context(|| format!("creating SQLite database {}", path.display()))?;
            eprintln!(
                "created SQLite database {} for the sample data",
                path.display()
            );
            backend::connect(spec, options).await?
        }
        _ => backend::connect(spec, options).await?,
    };
    let mut sample_loaded = false;
    if spec.embedded || args.load_sample {
        if args.dry_run && !source_exists(backend.as_mut(), job).await? && job.setup.is_some() {
            // A dry run writes nothing, not even sample data: use a private in-memory copy.
            backend = Box::new(backend::sqlite::SqliteBackend::in_memory()?);
            if spec.embedded {
                eprintln!("dry run: the sample data is loaded into a temporary in-memory database; nothing is written");
            } else {
                return Err(Error::Usage(
                    "--dry-run with --load-sample needs the source tables to exist already".into(),
                )
                .into());
            }
        }
        sample_loaded = load_sample_data(backend.as_mut(), job).await?;
    }
    let run_options = RunOptions {
        dry_run: args.dry_run,
        plan: PlanOptions {
            strategy: args.strategy.map(Into::into),
        },
        preview_rows: if args.json { 0 } else { args.preview },
    };
    let outcome = execute::run_job(job, backend.as_mut(), &run_options).await?;
    let mut report = outcome.report;
    report.connection = spec.display().to_string();
    report.sample_data_loaded = sample_loaded;
    if args.json {
        print_stdout(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else if args.dry_run {
        eprint!("{}", report.summary());
        print_stdout(&report::dry_run_script(&report, &statements_of(&report)))?;
    } else {
        eprint!("{}", report.summary());
        if let Some(preview) = outcome.preview {
            print_stdout(&format!(
                "first rows of {} ({} rows in all):\n{}",
                preview.table,
                report.rows_written,
                preview.render()
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The report keeps statements as text; the dry-run script wants them with their kinds.
fn statements_of(report: &report::Report) -> Vec<execute::Statement> {
    report.statement_log.clone()
}

async fn source_exists(backend: &mut dyn Backend, job: &Job) -> Result<bool> {
    let sql = backend.dialect().table_exists(&job.source.table);
    Ok(execute::first_int(&backend.query(&sql).await?) > 0)
}

/// Load the job's `setup:` script when its source table is missing. True when it did.
pub(super) async fn load_sample_data(backend: &mut dyn Backend, job: &Job) -> Result<bool> {
    let Some(setup) = &job.setup else {
        return Ok(false);
    };
    if source_exists(backend, job).await? {
        return Ok(false);
    }
    let path = resolve_setup(
        &job.path,
        &setup.replace("{dialect}", backend.dialect().name()),
    );
    let script = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        context: format!(
            "reading sample data {} (setup: of {})",
            path.display(),
            job.path.display()
        ),
        source,
    })?;
    backend
        .execute_script(&script)
        .await
        .map_err(|e| e.with_context(&format!("loading sample data {}", path.display())))?;
    eprintln!(
        "source table {} was missing: loaded sample data from {}",
        job.source.table,
        path.display()
    );
    Ok(true)
}

/// `setup:` paths are relative to the working directory, or else to the job file's folder or
/// its parent (so `sql/{dialect}/x.sql` works from the repo root and from `config/`).
fn resolve_setup(job_path: &Path, setup: &str) -> PathBuf {
    let given = PathBuf::from(setup);
    if given.is_absolute() || given.exists() {
        return given;
    }
    let dir = job_path.parent().unwrap_or(Path::new("."));
    [dir.join(&given), dir.join("..").join(&given)]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or(given)
}
