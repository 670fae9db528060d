//! A PostgreSQL connection's statements under [`watch::watch`]: a lock wait is named with
//! its holder, and an interrupt sends the protocol's cancel request (on a connection of its
//! own, as the protocol wants), after which the statement fails and the rollback runs.

use async_trait::async_trait;
use tokio_postgres::CancelToken;

use super::connect::{self, PgTarget};
use super::{db_error, decode_all, fetch_all, kind_of, PostgresBackend};
use crate::backend::watch::{self, Monitor};
use crate::dialect::Postgres;
use crate::error::{ErrorKind, Result};
use crate::value::Value;

impl PostgresBackend {
    /// Run one request of this connection under [`watch::watch`]: a lock wait is reported,
    /// an interrupt cancels it on the server (a cancel request on its own connection).
    pub(super) async fn watched<T>(
        &self,
        sql: &str,
        context: &str,
        request: impl std::future::Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    ) -> Result<T> {
        let monitor = PgMonitor {
            target: &self.target,
            token: self.client.cancel_token(),
        };
        let watched = watch::watch(request, sql, &self.session, &Postgres, &monitor).await;
        watch::settle(watched, &self.session, sql, is_lock_timeout, |e| {
            db_error(context, &e)
        })
    }
}

fn is_lock_timeout(err: &tokio_postgres::Error) -> bool {
    kind_of(err) == ErrorKind::LockTimeout
}

/// A PostgreSQL backend's side channel: lock probes on a short-lived connection, and the
/// protocol's cancel request (which the server honours for the running statement only).
struct PgMonitor<'a> {
    target: &'a PgTarget,
    token: CancelToken,
}

#[async_trait]
impl Monitor for PgMonitor<'_> {
    async fn side_query(&self, sql: &str) -> Result<Vec<Vec<Value>>> {
        let client = connect::open(self.target).await?;
        let (types, messages) = fetch_all(&client, sql)
            .await
            .map_err(|e| db_error("asking who holds a lock", &e))?;
        decode_all(&types, messages)
    }

    /// Over TLS where the session is (the token knows the session's sslmode): a server that
    /// requires TLS refuses a plain cancel request.
    async fn cancel(&self) -> Result<bool> {
        self.token
            .cancel_query(connect::cancel_tls(self.target)?)
            .await
            .map_err(|e| db_error("cancelling the running statement", &e))?;
        Ok(true)
    }
}
