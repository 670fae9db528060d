//! Progress for long runs.
//!
//! A streaming load of millions of rows runs for a while, so it shows a bar (rows/s, ETA) on
//! stderr, but only when stderr is a terminal: logs and pipes stay clean. The interrupt state
//! (Ctrl-C, SIGTERM) lives in [`crate::interrupt`], below both backend and execute; it is
//! re-exported here for callers of its old path.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub use crate::interrupt::*;

/// A rows/s + ETA bar over the source rows, drawn only when stderr is a terminal.
pub struct Progress {
    bar: Option<ProgressBar>,
    /// Fault injection (tests/faults.rs): the source row at which the stream stops, when
    /// `EAVPIVOT_FAULT_PAUSE=stream:<percent>` asks for it.
    pause_at: Option<u64>,
}

impl Progress {
    /// `total`: the source rows expected (from discovery). `show` false (a dry run) draws
    /// nothing, as does a stderr that is not a terminal.
    pub fn new(total: u64, show: bool) -> Progress {
        let pause_at = super::fault::asked()
            .and_then(|p| p.strip_prefix("stream:")?.parse::<u64>().ok())
            .map(|percent| total * percent.min(100) / 100);
        let target = ProgressDrawTarget::stderr_with_hz(4);
        if !show || target.is_hidden() {
            return Progress {
                bar: None,
                pause_at,
            };
        }
        let bar = ProgressBar::with_draw_target(Some(total.max(1)), target);
        let style = ProgressStyle::with_template(
            "stream {bar:30} {human_pos}/{human_len} rows, {per_sec}, ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress {
            bar: Some(bar),
            pause_at,
        }
    }

    /// No bar at all (library use, tests).
    pub fn hidden() -> Progress {
        Progress {
            bar: None,
            pause_at: None,
        }
    }

    /// Fault injection ([`super::fault`]): stop at the row `stream:<percent>` names. One
    /// comparison per row otherwise.
    pub fn fault_point(&self, rows: u64) {
        if self.pause_at == Some(rows) {
            let point = super::fault::asked().unwrap_or_default();
            super::fault::wait(&format!("{point} (row {rows})"));
        }
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

/// Progress over a run's server statements (the pushdown's `INSERT … SELECT` per target
/// table), each of which may run for minutes with nothing to show: one line per finished
/// statement on stderr (`statement 3/14: INSERT INTO t_3 (12.4 s)`), or the bar's message
/// while it runs when stderr is a terminal. Nothing when hidden (`-q`, a dry run), nor for a
/// single statement (the run's own summary says as much).
pub struct Steps {
    total: usize,
    done: usize,
    show: bool,
    bar: Option<ProgressBar>,
    current: Option<(String, std::time::Instant)>,
}

impl Steps {
    pub fn new(total: usize, show: bool) -> Steps {
        let show = show && total > 1;
        let target = ProgressDrawTarget::stderr_with_hz(4);
        let bar = (show && !target.is_hidden()).then(|| {
            let bar = ProgressBar::with_draw_target(Some(total as u64), target);
            let style =
                ProgressStyle::with_template("statement {pos}/{len} {bar:20} {elapsed} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Steps {
            total,
            done: 0,
            show,
            bar,
            current: None,
        }
    }

    /// The next statement starts; `what` names it (`INSERT INTO t_3`).
    pub fn start(&mut self, what: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(what.to_string());
        }
        self.current = Some((what.to_string(), std::time::Instant::now()));
    }

    /// The statement started last is done.
    pub fn finish_one(&mut self) {
        self.done += 1;
        let Some((what, started)) = self.current.take() else {
            return;
        };
        match &self.bar {
            Some(bar) => bar.set_position(self.done as u64),
            None if self.show => eprintln!(
                "statement {}/{}: {what} ({:.1} s)",
                self.done,
                self.total,
                started.elapsed().as_secs_f64()
            ),
            None => {}
        }
    }
}

impl Drop for Steps {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
