//! Connections and execution only: a backend runs the text a dialect rendered and hands back
//! rows of [`Value`]s. It never builds SQL of its own, so what `--dry-run` prints is what runs.
//!
//! The driver is chosen from the connection string's scheme ([`ConnectionSpec::parse`], over
//! the one registry [`drivers::DRIVERS`]), and
//! passwords are hidden whenever a connection is displayed ([`ConnectionSpec::display`]).

pub(crate) mod connection;
pub mod credentials;
pub mod drivers;
pub mod dry_run;
#[cfg(feature = "mariadb")]
pub mod mariadb;
#[cfg(feature = "mssql")]
pub mod mssql;
pub mod oracle;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod read_ahead;
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(feature = "postgres")]
mod tls;
pub mod watch;

pub use connection::ConnectOptions;
pub use drivers::{ConnectionSpec, Driver};
pub use dry_run::DryRunLog;

use async_trait::async_trait;

use crate::config::TableRef;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::value::Value;

/// Where streamed wide rows go: one table of a (possibly split) target.
#[derive(Debug, Clone)]
pub struct LoadTarget {
    pub table: TableRef,
    /// Column names, unquoted, entity columns first.
    pub columns: Vec<String>,
}

/// The streaming strategy's per-row work, driven by [`Backend::stream_into`]: the backend
/// reads ordered key–value rows and feeds them here, and loads whatever wide rows come out.
pub trait RowPipeline: Send {
    /// One source row: entity values, then the attribute, then the value.
    fn push(&mut self, row: Vec<Value>) -> Result<()>;
    /// The source is exhausted: complete the last entity.
    fn finish(&mut self) -> Result<()>;
    /// Wide rows ready to load, per target table (same order as the `targets` given).
    fn take_ready(&mut self) -> Vec<Vec<Vec<Value>>>;
    /// How many completed wide rows are waiting; the backend loads once this reaches its batch size.
    fn ready_rows(&self) -> usize;
}

#[async_trait]
pub trait Backend: Send {
    /// The SQL dialect this connection speaks.
    fn dialect(&self) -> &'static dyn Dialect;

    /// Rows of a query (discovery, counts, previews). Fully buffered: use for small results.
    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Value>>>;

    /// Run one statement; the number of rows it affected, where the server says.
    async fn execute(&mut self, sql: &str) -> Result<u64>;

    /// Bound every later lock wait of this session, and of the connections it opens later,
    /// by `timeout` (the job's `lock_timeout`), with the dialect's session settings. Server
    /// backends also learn their session id here, to say who holds a lock they wait for.
    /// Returns the statements it sent, in order, for the report.
    async fn set_lock_timeout(&mut self, timeout: std::time::Duration) -> Result<Vec<String>> {
        let statements = self.dialect().lock_timeout(timeout);
        for sql in &statements {
            self.execute(sql).await?;
        }
        Ok(statements)
    }

    /// Run a script of several statements (sample-data setup files).
    async fn execute_script(&mut self, sql: &str) -> Result<()>;

    /// The declared SQL types of a query's result columns, where the server reports them.
    async fn column_types(&mut self, sql: &str) -> Result<Vec<Option<String>>>;

    /// Load rows into a table that exists (batched, with bind parameters or a bulk protocol).
    async fn load_rows(&mut self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64>;

    /// Start reading `read_sql` on a connection and task of its own, for a load into another
    /// database (`target.connection`): the rows arrive in order through the [`ReadAhead`].
    fn read_ahead(&mut self, read_sql: &str) -> Result<read_ahead::ReadAhead> {
        let _ = read_sql;
        Err(crate::error::Error::Usage(format!(
            "a {} connection cannot be the source of a load into another database",
            self.dialect().name()
        )))
    }

    /// Statements every later read of this backend ([`Backend::read_ahead`],
    /// [`Backend::stream_into`]) runs on its connection before its query: planner settings
    /// for the source ([`crate::dialect::Query::stored_order_settings`]). A backend whose
    /// dialect has none takes none.
    fn set_read_settings(&mut self, settings: Vec<String>) -> Result<()> {
        match settings.is_empty() {
            true => Ok(()),
            false => Err(crate::error::Error::Usage(format!(
                "a {} connection takes no read settings ({})",
                self.dialect().name(),
                settings.join("; ")
            ))),
        }
    }

    /// Wide rows per streamed load at the most on this backend ([`flush_rows`]).
    fn max_flush_rows(&self) -> usize {
        2_000
    }

    /// Stream `read_sql` through `pipeline`, loading its wide rows into `targets` in batches.
    /// Runs inside the transaction this connection has open; returns rows loaded per target.
    /// The servers read on a second connection ([`Backend::read_ahead`]) and load on this one
    /// mid-scan ([`read_ahead::stream`]); SQLite, with one connection, has its own loop.
    async fn stream_into(
        &mut self,
        read_sql: &str,
        pipeline: &mut dyn RowPipeline,
        targets: &[LoadTarget],
    ) -> Result<Vec<u64>> {
        let source = self.read_ahead(read_sql)?;
        let batch_rows = flush_rows(targets, self.max_flush_rows());
        read_ahead::stream(self, source, pipeline, targets, batch_rows).await
    }
}

/// Cells (rows × columns over all targets) collected before a streamed load: a few MiB per
/// load, big enough to amortise its round trip (~26,000 rows of 10 columns, ~260 of 1,000).
const CELLS_PER_FLUSH: usize = 262_144;
/// Rows per streamed load at the least, however wide the rows.
const MIN_FLUSH_ROWS: usize = 64;

/// Wide rows collected before a streamed load: about [`CELLS_PER_FLUSH`] cells, at least
/// [`MIN_FLUSH_ROWS`] and at most `max_rows` (the backend's own ceiling), so memory stays
/// flat whatever the width.
pub(crate) fn flush_rows(targets: &[LoadTarget], max_rows: usize) -> usize {
    let width: usize = targets.iter().map(|t| t.columns.len()).sum();
    (CELLS_PER_FLUSH / width.max(1)).clamp(MIN_FLUSH_ROWS, max_rows)
}

impl LoadTarget {
    /// Refuse rows that do not have one value per column (a bug upstream, never data).
    pub(crate) fn check_widths(&self, rows: &[Vec<Value>]) -> Result<()> {
        let width = self.columns.len();
        match rows.iter().find(|r| r.len() != width) {
            Some(bad) => Err(crate::error::Error::Job(format!(
                "load into {}: a row has {} values for {width} columns",
                self.table,
                bad.len()
            ))),
            None => Ok(()),
        }
    }
}

/// Load every table's ready wide rows through [`Backend::load_rows`], adding to `loaded`:
/// the flush step of the server backends' `stream_into` loops, which read on a second
/// connection and so can load on this one mid-scan.
pub(crate) async fn load_ready<B: Backend + ?Sized>(
    backend: &mut B,
    pipeline: &mut dyn RowPipeline,
    targets: &[LoadTarget],
    loaded: &mut [u64],
) -> Result<()> {
    for (i, rows) in pipeline.take_ready().into_iter().enumerate() {
        if let Some(target) = targets.get(i) {
            loaded[i] += backend.load_rows(target, &rows).await?;
        }
    }
    Ok(())
}

/// Open a connection to what `spec` names.
pub async fn connect(spec: &ConnectionSpec, options: &ConnectOptions) -> Result<Box<dyn Backend>> {
    spec.driver.connect(&spec.target, options).await
}
