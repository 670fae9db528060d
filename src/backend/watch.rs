//! Watching a running statement: say who holds the lock it waits for, and cancel it on the
//! server when the run is interrupted.
//!
//! A statement blocked by another session's lock used to wait silently for ever, and one
//! running when Ctrl-C came kept running on the server after eavpivot had exited. So every
//! server backend runs its statements through [`watch`], which races the statement against
//! two things: a timer, after which a second connection asks the server who holds the lock
//! the statement waits for (the dialect's [`SessionSql::lock_holders`] text) and one line says
//! so; and the interrupt flag ([`interrupt::interrupted`]), on which the backend's
//! [`Monitor::cancel`] stops the statement on the server. The statement's own error (lock
//! timeout, cancelled) then travels the ordinary rollback path, rewritten here into one line
//! that names the lock or the interrupt.
//!
//! The session-level lock timeout itself ([`start_session`]) is the dialect's SQL, set once per
//! connection, so no statement can wait longer than the job's `lock_timeout`.

use std::future::Future;
use std::pin::pin;
use std::time::Duration;

use async_trait::async_trait;

use super::Backend;
use crate::dialect::Dialect;
use crate::error::{Error, Result};
use crate::interrupt;
use crate::value::first_int;
use crate::value::Value;

/// How long a statement runs before the server is asked whether it waits for a lock (and
/// again every so often), unless half the lock timeout is shorter.
const REPORT_AFTER: Duration = Duration::from_secs(3);
/// The interval's floor (a lock timeout under a second is the caller's business).
const MIN_REPORT_AFTER: Duration = Duration::from_millis(100);
/// How long the side connection may take to answer; the statement goes on regardless.
const PROBE_BUDGET: Duration = Duration::from_secs(2);

/// What the session knows about itself once [`start_session`] ran.
#[derive(Debug, Clone, Default)]
pub struct SessionWatch {
    /// The job's `lock_timeout`, as set on the server.
    pub timeout: Option<Duration>,
    /// This connection's id on the server (for lock probes and SQL-level cancels).
    pub id: Option<i64>,
    /// What setting it up sent, in order (the report lists every statement sent).
    pub statements: Vec<String>,
}

/// A lock some other session holds and this one waits for, as far as the server says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LockWait {
    pub table: Option<String>,
    /// `pid 1234`, `connection 17`, `session 53`.
    pub holder: Option<String>,
    /// The holder's program, or the server's description of the wait.
    pub program: Option<String>,
}

impl LockWait {
    fn from_row(row: &[Value]) -> LockWait {
        let text = |i: usize| {
            row.get(i)
                .filter(|v| !matches!(v, Value::Null))
                .map(|v| v.to_string())
                .filter(|t| !t.is_empty())
        };
        LockWait {
            table: text(0),
            holder: text(1),
            program: text(2),
        }
    }

    /// `on kv (held by pid 1234, `psql`)`: what a line about this wait says after "a lock".
    pub fn describe(&self) -> String {
        let on = self
            .table
            .as_ref()
            .map(|t| format!(" on {t}"))
            .unwrap_or_default();
        let by = match (&self.holder, &self.program) {
            (Some(h), Some(p)) => format!(" (held by {h}, `{p}`)"),
            (Some(h), None) => format!(" (held by {h})"),
            (None, Some(p)) => format!(" ({p})"),
            (None, None) => String::new(),
        };
        format!("{on}{by}")
    }
}

/// A backend's side channel while one of its statements runs.
#[async_trait]
pub trait Monitor: Sync {
    /// Rows of `sql`, run on a connection other than the busy one.
    async fn side_query(&self, sql: &str) -> Result<Vec<Vec<Value>>>;
    /// Ask the server to stop the running statement. `Ok(false)`: it can only be done on the
    /// busy connection itself, once the statement's future is dropped (SQL Server's ATTENTION).
    async fn cancel(&self) -> Result<bool>;
}

/// How a watched statement ended.
pub struct Watched<T> {
    /// `None`: dropped unfinished, because an interrupt needs the connection to cancel it,
    /// or because an interrupt was pending before it started (then it was never sent).
    pub output: Option<T>,
    /// An interrupt arrived: the statement was (or must now be) cancelled.
    pub interrupted: bool,
    /// Dropped while the server runs it: the backend must cancel it on its own connection.
    pub cancel_in_band: bool,
    /// The server could not be told to stop it (the cancel itself failed, said on stderr).
    pub cancel_failed: bool,
    /// The lock it was last seen waiting for.
    pub wait: Option<LockWait>,
}

/// Run `statement`, reporting a lock wait after a few seconds and cancelling on interrupt.
pub async fn watch<F: Future>(
    statement: F,
    sql: &str,
    session: &SessionWatch,
    dialect: &dyn Dialect,
    monitor: &dyn Monitor,
) -> Watched<F::Output> {
    let mut out = Watched {
        output: None,
        interrupted: false,
        cancel_in_band: false,
        cancel_failed: false,
        wait: None,
    };
    if interrupt::take_pending() {
        out.interrupted = true;
        return out;
    }
    // Half the timeout when that is sooner, so a wait is named before it expires.
    let every = match session.timeout {
        Some(t) => REPORT_AFTER.min(t / 2).max(MIN_REPORT_AFTER),
        None => REPORT_AFTER,
    };
    let mut statement = pin!(statement);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            biased;
            _ = interrupt::interrupted(), if !out.interrupted => {
                out.interrupted = true;
                match monitor.cancel().await {
                    Ok(true) => {}
                    Ok(false) => {
                        out.cancel_in_band = true;
                        return out;
                    }
                    Err(e) => {
                        eprintln!("could not cancel the running statement: {e}");
                        out.cancel_failed = true;
                    }
                }
            }
            result = &mut statement => {
                out.output = Some(result);
                return out;
            }
            _ = tick.tick(), if session.id.is_some() && out.wait.is_none() => {
                out.wait = probe(session, dialect, monitor).await;
                if let Some(wait) = &out.wait {
                    report_wait(session, wait, sql);
                }
            }
        }
    }
}

/// The one line said while a statement waits for a lock.
fn report_wait(session: &SessionWatch, wait: &LockWait, sql: &str) {
    let limit = session
        .timeout
        .map(|t| format!("; lock_timeout {} s", t.as_secs()))
        .unwrap_or_default();
    eprintln!("waiting for a lock{}{limit}", phrase(Some(wait), sql));
}

/// Who holds the lock session `id` waits for: the first of the dialect's queries that answers.
async fn probe(
    session: &SessionWatch,
    dialect: &dyn Dialect,
    monitor: &dyn Monitor,
) -> Option<LockWait> {
    let id = session.id?;
    let ask = async {
        for sql in dialect.lock_holders(id) {
            if let Ok(rows) = monitor.side_query(&sql).await {
                if let Some(row) = rows.first() {
                    return Some(LockWait::from_row(row));
                }
            }
        }
        None
    };
    tokio::time::timeout(PROBE_BUDGET, ask).await.ok().flatten()
}

/// The one line for a statement that gave up waiting for a lock.
pub fn lock_timeout_error(session: &SessionWatch, wait: Option<&LockWait>, sql: &str) -> Error {
    let secs = session.timeout.map_or(0, |t| t.as_secs());
    Error::Job(format!(
        "lock_timeout {secs} s expired waiting for a lock{}",
        phrase(wait, sql)
    ))
}

/// What follows "a lock": the table and holder where the server said, else the statement.
fn phrase(wait: Option<&LockWait>, sql: &str) -> String {
    match wait {
        Some(w) if w.table.is_some() || w.holder.is_some() => w.describe(),
        other => {
            let words: Vec<&str> = sql.split_whitespace().collect();
            let start: String = words.join(" ").chars().take(80).collect();
            let more = if start.len() < words.join(" ").len() {
                "…"
            } else {
                ""
            };
            format!(
                "{} in `{start}{more}`",
                other.map(LockWait::describe).unwrap_or_default()
            )
        }
    }
}

/// The outcome of a watched statement as the backend returns it: interrupted, timed out on a
/// lock (`is_lock_timeout` recognises the driver's error), or the statement's own result.
pub fn settle<T, E>(
    watched: Watched<std::result::Result<T, E>>,
    session: &SessionWatch,
    sql: &str,
    is_lock_timeout: impl Fn(&E) -> bool,
    to_error: impl Fn(E) -> Error,
) -> Result<T> {
    if watched.interrupted {
        if watched.cancel_failed {
            return Err(interrupt::interrupted_uncancelled_error());
        }
        let cancelled = watched.output.is_some() || watched.cancel_in_band;
        return Err(interrupt::interrupted_error(cancelled));
    }
    match watched.output {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) if is_lock_timeout(&e) => {
            Err(lock_timeout_error(session, watched.wait.as_ref(), sql))
        }
        Some(Err(e)) => Err(to_error(e)),
        None => Err(interrupt::interrupted_error(false)),
    }
}

/// Start a session: the dialect's lock-timeout statements, then this connection's id.
pub async fn start_session(backend: &mut dyn Backend, timeout: Duration) -> Result<SessionWatch> {
    let dialect = backend.dialect();
    let mut statements = dialect.lock_timeout(timeout);
    for sql in &statements {
        backend
            .execute(sql)
            .await
            .map_err(|e| e.with_context("setting lock_timeout"))?;
    }
    let mut id = None;
    if let Some(sql) = dialect.session_id() {
        id = Some(first_int(&backend.query(&sql).await?) as i64);
        statements.push(sql);
    }
    Ok(SessionWatch {
        timeout: Some(timeout),
        id,
        statements,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_names_the_table_holder_and_program() {
        let row = [
            Value::Text("kv".into()),
            Value::Text("pid 1234".into()),
            Value::Text("psql".into()),
        ];
        let session = SessionWatch {
            timeout: Some(Duration::from_secs(30)),
            id: Some(1),
            statements: Vec::new(),
        };
        let err = lock_timeout_error(&session, Some(&LockWait::from_row(&row)), "SELECT 1");
        assert_eq!(
            err.to_string(),
            "lock_timeout 30 s expired waiting for a lock on kv (held by pid 1234, `psql`)"
        );
    }

    #[test]
    fn an_unknown_holder_names_the_statement() {
        let row = [
            Value::Null,
            Value::Null,
            Value::Text("Waiting for table metadata lock".into()),
        ];
        let session = SessionWatch {
            timeout: Some(Duration::from_secs(5)),
            id: Some(1),
            statements: Vec::new(),
        };
        let err = lock_timeout_error(
            &session,
            Some(&LockWait::from_row(&row)),
            "SELECT COUNT(*)\n  FROM kv",
        );
        assert_eq!(
            err.to_string(),
            "lock_timeout 5 s expired waiting for a lock (Waiting for table metadata lock) in `SELECT COUNT(*) FROM kv`"
        );
    }
}
