//! MariaDB / MySQL through mysql_async: a thin adapter that runs the dialect's text.
//!
//! Reads use the text protocol and type each cell by the column metadata the server sends:
//! integers and floats are parsed, DECIMAL and temporal types keep the server's text, and
//! anything in the `binary` character set (BINARY, VARBINARY, BLOB — and the dialect's
//! byte-exact attribute keys) is returned as [`Value::Bytes`], all other strings as text.
//!
//! Loads go through `LOAD DATA LOCAL INFILE` where the server allows it (`local_infile`): the
//! rows are encoded in memory as the dialect's tab-separated format and handed to the driver
//! as the "file", one statement per batch with no per-row parameters to prepare, bind and
//! parse (measured at 100,000 × 10: the whole stream went from 14 s to 2.3 s, LOAD DATA itself
//! ~0.7 s). Because the server downgrades data errors to warnings under `LOCAL`, any warning
//! fails the batch with the server's first messages, so nothing is accepted that a strict
//! INSERT would refuse. Elsewhere, and for batches holding floats (whose text the server, not
//! Rust, must render), loads are multi-row `INSERT`s with bind parameters, cut so each
//! statement stays well under the server's `max_allowed_packet` and its 65,535-parameter
//! limit ([`load`]). The streaming strategy reads on a second connection because the first
//! holds the load's transaction, and on its own task ([`super::read_ahead`]).

mod connect;
mod load;
mod monitor;

use async_trait::async_trait;
use mysql_async::consts::{ColumnFlags, ColumnType};
use mysql_async::prelude::Queryable;
use mysql_async::{Column, Conn, Row};

use super::connection::open_asking;
use super::read_ahead::{ReadAhead, RowSender};
use super::watch::{self, SessionWatch};
use super::{Backend, ConnectOptions, LoadTarget};
use crate::dialect::{Dialect, MariaDb, SessionSql};
use crate::error::{Error, ErrorKind, Result};
use crate::value::Value;
use monitor::watched;

/// Wide rows per streamed load at the most ([`super::flush_rows`]).
const MAX_FLUSH_ROWS: usize = 50_000;
/// The `binary` character set: bytes, not text.
const BINARY_CHARSET: u16 = 63;

pub struct MariaDbBackend {
    conn: Conn,
    /// Kept to open the second (reading) connection for the streaming strategy.
    target: connect::MyTarget,
    /// Bytes one INSERT may carry: a fraction of the server's max_allowed_packet.
    statement_budget: usize,
    /// The server's max_allowed_packet: a longer statement is refused before it is sent (the
    /// server would drop the connection, and with it the chance to clean up).
    max_packet: usize,
    /// The server accepts `LOAD DATA LOCAL INFILE`.
    local_infile: bool,
    /// The lock timeout and connection id, once [`Backend::set_lock_timeout`] ran.
    session: SessionWatch,
    /// Ends this session on the server and drops the run's staging tables if the process
    /// is made to exit at once (a second signal): the server would run the statement on.
    _forced_exit: Option<crate::interrupt::ExitHookGuard>,
}

pub async fn connect(url: &str, options: &ConnectOptions) -> Result<Box<dyn Backend>> {
    let mut target = connect::parse(url, options, MariaDb.session_setup())?;
    let mut conn = open_asking(&mut target).await?;
    let packet = conn
        .query_first::<u64, _>(MariaDb.max_packet_query())
        .await
        .map_err(|e| db_error("reading max_allowed_packet", &e))?
        .unwrap_or(4 << 20);
    // Unknown (an old server, a proxy) counts as off: the INSERT path works everywhere.
    let local_infile = conn
        .query_first::<i64, _>(MariaDb.local_infile_query())
        .await
        .ok()
        .flatten()
        == Some(1);
    Ok(Box::new(MariaDbBackend {
        conn,
        target,
        statement_budget: (packet as usize / 2).clamp(64 << 10, 64 << 20),
        max_packet: packet as usize,
        local_infile,
        session: SessionWatch::default(),
        _forced_exit: None,
    }))
}

#[async_trait]
impl Backend for MariaDbBackend {
    fn dialect(&self) -> &'static dyn Dialect {
        &MariaDb
    }

    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Value>>> {
        self.fits(sql)?;
        let monitor = self.monitor();
        let rows: Vec<Row> =
            watched(&self.session, &monitor, sql, "query", self.conn.query(sql)).await?;
        rows.into_iter().map(decode_row).collect()
    }

    async fn execute(&mut self, sql: &str) -> Result<u64> {
        self.fits(sql)?;
        let monitor = self.monitor();
        let request = self.conn.query_drop(sql);
        watched(&self.session, &monitor, sql, "statement", request).await?;
        Ok(self.conn.affected_rows())
    }

    async fn execute_script(&mut self, sql: &str) -> Result<()> {
        // The text protocol runs `;`-separated statements when multi-statements are enabled
        // (mysql_async enables them); every result set must be drained to see every error.
        self.fits(sql)?;
        let monitor = self.monitor();
        let conn = &mut self.conn;
        let request = async move {
            let mut result = conn.query_iter(sql).await?;
            while !result.is_empty() {
                result.collect::<Row>().await?;
            }
            Ok(())
        };
        watched(&self.session, &monitor, sql, "script", request).await
    }

    async fn column_types(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        let monitor = self.monitor();
        let conn = &mut self.conn;
        let request = async move {
            let stmt = conn.prep(sql).await?;
            let types = stmt.columns().iter().map(type_name).collect();
            conn.close(stmt).await?;
            Ok(types)
        };
        watched(&self.session, &monitor, sql, "describe", request).await
    }

    async fn set_lock_timeout(&mut self, timeout: std::time::Duration) -> Result<Vec<String>> {
        self.session = watch::start_session(self, timeout).await?;
        if let Some(end) = self.session.id.and_then(|id| MariaDb.end_session(id)) {
            let target = self.target.clone();
            self._forced_exit = Some(crate::interrupt::on_forced_exit(move |budget| {
                end_and_clean_up(&target, &end, budget)
            }));
        }
        Ok(self.session.statements.clone())
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
}

impl MariaDbBackend {
    /// Refuse, unsent, a statement the server would refuse by dropping the connection
    /// ("Packet is larger than max_allowed_packet"): the run stays able to roll back and
    /// drop what it created.
    fn fits(&self, sql: &str) -> Result<()> {
        // The packet also carries the command byte; keep a little room.
        if sql.len() + 1_024 <= self.max_packet {
            return Ok(());
        }
        let start: String = sql.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
        let start: String = start.chars().take(80).collect();
        Err(Error::Job(format!(
            "a statement of {} bytes (`{start}…`) is over the server's max_allowed_packet of {} bytes and was not sent: a very long attribute, value or name in the job makes it so (exclude or map it, use the stream strategy, or raise max_allowed_packet)",
            sql.len(),
            self.max_packet
        )))
    }

    /// The ordered read, on a second connection (the first holds the load's transaction) and
    /// its own task, so it runs on while batches load. It waits for locks no longer than the
    /// first.
    fn start_read(&self, read_sql: &str) -> ReadAhead {
        let target = self.target.clone();
        let settings = self
            .session
            .timeout
            .map(|t| MariaDb.lock_timeout(t))
            .unwrap_or_default();
        ReadAhead::spawn(read_sql, move |sql, mut rows| async move {
            let outcome = read_rows(&target, &settings, &sql, &mut rows).await;
            (rows, outcome)
        })
    }
}

/// Before a forced exit: on a connection of its own (a thread and runtime of its own: this
/// runs on the signal thread), end the run's session (`end`: its statement stops, its
/// transaction rolls back) and drop the run's staging tables, saying what was done; given up
/// after `budget`.
fn end_and_clean_up(target: &connect::MyTarget, end: &str, budget: std::time::Duration) {
    let tables = crate::interrupt::forced_cleanup();
    let (target, end) = (target.clone(), end.to_string());
    let (said, hear) = std::sync::mpsc::channel::<String>();
    let worker = std::thread::Builder::new().spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        runtime.block_on(async move {
            let mut conn = match connect::open(&target).await {
                Ok(conn) => conn,
                Err(e) => {
                    let _ = said.send(format!("could not connect to clean up: {e}"));
                    return;
                }
            };
            if let Err(e) = conn.query_drop(&end).await {
                let _ = said.send(format!("could not end the run's session ({e})"));
            }
            for (table, drop) in tables {
                let line = match conn.query_drop(&drop).await {
                    Ok(()) => format!("staging table {table} was dropped"),
                    Err(e) => format!("staging table {table} could not be dropped ({e})"),
                };
                let _ = said.send(line);
            }
            let _ = said.send(String::new());
        });
    });
    if worker.is_err() {
        return;
    }
    let deadline = std::time::Instant::now() + budget;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match hear.recv_timeout(left) {
            Ok(line) if line.is_empty() => return,
            Ok(line) => eprintln!("{line}"),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                eprintln!(
                    "cleanup not done within {} s: what is left is dropped by the next run of this job",
                    budget.as_secs()
                );
                return;
            }
            Err(_) => return,
        }
    }
}

/// Run `sql` on a new connection, handing every row to `rows` until it stops listening.
async fn read_rows(
    target: &connect::MyTarget,
    settings: &[String],
    sql: &str,
    rows: &mut RowSender,
) -> Result<()> {
    let context = "reading source rows";
    let mut reader = connect::open(target).await?;
    for setting in settings {
        reader
            .query_drop(setting)
            .await
            .map_err(|e| db_error(context, &e))?;
    }
    {
        let mut result = reader
            .query_iter(sql)
            .await
            .map_err(|e| db_error(context, &e))?;
        while let Some(row) = result.next().await.map_err(|e| db_error(context, &e))? {
            if !rows.push(decode_row(row)?).await {
                return Ok(());
            }
        }
    }
    // Closing politely; a failure here loses nothing, the reads are complete.
    let _ = reader.disconnect().await;
    Ok(())
}

impl MariaDbBackend {
    async fn load(&mut self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
        if rows.is_empty() {
            return Ok(0);
        }
        let floats = rows.iter().flatten().any(|v| matches!(v, Value::Float(_)));
        if self.local_infile && !floats {
            load::load_data_local(&mut self.conn, target, rows).await
        } else {
            load::insert_rows(&mut self.conn, self.statement_budget, target, rows).await
        }
    }
}

fn decode_row(row: Row) -> Result<Vec<Value>> {
    let columns = row.columns();
    row.unwrap()
        .into_iter()
        .zip(columns.iter())
        .map(|(v, c)| decode_cell(v, c))
        .collect()
}

/// One cell, typed by the column metadata (the text protocol sends every cell as bytes).
fn decode_cell(v: mysql_async::Value, column: &Column) -> Result<Value> {
    use mysql_async::Value as M;
    let bytes = match v {
        M::NULL => return Ok(Value::Null),
        M::Int(i) => return Ok(Value::Int(i)),
        M::UInt(u) => {
            return Ok(i64::try_from(u).map_or_else(|_| Value::Text(u.to_string()), Value::Int))
        }
        M::Float(f) => return Ok(Value::Float(f64::from(f))),
        M::Double(f) => return Ok(Value::Float(f)),
        M::Bytes(b) => b,
        other => {
            return Ok(Value::Text(
                other.as_sql(true).trim_matches('\'').to_string(),
            ))
        }
    };
    let text = |b: Vec<u8>| {
        String::from_utf8(b).map_err(|e| {
            Error::database(
                "mariadb reading a row",
                format!("column {} is not valid UTF-8: {e}", column.name_str()),
            )
        })
    };
    Ok(match column.column_type() {
        ColumnType::MYSQL_TYPE_TINY
        | ColumnType::MYSQL_TYPE_SHORT
        | ColumnType::MYSQL_TYPE_INT24
        | ColumnType::MYSQL_TYPE_LONG
        | ColumnType::MYSQL_TYPE_LONGLONG
        | ColumnType::MYSQL_TYPE_YEAR => {
            let t = text(bytes)?;
            t.parse().map(Value::Int).unwrap_or(Value::Text(t))
        }
        ColumnType::MYSQL_TYPE_FLOAT | ColumnType::MYSQL_TYPE_DOUBLE => {
            let t = text(bytes)?;
            t.parse().map(Value::Float).unwrap_or(Value::Text(t))
        }
        // The bits arrive as big-endian bytes (b'1010' as the byte 0x0A, a newline in a text
        // cell); the pushdown's own conversion writes their number, `10`: so does the stream.
        ColumnType::MYSQL_TYPE_BIT => {
            let bits = bytes.iter().fold(0u128, |n, &b| (n << 8) | u128::from(b));
            i64::try_from(bits).map_or_else(|_| Value::Text(bits.to_string()), Value::Int)
        }
        _ if column.character_set() == BINARY_CHARSET && is_string(column.column_type()) => {
            Value::Bytes(bytes)
        }
        _ => Value::Text(text(bytes)?),
    })
}

fn is_string(ty: ColumnType) -> bool {
    matches!(
        ty,
        ColumnType::MYSQL_TYPE_STRING
            | ColumnType::MYSQL_TYPE_VAR_STRING
            | ColumnType::MYSQL_TYPE_VARCHAR
            | ColumnType::MYSQL_TYPE_TINY_BLOB
            | ColumnType::MYSQL_TYPE_BLOB
            | ColumnType::MYSQL_TYPE_MEDIUM_BLOB
            | ColumnType::MYSQL_TYPE_LONG_BLOB
    )
}

/// A column's type as CREATE TABLE accepts it, from the metadata of a prepared statement.
fn type_name(column: &Column) -> Option<String> {
    let unsigned = if column.flags().contains(ColumnFlags::UNSIGNED_FLAG) {
        " UNSIGNED"
    } else {
        ""
    };
    let binary = column.character_set() == BINARY_CHARSET;
    // Lengths are in bytes; utf8mb4 takes up to 4 per character.
    let chars = if binary {
        column.column_length()
    } else {
        column.column_length() / 4
    };
    let name = match column.column_type() {
        ColumnType::MYSQL_TYPE_TINY => format!("TINYINT{unsigned}"),
        ColumnType::MYSQL_TYPE_SHORT => format!("SMALLINT{unsigned}"),
        ColumnType::MYSQL_TYPE_INT24 => format!("MEDIUMINT{unsigned}"),
        ColumnType::MYSQL_TYPE_LONG => format!("INT{unsigned}"),
        ColumnType::MYSQL_TYPE_LONGLONG => format!("BIGINT{unsigned}"),
        ColumnType::MYSQL_TYPE_FLOAT => "FLOAT".into(),
        ColumnType::MYSQL_TYPE_DOUBLE => "DOUBLE".into(),
        ColumnType::MYSQL_TYPE_NEWDECIMAL | ColumnType::MYSQL_TYPE_DECIMAL => {
            let scale = u32::from(column.decimals());
            let sign = u32::from(unsigned.is_empty());
            let point = u32::from(scale > 0);
            let precision = column.column_length().saturating_sub(sign + point);
            format!("DECIMAL({precision},{scale}){unsigned}")
        }
        ColumnType::MYSQL_TYPE_DATE => "DATE".into(),
        // An entity key of these types made a column with no type (`CREATE TABLE t (`e`, …)`,
        // a syntax error): every run of such a job failed.
        ColumnType::MYSQL_TYPE_YEAR => "YEAR".into(),
        ColumnType::MYSQL_TYPE_TIME => format!("TIME{}", fraction(column.decimals())),
        // Read as its number (`decode_cell`), kept as one: LOAD DATA would take the stream's
        // `10` for a BIT column as the bytes of the text.
        ColumnType::MYSQL_TYPE_BIT => "BIGINT UNSIGNED".into(),
        // With its fractional digits: a DATETIME(6) key made a plain DATETIME kept whole
        // seconds only (and two keys a fraction apart collided). 39 is "not fixed": all six.
        ColumnType::MYSQL_TYPE_DATETIME => format!("DATETIME{}", fraction(column.decimals())),
        ColumnType::MYSQL_TYPE_TIMESTAMP => format!("TIMESTAMP{}", fraction(column.decimals())),
        ColumnType::MYSQL_TYPE_VAR_STRING | ColumnType::MYSQL_TYPE_VARCHAR if binary => {
            format!("VARBINARY({chars})")
        }
        ColumnType::MYSQL_TYPE_VAR_STRING | ColumnType::MYSQL_TYPE_VARCHAR => {
            format!("VARCHAR({chars})")
        }
        ColumnType::MYSQL_TYPE_STRING if binary => format!("BINARY({chars})"),
        ColumnType::MYSQL_TYPE_STRING => format!("CHAR({chars})"),
        ColumnType::MYSQL_TYPE_BLOB
        | ColumnType::MYSQL_TYPE_TINY_BLOB
        | ColumnType::MYSQL_TYPE_MEDIUM_BLOB
        | ColumnType::MYSQL_TYPE_LONG_BLOB => if binary { "LONGBLOB" } else { "LONGTEXT" }.into(),
        _ => return None,
    };
    Some(name)
}

/// A temporal type's fractional digits as declared: none, `(1)` … `(6)`.
fn fraction(decimals: u8) -> String {
    match decimals {
        0 => String::new(),
        1..=6 => format!("({decimals})"),
        _ => "(6)".into(),
    }
}

fn db_error(context: &str, err: &mysql_async::Error) -> Error {
    let message = match err {
        mysql_async::Error::Server(e) if matches!(e.code, 1117 | 1118 | 1069 | 1070) => format!(
            "ERROR {} ({}): {}; a row must fit InnoDB's limits: set target.split: auto to spread the columns over several tables",
            e.code, e.state, e.message
        ),
        mysql_async::Error::Server(e) => format!("ERROR {} ({}): {}", e.code, e.state, e.message),
        other => other.to_string(),
    };
    Error::database_of(kind_of(err), format!("mariadb {context}"), message)
}

/// The kind of a server error, by its error number.
pub(super) fn kind_of(err: &mysql_async::Error) -> ErrorKind {
    match err {
        mysql_async::Error::Server(e) => kind_of_code(e.code),
        _ => ErrorKind::Other,
    }
}

/// The kind of an error or warning number (`SHOW WARNINGS` gives the same numbers).
pub(super) fn kind_of_code(code: u16) -> ErrorKind {
    match code {
        // ER_DUP_ENTRY (also `LOAD DATA LOCAL`'s warning: LOCAL implies IGNORE),
        // ER_DUP_ENTRY_WITH_KEY_NAME.
        1062 | 1586 => ErrorKind::UniqueViolation,
        // ER_BAD_NULL_ERROR.
        1048 => ErrorKind::NotNullViolation,
        // ER_LOCK_WAIT_TIMEOUT: `lock_wait_timeout` or `innodb_lock_wait_timeout` expired.
        1205 => ErrorKind::LockTimeout,
        _ => ErrorKind::Other,
    }
}
