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
use super::read_ahead::{ReadAhead, RowSender};
use super::watch::{self, Monitor, SessionWatch};
use super::{Backend, ConnectOptions, LoadTarget};
use crate::dialect::MsSqlCell as Cell;
use crate::dialect::{Dialect, MsSql, SessionSql};
use crate::error::{Error, ErrorKind, Result};
use crate::value::Value;

pub use target::{parse_target, Target};

/// SQL Server accepts at most 2,100 parameters per request.
const MAX_PARAMS: usize = 2_099;

/// How long a cancelled batch waits for the server's acknowledgement of the ATTENTION before
/// giving up on it: the connection is then closed, which rolls its transaction back. SQL
/// Server acknowledges at once; Babelfish 4.2 not while the statement runs, and the driver's
/// own bound (30 s) is long for someone who pressed Ctrl-C.
const CANCEL_ACK_WAIT: Duration = Duration::from_secs(10);
/// …and at most 1,000 row constructors per `INSERT … VALUES`.
const MAX_VALUES_ROWS: usize = 1_000;
/// Wide rows per streamed load at the most ([`super::flush_rows`]).
const MAX_FLUSH_ROWS: usize = 2_000;

type TdsClient = Client<Compat<TcpStream>>;

pub struct MsSqlBackend {
    client: TdsClient,
    target: Target,
    connect_timeout: Duration,
    /// The lock timeout and session id (`@@SPID`), once [`Backend::set_lock_timeout`] ran.
    session: SessionWatch,
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
        session: SessionWatch::default(),
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
        TdsError::Tls(m) => tls_failure(addr, &m),
        // tiberius's own (English) words for an encryption mismatch, no server's: no code.
        other if other.to_string().to_lowercase().contains("encryption") => format!(
            "SQL Server {addr} does not accept the requested encryption: {other} (try encrypt=off, or encrypt=not_supported for a server without TLS)"
        ),
        other => format!("login to SQL Server {addr} failed: {other}"),
    };
    Error::Connect(line)
}

/// One line for a failed TLS handshake: eavpivot's remedies (connection-string keys) first,
/// then only the first sentence of tiberius's reason — the rest of its text is advice for
/// tiberius's API (`Config::trust_cert_ca`, cargo features), meaningless to an operator.
fn tls_failure(addr: &str, tiberius_text: &str) -> String {
    let reason = tiberius_text
        .split(". ")
        .next()
        .unwrap_or(tiberius_text)
        .trim_end_matches('.');
    let reason: String = reason.chars().take(160).collect();
    format!(
        "TLS with SQL Server {addr} failed (an untrusted certificate: name its CA with ca=FILE or TrustServerCertificateCA=FILE, \
         or skip the check with trust_cert=true; a certificate for another name: hostname_in_certificate=NAME; \
         servers limited to TLS 1.0/1.1 need patching or encrypt=not_supported): {reason}"
    )
}

/// A statement the server rejected: its number, severity, state, line and message.
fn db_error(context: &str, err: TdsError) -> Error {
    let kind = kind_of(&err);
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
    Error::database_of(kind, format!("mssql {context}"), message)
}

/// The kind of a server error, by its number (SQL Server's documented numbers; Babelfish
/// answers with the same ones for these).
fn kind_of(err: &TdsError) -> ErrorKind {
    match err {
        // Violation of a PRIMARY KEY or UNIQUE constraint; a duplicate row in a unique index.
        TdsError::Server(e) if matches!(e.code(), 2627 | 2601) => ErrorKind::UniqueViolation,
        // Cannot insert the value NULL into a column that does not allow nulls.
        TdsError::Server(e) if e.code() == 515 => ErrorKind::NotNullViolation,
        // `SET LOCK_TIMEOUT` expired.
        TdsError::Server(e) if e.code() == 1222 => ErrorKind::LockTimeout,
        _ => ErrorKind::Other,
    }
}

impl MsSqlBackend {
    /// Send one batch and read every result set it returns (so that an error in any
    /// statement of it surfaces here), under [`watch::watch`]. On an interrupt the batch is
    /// cancelled with a TDS ATTENTION on this connection (tiberius's `cancel_query`); with
    /// `XACT_ABORT ON` the server then rolls the open transaction back itself.
    async fn batch(&mut self, sql: &str, context: &str) -> Result<Vec<Vec<tiberius::Row>>> {
        let monitor = MsSqlMonitor {
            target: &self.target,
            timeout: self.connect_timeout,
        };
        let client = &mut self.client;
        let request = async move { client.simple_query(sql).await?.into_results().await };
        let mut watched = watch::watch(request, sql, &self.session, &MsSql, &monitor).await;
        if watched.cancel_in_band {
            let acknowledged = tokio::time::timeout(CANCEL_ACK_WAIT, self.client.cancel_query());
            let failure = match acknowledged.await {
                Ok(Ok(_)) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(_) => Some(format!(
                    "the server did not acknowledge the cancel (TDS ATTENTION) within {} s",
                    CANCEL_ACK_WAIT.as_secs()
                )),
            };
            if let Some(e) = failure {
                eprintln!("could not cancel the running statement: {e}");
                watched.cancel_failed = true;
            }
        }
        watch::settle(watched, &self.session, sql, is_lock_timeout, |e| {
            db_error(context, e)
        })
    }

    /// One batch: by bulk load when it converts exactly, else by parameterised INSERT.
    async fn load(&mut self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
        if rows.is_empty() {
            return Ok(0);
        }
        match bulk::route(&mut self.client, target, rows).await? {
            bulk::Route::Bulk(bulk_rows) => bulk::load(&mut self.client, target, bulk_rows).await,
            bulk::Route::Insert(why, params) => self.insert(target, rows, &why, &params).await,
        }
    }

    /// Multi-row `INSERT … VALUES` RPCs; an error names the table and why bulk was not used.
    async fn insert(
        &mut self,
        target: &LoadTarget,
        rows: &[Vec<Value>],
        why: &bulk::Fallback,
        params: &[bulk::Param],
    ) -> Result<u64> {
        let width = target.columns.len().max(1);
        let per_statement = (MAX_PARAMS / width).clamp(1, MAX_VALUES_ROWS);
        let mut loaded = 0;
        for chunk in rows.chunks(per_statement) {
            let param = |c: usize| params.get(c).copied().unwrap_or(bulk::Param::AsIs);
            let cell = |r: usize, c: usize| match chunk[r].get(c) {
                None | Some(Value::Null) => Cell::Null,
                Some(Value::Text(_)) => param(c).text_cast().map_or(Cell::Param, Cell::ParamAs),
                Some(_) => Cell::Param,
            };
            let sql =
                MsSql.insert_values_nulls_inline(&target.table, &target.columns, chunk.len(), cell);
            let mut query = Query::new(sql);
            for row in chunk {
                for (c, value) in row.iter().enumerate().filter(|(_, v)| !v.is_null()) {
                    query.bind(match (param(c), value) {
                        (bulk::Param::Text, Value::Float(f)) => {
                            values::to_column(&Value::Text(f.to_string()))
                        }
                        _ => values::to_column(value),
                    });
                }
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

fn is_lock_timeout(err: &TdsError) -> bool {
    kind_of(err) == ErrorKind::LockTimeout
}

/// A SQL Server backend's side channel: lock probes on a short-lived second connection. The
/// cancel itself is in-band (ATTENTION on the busy connection), so [`Monitor::cancel`] only
/// says so.
struct MsSqlMonitor<'a> {
    target: &'a Target,
    timeout: Duration,
}

#[async_trait]
impl Monitor for MsSqlMonitor<'_> {
    async fn side_query(&self, sql: &str) -> Result<Vec<Vec<Value>>> {
        let mut client = open(self.target, self.timeout).await?;
        let context = "asking who holds a lock";
        let rows = client
            .simple_query(sql)
            .await
            .map_err(|e| db_error(context, e))?
            .into_first_result()
            .await
            .map_err(|e| db_error(context, e))?;
        let _ = client.close().await;
        Ok(rows
            .into_iter()
            .map(|row| row.into_iter().map(values::from_column).collect())
            .collect())
    }

    async fn cancel(&self) -> Result<bool> {
        Ok(false)
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
                let max_length = row
                    .try_get::<i16, _>("max_length")
                    .ok()
                    .flatten()
                    .map(i64::from)
                    .or_else(|| {
                        let wide = row.try_get::<i32, _>("max_length").ok().flatten();
                        wide.map(i64::from)
                    });
                let ty = row
                    .get::<&str, _>("system_type_name")
                    .map(|name| values::declared_type(name, max_length));
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

    async fn set_lock_timeout(&mut self, timeout: Duration) -> Result<Vec<String>> {
        self.session = watch::start_session(self, timeout).await?;
        Ok(self.session.statements.clone())
    }
}

impl MsSqlBackend {
    /// The ordered read, on a second connection (one TDS connection cannot interleave a
    /// running result set with the load's requests), on its own task like the other servers'.
    /// It waits for locks no longer than this connection does.
    fn start_read(&self, read_sql: &str) -> ReadAhead {
        let (target, timeout) = (self.target.clone(), self.connect_timeout);
        let settings = self
            .session
            .timeout
            .map(|t| MsSql.lock_timeout(t))
            .unwrap_or_default();
        ReadAhead::spawn(read_sql, move |sql, mut rows| async move {
            let outcome = read_rows(&target, timeout, &settings, &sql, &mut rows).await;
            (rows, outcome)
        })
    }
}

/// Run `sql` on a new connection, handing every row to `rows` until it stops listening.
async fn read_rows(
    target: &Target,
    timeout: Duration,
    settings: &[String],
    sql: &str,
    rows: &mut RowSender,
) -> Result<()> {
    let mut reader = open(target, timeout)
        .await
        .map_err(|e| Error::Connect(format!("opening the reading connection: {e}")))?;
    {
        let context = "reading source rows (second connection)";
        for setting in settings {
            reader
                .simple_query(setting)
                .await
                .map_err(|e| db_error(context, e))?
                .into_results()
                .await
                .map_err(|e| db_error(context, e))?;
        }
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

#[cfg(test)]
mod tls_tests {
    /// tiberius 0.13's text for an unknown issuer, verbatim.
    const TIBERIUS: &str = "the server's certificate was rejected during the TLS handshake: UnknownIssuer. To connect anyway you can: (1) trust a specific CA certificate with `Config::trust_cert_ca(path)`, or an in-memory CA bundle with `Config::trust_cert_ca_bundle(bytes)`; (2) if the OS trust store is unusable, base trust on the bundled Mozilla roots with `Config::trust_webpki_roots()` (requires the `rustls-webpki-roots` feature); (3) skip certificate validation entirely with `Config::trust_cert()` (accepts any certificate and also disables hostname verification — only safe on a trusted network); or (4) build tiberius with the `native-tls` backend, which is more lenient toward legacy certificates. Note: SQL Server always performs a TLS handshake during login even when `Encrypt=false`, so this can occur regardless of the encryption setting.";

    #[test]
    fn a_refused_certificate_is_one_short_line_with_our_advice_first() {
        let line = super::tls_failure("db:1433", TIBERIUS);
        assert!(!line.contains('\n'));
        assert!(line.len() < 400, "{} characters: {line}", line.len());
        assert!(line.starts_with("TLS with SQL Server db:1433 failed (an untrusted certificate: name its CA with ca=FILE"));
        assert!(
            line.ends_with("rejected during the TLS handshake: UnknownIssuer"),
            "{line}"
        );
        assert!(
            !line.contains("Config::") && !line.contains("native-tls"),
            "{line}"
        );
    }
}
