//! Progress and Ctrl-C for long loads.
//!
//! A streaming load of millions of rows runs for a while, so it shows a bar (rows/s, ETA) on
//! stderr, but only when stderr is a terminal: logs and pipes stay clean.
//!
//! Ctrl-C must not leave a half-built target, and must say what happened. Killing the process
//! would be safe (the database rolls back an open transaction when the connection drops) but
//! silent, so while a load is running ([`InterruptGuard`]) the first Ctrl-C only sets a flag:
//! the pipeline checks it between rows and the load checks it before COMMIT, and either returns
//! an error that the ordinary rollback path handles and reports. A second Ctrl-C, or one
//! outside a load, exits at once with status 130 as usual.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::{Error, Result};

/// Set by the Ctrl-C handler (or [`interrupt`]) while a load is armed.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// A load is running: Ctrl-C asks it to stop instead of ending the process.
static ARMED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Exit status of a process ended by SIGINT, by shell convention.
const EXIT_INTERRUPTED: i32 = 130;

/// While alive, Ctrl-C interrupts the load instead of ending the process.
pub struct InterruptGuard(());

impl InterruptGuard {
    /// Arm the handler for the duration of one load. A flag already set (by [`interrupt`])
    /// is kept, so a caller can ask for a stop before the load starts.
    pub fn arm() -> InterruptGuard {
        INSTALL.call_once(|| {
            // Failing to install (another handler exists, e.g. in an embedding program) only
            // means Ctrl-C keeps its default meaning; the rollback is then the database's.
            let _ = ctrlc::set_handler(on_ctrl_c);
        });
        ARMED.store(true, Ordering::SeqCst);
        InterruptGuard(())
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        ARMED.store(false, Ordering::SeqCst);
        INTERRUPTED.store(false, Ordering::SeqCst);
    }
}

fn on_ctrl_c() {
    if !ARMED.load(Ordering::SeqCst) || INTERRUPTED.swap(true, Ordering::SeqCst) {
        eprintln!("\ninterrupted: exiting now; the database rolls back the open transaction");
        std::process::exit(EXIT_INTERRUPTED);
    }
    eprintln!("\ninterrupted: stopping the load and rolling back (Ctrl-C again to exit at once)");
}

/// Ask the running load to stop, as Ctrl-C does (for embedding programs and tests).
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// An error if a stop was asked for; checked between rows and before COMMIT.
pub fn check_interrupt() -> Result<()> {
    if INTERRUPTED.load(Ordering::Relaxed) {
        return Err(Error::Job("interrupted (Ctrl-C)".into()));
    }
    Ok(())
}

/// A rows/s + ETA bar over the source rows, drawn only when stderr is a terminal.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// `total`: the source rows expected (from discovery). `show` false (a dry run) draws
    /// nothing, as does a stderr that is not a terminal.
    pub fn new(total: u64, show: bool) -> Progress {
        let target = ProgressDrawTarget::stderr_with_hz(4);
        if !show || target.is_hidden() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total.max(1)), target);
        let style = ProgressStyle::with_template(
            "stream {bar:30} {human_pos}/{human_len} rows, {per_sec}, ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress { bar: Some(bar) }
    }

    /// No bar at all (library use, tests).
    pub fn hidden() -> Progress {
        Progress { bar: None }
    }

    pub fn set_position(&self, rows: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(rows);
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
