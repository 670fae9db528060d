//! Where a command's output goes: stdout, where a closed pipe (`eavpivot … | head`) is not an
//! error, or a file named by `--output`.

use std::io::{self, Write};
use std::path::Path;

use anyhow::Context;

/// Write `text` to stdout; a broken pipe ends output quietly.
pub fn print_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Write `text` to the file `--output` names (replacing it), or to stdout when none is given.
/// The one place commands with `--output FILE` send their result.
pub fn write_output(output: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
        }
        None => print_stdout(text),
    }
}

/// A command run with `--json` that failed: scripts reading stdout get one object on failure
/// too (`ok: false`, the exit code, the error); the error line still goes to stderr. The same
/// object for every command with `--json`.
pub fn with_json_failure(
    json: bool,
    result: anyhow::Result<std::process::ExitCode>,
) -> anyhow::Result<std::process::ExitCode> {
    if let (true, Err(err)) = (json, &result) {
        let object = serde_json::json!({
            "ok": false,
            "schema_version": crate::report::SCHEMA_VERSION,
            "eavpivot_version": crate::report::EAVPIVOT_VERSION,
            "exit_code": super::exit_code_of(err),
            "error": format!("{err:#}"),
        });
        print_stdout(&format!("{object}\n"))?;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_named_file_and_names_it_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.sql");
        write_output(Some(&path), "SELECT 1;\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "SELECT 1;\n");
        let missing = dir.path().join("no/such/dir/out.sql");
        let err = write_output(Some(&missing), "x").unwrap_err();
        assert!(
            format!("{err:#}").contains("no/such/dir/out.sql"),
            "{err:#}"
        );
    }
}
