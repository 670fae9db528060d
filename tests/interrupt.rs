//! Suite `interrupt`: Ctrl-C inside the test process. The interrupt flag
//! (`execute::progress`) is process-wide: raised here, it would stop any run another test of
//! the same binary has in flight, so these tests have a binary of their own and take turns
//! ([`serial`]).
//!
//! Where a new test goes: only a test that raises the interrupt flag (or otherwise changes
//! process-wide state: environment variables, the working directory, signals to its own
//! process) belongs here, and it starts with `let _turn = crate::serial();`. Every other test
//! goes into the suite of its concern (`cli`, `pivot`, `faults`, `mssql`, `tds`, `golden`,
//! `differential`), as `tests/<suite>/<file>.rs` with a `mod` line in `tests/<suite>.rs`.

use std::sync::{Mutex, MutexGuard};

#[path = "interrupt/cancel_sqlite.rs"]
mod cancel_sqlite;
#[path = "interrupt/interrupt_sqlite.rs"]
mod interrupt_sqlite;

/// One test of this binary at a time: each raises the process-wide interrupt flag.
fn serial() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    // A failed test poisons the lock; the next test still gets its turn.
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
