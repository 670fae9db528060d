//! A MariaDB connection's statements under [`watch::watch`]: a lock wait is named (with its
//! holder where the server's views say), and an interrupt sends `KILL QUERY` from a second
//! connection (the protocol has no cancel request), after which the statement fails with
//! "query execution was interrupted" and the rollback runs on the same connection.

use async_trait::async_trait;
use mysql_async::prelude::Queryable;
use mysql_async::Row;

use super::connect::{self, MyTarget};
use super::{db_error, decode_row, kind_of, MariaDbBackend};
use crate::backend::watch::{self, Monitor, SessionWatch};
use crate::dialect::{MariaDb, SessionSql};
use crate::error::{Error, ErrorKind, Result};
use crate::value::Value;

impl MariaDbBackend {
    pub(super) fn monitor(&self) -> MariaDbMonitor {
        MariaDbMonitor {
            target: self.target.clone(),
            id: self.session.id,
        }
    }
}

/// Run one request of the busy connection under [`watch::watch`].
pub(super) async fn watched<T>(
    session: &SessionWatch,
    monitor: &MariaDbMonitor,
    sql: &str,
    context: &str,
    request: impl std::future::Future<Output = std::result::Result<T, mysql_async::Error>>,
) -> Result<T> {
    let watched = watch::watch(request, sql, session, &MariaDb, monitor).await;
    watch::settle(watched, session, sql, is_lock_timeout, |e| {
        db_error(context, &e)
    })
}

fn is_lock_timeout(err: &mysql_async::Error) -> bool {
    kind_of(err) == ErrorKind::LockTimeout
}

/// A MariaDB backend's side channel: a short-lived second connection, for lock probes and for
/// `KILL QUERY` (the protocol has no cancel request of its own).
pub(super) struct MariaDbMonitor {
    target: MyTarget,
    id: Option<i64>,
}

#[async_trait]
impl Monitor for MariaDbMonitor {
    async fn side_query(&self, sql: &str) -> Result<Vec<Vec<Value>>> {
        let mut conn = connect::open(&self.target).await?;
        let rows: Vec<Row> = conn
            .query(sql)
            .await
            .map_err(|e| db_error("asking who holds a lock", &e))?;
        let _ = conn.disconnect().await;
        rows.into_iter().map(decode_row).collect()
    }

    async fn cancel(&self) -> Result<bool> {
        let Some(kill) = self.id.and_then(|id| MariaDb.cancel_statement(id)) else {
            return Err(Error::Job(
                "the connection id is unknown (set_lock_timeout was not called)".into(),
            ));
        };
        let mut conn = connect::open(&self.target).await?;
        conn.query_drop(kill)
            .await
            .map_err(|e| db_error("cancelling the running statement", &e))?;
        let _ = conn.disconnect().await;
        Ok(true)
    }
}
