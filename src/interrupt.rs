//! Ctrl-C and SIGTERM: the process-wide interrupt state.
//!
//! A module of its own below both [`crate::backend`] (which races statements against
//! [`interrupted`] and cancels them) and [`crate::execute`] (which arms a run and checks
//! between rows): the state is the process's, not either layer's.
//!
//! An interrupt must not leave a half-built target, must not leave the statement running on
//! the server (a pushdown INSERT over millions of rows would go on for seconds after the
//! client exits), and must say what happened. So while a run is armed ([`InterruptGuard`])
//! the first SIGINT or SIGTERM only records itself: a backend racing a statement against
//! [`interrupted`] cancels it on the server, the pipeline checks between rows and the load
//! before COMMIT, and the error they return goes through the ordinary rollback path. A second
//! signal, or one outside a run, exits at once. SIGINT exits 130, SIGTERM 143 (128 + signal),
//! by shell convention, whichever way the run ends after it ([`signal_exit_code`]).
//!
//! Signals are received on a thread of their own (tokio's signal streams on a small runtime),
//! not on the run's runtime: a synchronous SQLite statement blocks that one, and its
//! interrupt ([`on_interrupt`]) has to be called from elsewhere while it runs.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

use crate::error::{Error, Result};

/// Set by a signal (or [`interrupt`]) while a run is armed; cleared when the last guard drops.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Set with [`INTERRUPTED`], cleared once some statement or check has turned it into an
/// error: the statements of the rollback that follows must run, not be cancelled in turn.
static PENDING: AtomicBool = AtomicBool::new(false);
/// Runs armed (nested guards: the command arms the whole run, the load its own part).
static ARMED: AtomicUsize = AtomicUsize::new(0);
/// The signal that interrupted this process (0: none), for the exit status.
static SIGNAL: AtomicU8 = AtomicU8::new(0);
/// Shields alive ([`Shield`]): the statements of a commit and what must follow it run to
/// their end; a first signal is recorded but cancels nothing.
static SHIELDED: AtomicUsize = AtomicUsize::new(0);
static INSTALL: Once = Once::new();
/// Called at the moment of an interrupt: cancels what cannot race a future (SQLite).
type Hook = Box<dyn Fn() + Send + Sync>;
static HOOKS: Mutex<Vec<(u64, Hook)>> = Mutex::new(Vec::new());
static NEXT_HOOK: AtomicUsize = AtomicUsize::new(1);
/// How often a statement waiting on the server looks at the flag: well under a second.
const POLL: Duration = Duration::from_millis(25);

/// A signal that interrupts a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Interrupt,
    Terminate,
}

impl Signal {
    fn number(self) -> u8 {
        match self {
            Signal::Interrupt => 2,
            Signal::Terminate => 15,
        }
    }

    fn from_number(n: u8) -> Option<Signal> {
        match n {
            2 => Some(Signal::Interrupt),
            15 => Some(Signal::Terminate),
            _ => None,
        }
    }

    /// How the user sees it: `Ctrl-C` or `SIGTERM`.
    pub fn label(self) -> &'static str {
        match self {
            Signal::Interrupt => "Ctrl-C",
            Signal::Terminate => "SIGTERM",
        }
    }

    /// The shell's status for a process ended by this signal.
    pub fn exit_code(self) -> u8 {
        128 + self.number()
    }
}

/// While alive, a signal interrupts the run instead of ending the process.
pub struct InterruptGuard(());

impl InterruptGuard {
    /// Arm the handler for the duration of one run (or load). A flag already set (by
    /// [`interrupt`]) is kept, so a caller can ask for a stop before the load starts.
    pub fn arm() -> InterruptGuard {
        INSTALL.call_once(install);
        ARMED.fetch_add(1, Ordering::SeqCst);
        InterruptGuard(())
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        if ARMED.fetch_sub(1, Ordering::SeqCst) == 1 {
            INTERRUPTED.store(false, Ordering::SeqCst);
            PENDING.store(false, Ordering::SeqCst);
        }
    }
}

/// Listen for SIGINT and SIGTERM on a thread of their own. Failing to listen (no threads, an
/// embedding program's own handler) only means signals keep their default meaning; the
/// rollback is then the database's, when the connection drops.
/// Waits until the listener is in place, so a signal right after [`InterruptGuard::arm`] is
/// not lost (a background job's SIGINT starts out ignored, not fatal).
fn install() {
    let (ready, listening) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("eavpivot-signals".into())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(listen(ready));
        });
    if spawned.is_ok() {
        let _ = listening.recv_timeout(Duration::from_secs(1));
    }
}

#[cfg(unix)]
async fn listen(ready: std::sync::mpsc::Sender<()>) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    let _ = ready.send(());
    loop {
        let which = tokio::select! {
            _ = int.recv() => Signal::Interrupt,
            _ = term.recv() => Signal::Terminate,
        };
        on_signal(which);
    }
}

#[cfg(not(unix))]
async fn listen(ready: std::sync::mpsc::Sender<()>) {
    let _ = ready.send(());
    while tokio::signal::ctrl_c().await.is_ok() {
        on_signal(Signal::Interrupt);
    }
}

fn on_signal(signal: Signal) {
    let label = signal.label();
    if ARMED.load(Ordering::SeqCst) == 0 || INTERRUPTED.swap(true, Ordering::SeqCst) {
        let hooks = EXIT_HOOKS.lock().map(|h| h.len()).unwrap_or(0);
        if hooks == 0 {
            eprintln!(
                "\ninterrupted ({label}): exiting now; the database rolls back the open transaction"
            );
        } else {
            eprintln!(
                "\ninterrupted ({label}): ending the run's session on the server and dropping its staging tables (at most {} s), then exiting",
                FORCED_EXIT_BUDGET.as_secs()
            );
            run_exit_hooks();
        }
        std::process::exit(i32::from(signal.exit_code()));
    }
    let _ = SIGNAL.compare_exchange(0, signal.number(), Ordering::SeqCst, Ordering::SeqCst);
    PENDING.store(true, Ordering::SeqCst);
    if SHIELDED.load(Ordering::SeqCst) > 0 {
        eprintln!("\ninterrupted ({label}): the commit is under way and is finished first, then the run stops and says what it did ({label} again to exit at once)");
        return;
    }
    eprintln!("\ninterrupted ({label}): cancelling the running statement and rolling back ({label} again to exit at once)");
    run_hooks();
}

fn run_hooks() {
    if let Ok(hooks) = HOOKS.lock() {
        for (_, hook) in hooks.iter() {
            hook();
        }
    }
}

/// How long a forced exit (a second signal) may spend on its last-resort cleanup.
pub const FORCED_EXIT_BUDGET: Duration = Duration::from_secs(5);
/// Last-resort work before a forced exit, given the time it may take: a backend whose
/// server runs on after the client is gone ends the run's session there, on a connection of
/// its own, and drops what [`forced_cleanup`] lists.
type ExitHook = Box<dyn Fn(Duration) + Send + Sync>;
static EXIT_HOOKS: Mutex<Vec<(u64, ExitHook)>> = Mutex::new(Vec::new());
/// The tables the running write would leave behind if the process ended now (name, DROP).
static FORCED_CLEANUP: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

fn run_exit_hooks() {
    if let Ok(hooks) = EXIT_HOOKS.lock() {
        for (_, hook) in hooks.iter() {
            hook(FORCED_EXIT_BUDGET);
        }
    }
}

/// Call `hook` before a forced exit while the returned guard lives.
pub fn on_forced_exit(hook: impl Fn(Duration) + Send + Sync + 'static) -> ExitHookGuard {
    let id = NEXT_HOOK.fetch_add(1, Ordering::SeqCst) as u64;
    if let Ok(mut hooks) = EXIT_HOOKS.lock() {
        hooks.push((id, Box::new(hook)));
    }
    ExitHookGuard(id)
}

/// Removes its forced-exit hook when dropped.
pub struct ExitHookGuard(u64);

impl Drop for ExitHookGuard {
    fn drop(&mut self) {
        if let Ok(mut hooks) = EXIT_HOOKS.lock() {
            hooks.retain(|(id, _)| *id != self.0);
        }
    }
}

/// What the write path would leave behind now: `(table, DROP statement)` (the write path
/// keeps it current; empty once nothing would be left).
pub fn set_forced_cleanup(tables: Vec<(String, String)>) {
    if let Ok(mut list) = FORCED_CLEANUP.lock() {
        *list = tables;
    }
}

/// The tables a forced exit should drop.
pub fn forced_cleanup() -> Vec<(String, String)> {
    FORCED_CLEANUP.lock().map(|l| l.clone()).unwrap_or_default()
}

/// Ask the running load to stop, as a signal does (for embedding programs and tests).
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
    PENDING.store(true, Ordering::SeqCst);
    run_hooks();
}

/// The signal that interrupted this process, if one did.
pub fn signal_received() -> Option<Signal> {
    Signal::from_number(SIGNAL.load(Ordering::SeqCst))
}

/// The exit status a failed run should end with: 130 after SIGINT, 143 after SIGTERM.
pub fn signal_exit_code() -> Option<u8> {
    signal_received().map(Signal::exit_code)
}

/// How the user sees the signal that interrupted the run: `Ctrl-C` or `SIGTERM`.
pub fn interrupted_label() -> &'static str {
    label()
}

fn label() -> &'static str {
    signal_received().unwrap_or(Signal::Interrupt).label()
}

/// An error if a stop was asked for; checked between rows and before COMMIT.
pub fn check_interrupt() -> Result<()> {
    if INTERRUPTED.load(Ordering::Relaxed) {
        PENDING.store(false, Ordering::SeqCst);
        return Err(Error::Job(format!("interrupted ({})", label())));
    }
    Ok(())
}

/// Resolves once an interrupt is pending: the statement raced against it is to be cancelled.
/// Taking it clears it, so the rollback's own statements run normally.
pub async fn interrupted() {
    while !take_pending() {
        tokio::time::sleep(POLL).await;
    }
}

/// True (once) when an interrupt is pending: the caller turns it into an error. Never while
/// a [`Shield`] lives: the interrupt stays pending until it drops.
pub fn take_pending() -> bool {
    SHIELDED.load(Ordering::SeqCst) == 0 && PENDING.swap(false, Ordering::SeqCst)
}

/// Whether a stop was asked for during this run (consumed or not).
pub fn interrupt_requested() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// While alive, an interrupt cancels no statement: a COMMIT whose outcome a cancel would make
/// unknown, and the swap and cleanup after it, run to their end; the interrupt is reported
/// once they are done ([`interrupt_requested`]).
pub struct Shield(());

impl Shield {
    pub fn raise() -> Shield {
        SHIELDED.fetch_add(1, Ordering::SeqCst);
        Shield(())
    }
}

impl Drop for Shield {
    fn drop(&mut self) {
        SHIELDED.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The error of a statement stopped by an interrupt; `cancelled` says whether the server was
/// told to stop it (otherwise it never started).
pub fn interrupted_error(cancelled: bool) -> Error {
    let what = if cancelled {
        "the running statement was cancelled on the server"
    } else {
        "stopped before the next statement"
    };
    Error::Job(format!("interrupted ({}): {what}", label()))
}

/// The error of a statement an interrupt stopped waiting for, whose cancel the server did not
/// take (said on stderr already): it may run on there until the connection closes, which
/// rolls its transaction back.
pub fn interrupted_uncancelled_error() -> Error {
    Error::Job(format!(
        "interrupted ({}): the server could not be told to stop the running statement; closing the connection rolls its transaction back",
        label()
    ))
}

/// Call `hook` at the moment of an interrupt while the returned guard lives (a synchronous
/// backend's cancel, e.g. SQLite's `sqlite3_interrupt`, called from the signal thread).
pub fn on_interrupt(hook: impl Fn() + Send + Sync + 'static) -> HookGuard {
    let id = NEXT_HOOK.fetch_add(1, Ordering::SeqCst) as u64;
    if let Ok(mut hooks) = HOOKS.lock() {
        hooks.push((id, Box::new(hook)));
    }
    HookGuard(id)
}

/// Removes its hook when dropped.
pub struct HookGuard(u64);

impl Drop for HookGuard {
    fn drop(&mut self) {
        if let Ok(mut hooks) = HOOKS.lock() {
            hooks.retain(|(id, _)| *id != self.0);
        }
    }
}
