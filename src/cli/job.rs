//! Which job a command-line argument means, and the job's sample data.
//!
//! An argument that is a file is that file. Otherwise a bundled job's name (`item_detail`),
//! `builtin:NAME`, or its repository path (`config/item_detail.yaml`) runs the copy embedded
//! in the binary ([`crate::examples`]), so the README's commands work from any directory.
//! An embedded job's `setup:` script is the embedded one too: the sample data must match the
//! job, whatever files the working directory holds.

use std::path::{Path, PathBuf};

use crate::backend::Backend;
use crate::config::{self, ConfigError, Job};
use crate::error::{Error, Result};
use crate::examples::{self, BundledJob};

/// A job ready to run, and the bundled job it came from, if any.
pub struct LoadedJob {
    pub job: Job,
    pub bundled: Option<&'static BundledJob>,
}

/// Load the job `arg` names: a file, else a bundled job (see the module docs).
pub fn load_job(arg: &Path) -> std::result::Result<LoadedJob, ConfigError> {
    load_job_with_vars(arg, &config::Vars::new())
}

/// [`load_job`] with `--var` values for the job's `${NAME}`s.
pub fn load_job_with_vars(
    arg: &Path,
    vars: &config::Vars,
) -> std::result::Result<LoadedJob, ConfigError> {
    match examples::job_named(arg) {
        Some(bundled) => Ok(LoadedJob {
            job: config::parse_job_with_vars(bundled.file.text, &bundled.shown_path(), vars)?,
            bundled: Some(bundled),
        }),
        None => match config::load_job_with_vars(arg, vars) {
            Ok(job) => Ok(LoadedJob { job, bundled: None }),
            Err(ConfigError::Read { path, source })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                let names: Vec<&str> = examples::JOBS.iter().map(|j| j.name).collect();
                Err(ConfigError::Read {
                    path: format!(
                        "{path} (no such file, and not a bundled job: {})",
                        names.join(", ")
                    ),
                    source,
                })
            }
            Err(other) => Err(other),
        },
    }
}

pub async fn source_exists(backend: &mut dyn Backend, job: &Job) -> Result<bool> {
    let sql = backend.dialect().table_exists(&job.source.table);
    Ok(crate::value::first_int(&backend.query(&sql).await?) > 0)
}

/// Load the job's `setup:` script when its source table is missing. Where it came from (a
/// path, or `builtin:` and the path) when it did.
pub async fn load_sample_data(
    backend: &mut dyn Backend,
    loaded: &LoadedJob,
) -> Result<Option<String>> {
    let job = &loaded.job;
    let Some(setup) = &job.setup else {
        return Ok(None);
    };
    if source_exists(backend, job).await? {
        return Ok(None);
    }
    let setup = setup.replace("{dialect}", backend.dialect().name());
    let (shown, script) = match loaded.bundled.and_then(|_| examples::sql(&setup)) {
        Some(embedded) => (
            format!("{}{}", examples::BUILTIN_PREFIX, embedded.path),
            embedded.text.to_string(),
        ),
        None => {
            let path = resolve_setup(&job.path, &setup);
            let script = std::fs::read_to_string(&path).map_err(|source| Error::Io {
                context: format!(
                    "reading sample data {} (setup: of {})",
                    path.display(),
                    job.path.display()
                ),
                source,
            })?;
            (path.display().to_string(), script)
        }
    };
    backend
        .execute_script(&script)
        .await
        .map_err(|e| e.with_context(&format!("loading sample data {shown}")))?;
    Ok(Some(shown))
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
