//! The smallest valid job, for connection tests: they never get past connecting, so what it
//! pivots does not matter, only that the job file is valid.

use std::path::{Path, PathBuf};

const JOB: &str = "name: connect_test
source:
  table: EAV
entity: [id]
attribute: attr
value: val
target:
  table: WIDE
";

/// Write the job into `dir` and return its path.
pub fn write_job(dir: &Path) -> PathBuf {
    let path = dir.join("job.yaml");
    std::fs::write(&path, JOB).expect("write job file");
    path
}
