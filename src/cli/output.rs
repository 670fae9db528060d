//! Writing to stdout where a closed pipe (`eavpivot … | head`) is not an error.

use std::io::{self, Write};

/// Write `text` to stdout; a broken pipe ends output quietly.
pub fn print_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
