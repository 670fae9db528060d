//! The SQL that controls a session rather than moving data: how long a statement may wait
//! for a lock, who holds the lock it waits for, and how to stop it from a second connection.
//!
//! All four dialects side by side, because they are one concept: the lock-wait and cancel
//! machinery in `backend::watch` runs this text and knows nothing about any database. Where a
//! database does it through its API instead of SQL (SQLite's busy timeout, PostgreSQL's and
//! SQL Server's protocol-level cancel), the dialect returns nothing and the backend does it.

use std::time::Duration;

use super::{MariaDb, MsSql, Postgres, Sqlite};

pub trait SessionSql {
    /// Statements that make every later statement of this session give up after waiting
    /// `timeout` for a lock (with the database's lock-timeout error).
    fn lock_timeout(&self, _timeout: Duration) -> Vec<String> {
        Vec::new()
    }

    /// A one-row, one-column query giving this connection's id on the server, which
    /// [`Self::lock_holders`] and [`Self::cancel_statement`] take.
    fn session_id(&self) -> Option<String> {
        None
    }

    /// Queries to try in order, each giving rows `(table, holder, holder's program)` for the
    /// lock that session `id` waits for; the first that runs and returns a row tells. A query
    /// may fail (a view or plugin missing, no privilege): the next one is tried.
    fn lock_holders(&self, _id: i64) -> Vec<String> {
        Vec::new()
    }

    /// A statement, sent on a second connection, that stops the statement session `id` runs
    /// without ending the session; `None` where the protocol has its own cancel.
    fn cancel_statement(&self, _id: i64) -> Option<String> {
        None
    }

    /// A statement, sent on a second connection, that ends session `id` (its statement
    /// stopped, its transaction rolled back, its locks released); `None` where not needed.
    fn end_session(&self, _id: i64) -> Option<String> {
        None
    }

    /// A query giving one row `(command, seconds in it, state, statement start, client)`
    /// for session `id`: what a lock holder is doing, to say how to end it.
    fn session_activity(&self, _id: i64) -> Option<String> {
        None
    }
}

/// The busy timeout is a connection setting of the C API (`sqlite3_busy_timeout`), and SQLite
/// cannot say which connection holds the file's lock: the backend does both.
impl SessionSql for Sqlite {}

impl SessionSql for Postgres {
    fn lock_timeout(&self, timeout: Duration) -> Vec<String> {
        vec![format!("SET lock_timeout = {}", timeout.as_millis())]
    }

    fn session_id(&self) -> Option<String> {
        Some("SELECT pg_backend_pid()".into())
    }

    /// The relation (or lock type) waited for and the first session blocking it.
    fn lock_holders(&self, id: i64) -> Vec<String> {
        vec![
            format!(
                "SELECT COALESCE(w.relation::regclass::text, w.locktype), 'pid ' || b.pid, \
             COALESCE(NULLIF(b.application_name, ''), b.usename::text, '?') \
             FROM pg_locks w \
             CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS h(pid) \
             JOIN pg_stat_activity b ON b.pid = h.pid \
             WHERE w.pid = {id} AND NOT w.granted LIMIT 1"
            ),
            // On Citus the coordinator's backend waits for a worker, not for a lock of its own:
            // the cluster's view names the holder (it fails, and is skipped, without Citus).
            super::ScaleOut::cluster_lock_holders(&super::Citus, id),
        ]
    }
}

impl SessionSql for MariaDb {
    /// `lock_wait_timeout` bounds metadata locks (LOCK TABLES, DDL, RENAME), and
    /// `innodb_lock_wait_timeout` row locks; both in whole seconds.
    fn lock_timeout(&self, timeout: Duration) -> Vec<String> {
        let secs = timeout.as_secs().max(1);
        vec![format!(
            "SET SESSION lock_wait_timeout = {secs}, SESSION innodb_lock_wait_timeout = {secs}"
        )]
    }

    fn session_id(&self) -> Option<String> {
        Some("SELECT CONNECTION_ID()".into())
    }

    /// Metadata locks need the `metadata_lock_info` plugin to be seen; row locks are in
    /// InnoDB's views; failing both, the session's own state says what it waits on.
    fn lock_holders(&self, id: i64) -> Vec<String> {
        vec![
            format!(
                "SELECT CONCAT(m.TABLE_SCHEMA, '.', m.TABLE_NAME), CONCAT('connection ', m.THREAD_ID), \
                 CONCAT(p.USER, '@', p.HOST, ' ', p.COMMAND) \
                 FROM information_schema.METADATA_LOCK_INFO m \
                 JOIN information_schema.PROCESSLIST p ON p.ID = m.THREAD_ID \
                 WHERE m.THREAD_ID <> {id} AND m.LOCK_TYPE = 'Table metadata lock' \
                 AND m.LOCK_MODE IN ('MDL_SHARED_NO_WRITE', 'MDL_SHARED_NO_READ_WRITE', 'MDL_EXCLUSIVE') \
                 LIMIT 1"
            ),
            format!(
                "SELECT l.lock_table, CONCAT('connection ', b.trx_mysql_thread_id), \
                 CONCAT(p.USER, '@', p.HOST, ' ', p.COMMAND) \
                 FROM information_schema.INNODB_LOCK_WAITS w \
                 JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id \
                 JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id \
                 JOIN information_schema.INNODB_LOCKS l ON l.lock_id = w.blocking_lock_id \
                 LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id \
                 WHERE r.trx_mysql_thread_id = {id} LIMIT 1"
            ),
            format!(
                "SELECT NULL, NULL, STATE \
                 FROM information_schema.PROCESSLIST WHERE ID = {id} AND STATE LIKE '%lock%'"
            ),
        ]
    }

    fn cancel_statement(&self, id: i64) -> Option<String> {
        Some(format!("KILL QUERY {id}"))
    }

    fn end_session(&self, id: i64) -> Option<String> {
        Some(format!("KILL {id}"))
    }

    fn session_activity(&self, id: i64) -> Option<String> {
        Some(format!(
            "SELECT COMMAND, TIME, STATE, LEFT(INFO, 80), HOST FROM information_schema.PROCESSLIST WHERE ID = {id}"
        ))
    }
}

impl SessionSql for MsSql {
    fn lock_timeout(&self, timeout: Duration) -> Vec<String> {
        vec![format!("SET LOCK_TIMEOUT {}", timeout.as_millis())]
    }

    fn session_id(&self) -> Option<String> {
        Some("SELECT @@SPID".into())
    }

    fn lock_holders(&self, id: i64) -> Vec<String> {
        vec![format!(
            "SELECT TOP 1 COALESCE(OBJECT_NAME(l.resource_associated_entity_id), l.resource_type), \
             CONCAT('session ', r.blocking_session_id), s.program_name \
             FROM sys.dm_exec_requests r \
             JOIN sys.dm_exec_sessions s ON s.session_id = r.blocking_session_id \
             LEFT JOIN sys.dm_tran_locks l ON l.request_session_id = r.session_id \
             AND l.request_status = 'WAIT' \
             WHERE r.session_id = {id} AND r.blocking_session_id <> 0"
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_timeouts_are_in_each_databases_unit() {
        let t = Duration::from_secs(30);
        assert_eq!(Postgres.lock_timeout(t), ["SET lock_timeout = 30000"]);
        assert_eq!(MsSql.lock_timeout(t), ["SET LOCK_TIMEOUT 30000"]);
        assert_eq!(
            MariaDb.lock_timeout(t),
            ["SET SESSION lock_wait_timeout = 30, SESSION innodb_lock_wait_timeout = 30"]
        );
        assert!(Sqlite.lock_timeout(t).is_empty());
    }

    #[test]
    fn only_mariadb_cancels_with_sql() {
        assert_eq!(MariaDb.cancel_statement(7).as_deref(), Some("KILL QUERY 7"));
        assert!(Postgres.cancel_statement(7).is_none());
        assert!(MsSql.cancel_statement(7).is_none());
    }
}
