//! SQL Server through tiberius on tokio: a thin adapter that sends the dialect's text.
//!
//! Every statement goes as one SQL batch (`simple_query`), never wrapped in `sp_executesql`:
//! `SET XACT_ABORT ON` and `BEGIN TRANSACTION` must outlive the request that carries them, and
//! tiberius has no transaction API of its own (refinery's tiberius driver does the same).
//! Loaded rows (streamed wide rows, companion tables) go by the bulk-load protocol when every
//! cell converts exactly to its column's type ([`bulk`] says when), and otherwise as
//! `sp_executesql` RPCs with multi-row `INSERT … VALUES` and bound parameters (`@P1…`), which
//! the server converts itself. Both run on this connection, inside its open transaction.
//!
//! The streaming strategy reads on a second connection (opened from the same [`Target`])
//! while the first holds the load's transaction: one TDS connection cannot interleave a
//! running result set with other requests.

mod bulk;
mod target;
mod values;

use std::time::Duration;

use async_trait::async_trait;
use futures_util::TryStreamExt;
use tiberius::error::Error as TdsError;
use tiberius::{Client, Query};
use tokio::net::TcpStream;
use tokio_util::compat::{Compat, TokioAsyncWriteCompatExt};

use super::connection::{error_chain, with_retry, Attempt, RetryFailure};
use super::credentials;
use super::read_ahead::{self, ReadAhead, RowSender};
use super::{flush_rows, Backend, ConnectOptions, LoadTarget, RowPipeline};
use crate::dialect::{Dialect, MsSql};
use crate::error::{Error, Result};
use crate::value::Value;

pub use target::{parse_target, Target};

/// SQL Server accepts at most 2,100 parameters per request.
const MAX_PARAMS: usize = 2_099;
/// …and at most 1,000 row constructors per `INSERT … VALUES`.
const MAX_VALUES_ROWS: usize = 1_000;
/// Wide rows per streamed load at the most ([`super::flush_rows`]).
const MAX_FLUSH_ROWS: usize = 2_000;

type TdsClient = Client<Compat<TcpStream>>;

pub struct MsSqlBackend {
    client: TdsClient,
    target: Target,
    connect_timeout: Duration,
}

/// Connect to what `config` (an ADO.NET string or an `mssql://` URL) names.
pub async fn connect(config: &str, options: &ConnectOptions) -> Result<Box<dyn Backend>> {
    let mut target = parse_target(config, options)?;
    let client = match open(&target, options.connect_timeout).await {
        // The server refused a login without password: ask the person at the terminal, if any.
        Err(Error::Connect(line)) if !target.password_given && line.contains("(error 18456)") => {
            let Some(password) = credentials::prompt_password(&target.shown) else {
                return Err(Error::Connect(line));
            };
            target
                .config
                .authentication(tiberius::AuthMethod::sql_server(&target.user, password));
            target.password_given = true;
            open(&target, options.connect_timeout).await?
        }
        other => other?,
    };
    Ok(Box::new(MsSqlBackend {
        client,
        target,
        connect_timeout: options.connect_timeout,
    }))
}

/// TCP, PRELOGIN/TLS and LOGIN7 within the timeout, each failure as one line that names the
/// server and never the password. Transient failures are retried until the timeout; an
/// Azure SQL gateway's redirect (`Error::Routing`) is followed to the server it names.
async fn open(target: &Target, timeout: Duration) -> Result<TdsClient> {
    let mut config = target.config.clone();
    let mut redirects = 0;
    loop {
        let addr = config.get_addr();
        let outcome = with_retry(timeout, |remaining| {
            let config = config.clone();
            let addr = addr.clone();
            async move { attempt(config, &addr, remaining).await }
        })
        .await;
        match outcome {
            Ok(client) => return Ok(client),
            Err(Failure::Routed { host, port }) if redirects < 3 => {
                redirects += 1;
                eprintln!("SQL Server {addr} redirects this connection to {host}:{port}");
                config.host(host);
                config.port(port);
            }
            Err(Failure::Routed { host, port }) => {
                return Err(Error::Connect(format!(
                    "SQL Server {addr} redirected the connection a fourth time (to {host}:{port}); giving up"
                )))
            }
            Err(Failure::Login(e)) => return Err(login_error(target, &addr, e)),
            Err(Failure::Other(a)) => return Err(a.into_error(&format!("SQL Server at {addr}"), timeout)),
        }
    }
}

/// Why one attempt failed: the server's answer (kept whole for [`login_error`]), a redirect,
/// or a network failure.
enum Failure {
    Login(TdsError),
    Routed { host: String, port: u16 },
    Other(Attempt),
}

impl From<Attempt> for Failure {
    fn from(a: Attempt) -> Failure {
        Failure::Other(a)
    }
}

impl RetryFailure for Failure {
    fn transient(&self) -> bool {
        matches!(self, Failure::Other(a) if a.transient)
    }
    fn reason(&self) -> String {
        match self {
            Failure::Other(a) => a.reason.clone(),
            Failure::Login(e) => e.to_string(),
            Failure::Routed { host, port } => format!("redirected to {host}:{port}"),
        }
    }
}

async fn attempt(
    config: tiberius::Config,
    addr: &str,
    remaining: Duration,
) -> Result<TdsClient, Failure> {
    let started = tokio::time::Instant::now();
    let tcp = match tokio::time::timeout(remaining, TcpStream::connect(addr)).await {
        Err(_) => return Err(Attempt::timeout().into()),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(Attempt::fatal(
                "connection refused (is SQL Server running and listening on TCP at that port?)",
            )
            .into())
        }
        Ok(Err(e)) => return Err(Attempt::from_io_chain(&e, error_chain(&e)).into()),
        Ok(Ok(tcp)) => tcp,
    };
    // Only a latency tweak; a socket that refuses it still works.
    let _ = tcp.set_nodelay(true);
    let left = remaining.saturating_sub(started.elapsed());
    match tokio::time::timeout(left, Client::connect(config, tcp.compat_write())).await {
        Err(_) => Err(Attempt::timeout().into()),
        Ok(Ok(client)) => Ok(client),
        Ok(Err(TdsError::Routing { host, port })) => Err(Failure::Routed { host, port }),
        // tiberius's own handshake bound (set to the same timeout) fired first.
        Ok(Err(TdsError::Io {
            kind: std::io::ErrorKind::TimedOut,
            ..
        })) => Err(Attempt::timeout().into()),
        Ok(Err(TdsError::Io { kind, message })) => Err(Attempt {
            transient: matches!(
                kind,
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::UnexpectedEof
                    | std::io::ErrorKind::BrokenPipe
            ),
            reason: message,
            timed_out: false,
        }
        .into()),
        Ok(Err(e)) => Err(Failure::Login(e)),
    }
}

fn login_error(target: &Target, addr: &str, err: TdsError) -> Error {
    let user = &target.user;
    let line = match err {
        TdsError::Server(e) if e.code() == 18456 => format!(
            "login failed for user '{user}' at SQL Server {addr} (error 18456): check the user name and password (EAVPIVOT_PASSWORD)"
        ),
        TdsError::Server(e) if e.code() == 4060 => format!(
            "SQL Server {addr} cannot open database '{}' for user '{user}' (error 4060): it does not exist or the login may not use it",
            target.database.as_deref().unwrap_or("(default)")
        ),
        TdsError::Server(e) => format!(
            "login to SQL Server {addr} as '{user}' failed: error {}: {}",
            e.code(),
            e.message()
        ),
        TdsError::Tls(m) => format!(
            "TLS with SQL Server {addr} failed: {m} (an untrusted certificate: name its CA with ca=FILE or TrustServerCertificateCA=FILE, \
             or skip the check with trust_cert=true; a certificate for another name: hostname_in_certificate=NAME; \
             servers limited to TLS 1.0/1.1 need patching or encrypt=not_supported)"
        ),
        other if other.to_string().to_lowercase().contains("encryption") => format!(
            "SQL Server {addr} does not accept the requested encryption: {other} (try encrypt=off, or encrypt=not_supported for a server without TLS)"
        ),
        other => format!("login to SQL Server {addr} failed: {other}"),
    };
    Error::Connect(line)
}

/// A statement the server rejected: its number, severity, state, line and message.
fn db_error(context: &str, err: TdsError) -> Error {
    let message = match err {
        TdsError::Server(e) => format!(
            "SQL Server error {} (severity {}, state {}, line {}): {}",
            e.code(),
            e.class(),
            e.state(),
            e.line(),
            e.message()
        ),
        other => other.to_string(),
    };
    Error::database(format!("mssql {context}"), message)
}

impl MsSqlBackend {
    /// Send one batch and read every result set it returns (so that an error in any
    /// statement of it surfaces here).
    async fn batch(&mut self, sql: &str, context: &str) -> Result<Vec<Vec<tiberius::Row>>> {
        let stream = self
            .client
            .simple_query(sql)
            .await
            .map_err(|e| db_error(context, e))?;
        stream
            .into_results()
            .await
            .map_err(|e| db_error(context, e))
    }

    /// One batch: by bulk load when it converts exactly, else by parameterised INSERT.
    async fn load(&mut self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
        if rows.is_empty() {
            return Ok(0);
        }
        match bulk::route(&mut self.client, target, rows).await? {
            bulk::Route::Bulk(bulk_rows) => bulk::load(&mut self.client, target, bulk_rows).await,
            bulk::Route::Insert(why) => self.insert(target, rows, &why).await,
        }
    }

    /// Multi-row `INSERT … VALUES` RPCs; an error names the table and why bulk was not used.
    async fn insert(
        &mut self,
        target: &LoadTarget,
        rows: &[Vec<Value>],
        why: &bulk::Fallback,
    ) -> Result<u64> {
        let width = target.columns.len().max(1);
        let per_statement = (MAX_PARAMS / width).clamp(1, MAX_VALUES_ROWS);
        let mut loaded = 0;
        for chunk in rows.chunks(per_statement) {
            let sql = MsSql.insert_values(&target.table, &target.columns, chunk.len());
            let mut query = Query::new(sql);
            for value in chunk.iter().flatten() {
                query.bind(values::to_column(value));
            }
            let context = format!("loading rows into {} (by INSERT: {why})", target.table);
            let result = query
                .execute(&mut self.client)
                .await
                .map_err(|e| db_error(&context, e))?;
            loaded += result.total();
        }
        Ok(loaded)
    }
}

#[async_trait]
impl Backend for MsSqlBackend {
    fn dialect(&self) -> &'static dyn Dialect {
        &MsSql
    }

    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Value>>> {
        let results = self.batch(sql, "query").await?;
        Ok(results
            .into_iter()
            .next()
            .unwrap_or_default()
            .into_iter()
            .map(|row| row.into_iter().map(values::from_column).collect())
            .collect())
    }

    /// Batches report no row count through tiberius's batch API; the engine does not use it.
    async fn execute(&mut self, sql: &str) -> Result<u64> {
        self.batch(sql, "statement").await?;
        Ok(0)
    }

    /// The whole script as one batch: eavpivot generates no `GO` separators.
    async fn execute_script(&mut self, sql: &str) -> Result<()> {
        self.batch(sql, "script").await.map(|_| ())
    }

    /// The declared types, as `sp_describe_first_result_set` reports them (`INT`,
    /// `NVARCHAR(50)`, `DECIMAL(10,2)`): result-set metadata alone lacks lengths.
    async fn column_types(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        // The dialect's probe is already `EXEC sp_describe_first_result_set …`: run it as given.
        let results = self.batch(sql, "describing result columns").await?;
        let mut columns: Vec<(i32, Option<String>)> = results
            .into_iter()
            .next()
            .unwrap_or_default()
            .iter()
            .filter(|row| !row.get::<bool, _>("is_hidden").unwrap_or(false))
            .map(|row| {
                let ordinal = row.get::<i32, _>("column_ordinal").unwrap_or(i32::MAX);
                let ty = row
                    .get::<&str, _>("system_type_name")
                    .map(values::type_name);
                (ordinal, ty)
            })
            .collect();
        columns.sort_by_key(|(ordinal, _)| *ordinal);
        Ok(columns.into_iter().map(|(_, ty)| ty).collect())
    }

    async fn load_rows(&mut self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
        self.load(target, rows).await
    }

    fn read_ahead(&mut self, read_sql: &str) -> Result<ReadAhead> {
        Ok(self.start_read(read_sql))
    }

    fn max_flush_rows(&self) -> usize {
        MAX_FLUSH_ROWS
    }

    async fn stream_into(
        &mut self,
        read_sql: &str,
        pipeline: &mut dyn RowPipeline,
        targets: &[LoadTarget],
    ) -> Result<Vec<u64>> {
        let source = self.start_read(read_sql);
        let batch_rows = flush_rows(targets, MAX_FLUSH_ROWS);
        read_ahead::stream(self, source, pipeline, targets, batch_rows).await
    }
}

impl MsSqlBackend {
    /// The ordered read, on a second connection (one TDS connection cannot interleave a
    /// running result set with the load's requests), on its own task like the other servers'.
    fn start_read(&self, read_sql: &str) -> ReadAhead {
        let (target, timeout) = (self.target.clone(), self.connect_timeout);
        ReadAhead::spawn(read_sql, move |sql, mut rows| async move {
            let outcome = read_rows(&target, timeout, &sql, &mut rows).await;
            (rows, outcome)
        })
    }
}

/// Run `sql` on a new connection, handing every row to `rows` until it stops listening.
async fn read_rows(
    target: &Target,
    timeout: Duration,
    sql: &str,
    rows: &mut RowSender,
) -> Result<()> {
    let mut reader = open(target, timeout)
        .await
        .map_err(|e| Error::Connect(format!("opening the reading connection: {e}")))?;
    {
        let context = "reading source rows (second connection)";
        let stream = reader
            .simple_query(sql)
            .await
            .map_err(|e| db_error(context, e))?;
        let mut stream = stream.into_row_stream();
        while let Some(row) = stream.try_next().await.map_err(|e| db_error(context, e))? {
            if !rows
                .push(row.into_iter().map(values::from_column).collect())
                .await
            {
                break;
            }
        }
    }
    // Closing politely is a courtesy; the rows are already read.
    let _ = reader.close().await;
    Ok(())
}
