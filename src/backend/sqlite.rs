//! SQLite through rusqlite with the bundled library: the embedded default, nothing to install.
//!
//! SQLite lets one connection step a SELECT while it INSERTs elsewhere, so the streaming
//! strategy reads and loads on the same connection, inside the one open transaction.
//!
//! Loads are multi-row `INSERT … VALUES (…), (…)` statements prepared once per shape and
//! reused (the SQL text comes from the dialect and is cached here, not rebuilt per batch),
//! with values bound by reference. The only tuning applied to the connection is a larger page
//! cache ([`CACHE_KIB`]), set before the first statement rather than at open: setting it reads
//! the schema, which waits for the file's lock, and that wait must be the job's
//! `lock_timeout` (set by [`Backend::set_lock_timeout`]), not the opening default. The cache it lets discovery, verification and ORDER BY sorts stay in memory
//! and keeps a big transaction's dirty pages from spilling early. It changes nothing about
//! durability; `journal_mode` and `synchronous` are left as the database has them, so a
//! committed result is exactly as safe as with any other SQLite client.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use std::path::Path;

use async_trait::async_trait;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::{ToSql, ToSqlOutput, Value as SqlValue, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::read_ahead::ReadAhead;
use super::{flush_rows, Backend, LoadTarget, RowPipeline};
use crate::dialect::{Dialect, Schema, Sqlite};
use crate::error::{Error, ErrorKind, Result};
use crate::interrupt;
use crate::value::Value;

/// SQLite's default limit on bound parameters per statement (SQLITE_MAX_VARIABLE_NUMBER).
const MAX_PARAMS: usize = 32_766;
/// Rows per multi-row INSERT at most: past a few hundred the gain is gone and the statement
/// text (parsed once, but held) only grows.
const MAX_ROWS_PER_INSERT: usize = 500;
/// Wide rows per streamed load at the most ([`super::flush_rows`]).
const MAX_FLUSH_ROWS: usize = 2_000;
/// The connection's page cache, in KiB (SQLite's default is 2,000 KiB). Bounded, so memory
/// still does not grow with the source.
const CACHE_KIB: i64 = 65_536;
/// Prepared statements kept: two INSERT shapes (full and last batch) per target table.
const STATEMENT_CACHE: usize = 64;
/// How long a statement waits for the file's lock until the job's `lock_timeout` is set: the
/// job's default.
const DEFAULT_LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A load statement's shape: table, columns, rows.
type InsertShape = (String, Vec<String>, usize);

pub struct SqliteBackend {
    conn: Connection,
    /// The database file (None in memory): a load into another database reads it on a
    /// connection of its own.
    path: Option<std::path::PathBuf>,
    /// INSERT text per (table, rows per statement), rendered by the dialect once.
    /// Keyed by table, columns and rows: a `replace` run on the same connection may load a
    /// table of the same name with other columns.
    insert_sql: RefCell<HashMap<InsertShape, String>>,
    /// The busy timeout in force: how long a statement waits for the file's lock.
    lock_timeout: Cell<std::time::Duration>,
    /// The page cache is set (before the first statement, under the job's busy timeout).
    tuned: Cell<bool>,
}

impl SqliteBackend {
    /// Open `path`; the embedded default file is created, any other must already exist.
    pub fn open(path: &Path) -> Result<SqliteBackend> {
        let create = path == Path::new(super::connection::EMBEDDED_DEFAULT);
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let conn = Connection::open_with_flags(path, flags).map_err(|e| {
            Error::Connect(format!(
                "cannot open SQLite database {}: {e}",
                path.display()
            ))
        })?;
        conn.busy_timeout(DEFAULT_LOCK_TIMEOUT)
            .map_err(|e| db_error("setting busy timeout", e))?;
        let mut backend = Self::new(conn)?;
        backend.path = Some(path.to_path_buf());
        Ok(backend)
    }

    /// An in-memory database, for tests and examples.
    pub fn in_memory() -> Result<SqliteBackend> {
        let conn = Connection::open_in_memory().map_err(|e| db_error("opening :memory:", e))?;
        Self::new(conn)
    }

    fn new(conn: Connection) -> Result<SqliteBackend> {
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // The pushdown's exact text of a REAL in a TEXT column (Types::text_cell).
        conn.create_scalar_function(
            crate::dialect::REAL_TEXT,
            1,
            FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
            |ctx| {
                Ok(match ctx.get_raw(0) {
                    ValueRef::Real(f) => match crate::dialect::exact_real_text(f) {
                        Some(text) => SqlValue::Text(text),
                        None => SqlValue::Real(f),
                    },
                    other => SqlValue::from(other),
                })
            },
        )
        .map_err(|e| db_error("registering the exact text of a REAL", e))?;
        Ok(SqliteBackend {
            conn,
            path: None,
            insert_sql: RefCell::new(HashMap::new()),
            lock_timeout: Cell::new(DEFAULT_LOCK_TIMEOUT),
            tuned: Cell::new(false),
        })
    }

    /// Set the page cache before the first statement (it waits for the file's lock, so it
    /// runs under the busy timeout in force, not at open).
    fn tune(&self) -> Result<()> {
        if !self.tuned.get() {
            self.conn
                .pragma_update(None, "cache_size", -CACHE_KIB)
                .map_err(|e| self.db_error("setting cache_size", e))?;
            self.tuned.set(true);
        }
        Ok(())
    }

    /// [`db_error`], naming the database file and the wait when the lock timed out.
    fn db_error(&self, context: &str, err: rusqlite::Error) -> Error {
        if kind_of(&err) != ErrorKind::LockTimeout {
            return db_error(context, err);
        }
        let file = match &self.path {
            Some(path) => path.display().to_string(),
            None => ":memory:".into(),
        };
        Error::Job(format!(
            "sqlite {context}: lock_timeout expired waiting for a lock on the database file {file} (waited {}: another connection holds it; SQLite cannot say which)",
            seconds(self.lock_timeout.get())
        ))
    }

    fn load(&self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
        if rows.is_empty() {
            return Ok(0);
        }
        let width = target.columns.len().max(1);
        let per_statement = (MAX_PARAMS / width).clamp(1, MAX_ROWS_PER_INSERT);
        let mut cache = self.insert_sql.borrow_mut();
        let mut loaded = 0u64;
        for chunk in rows.chunks(per_statement) {
            let sql = cache
                .entry((
                    target.table.to_string(),
                    target.columns.clone(),
                    chunk.len(),
                ))
                .or_insert_with(|| {
                    Sqlite.insert_values(&target.table, &target.columns, chunk.len())
                });
            let mut stmt = self
                .conn
                .prepare_cached(sql)
                .map_err(|e| self.db_error(&format!("preparing load into {}", target.table), e))?;
            let params = chunk.iter().flatten().map(Bound);
            loaded += stmt
                .execute(rusqlite::params_from_iter(params))
                .map_err(|e| self.db_error(&format!("loading rows into {}", target.table), e))?
                as u64;
        }
        Ok(loaded)
    }
}

#[async_trait]
impl Backend for SqliteBackend {
    fn dialect(&self) -> &'static dyn Dialect {
        &Sqlite
    }

    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Value>>> {
        let _interrupt = self.interruptible();
        self.tune()?;
        let mut stmt = self
            .conn
            .prepare(sql)
            .map_err(|e| self.db_error("query", e))?;
        let width = stmt.column_count();
        let mut rows = stmt.query([]).map_err(|e| self.db_error("query", e))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.db_error("query", e))? {
            out.push(read_row(row, width)?);
        }
        Ok(out)
    }

    async fn execute(&mut self, sql: &str) -> Result<u64> {
        let _interrupt = self.interruptible();
        self.tune()?;
        let mut stmt = self
            .conn
            .prepare(sql)
            .map_err(|e| self.db_error("statement", e))?;
        let n = stmt
            .raw_execute()
            .map_err(|e| self.db_error("statement", e))?;
        Ok(n as u64)
    }

    async fn execute_script(&mut self, sql: &str) -> Result<()> {
        let _interrupt = self.interruptible();
        self.tune()?;
        self.conn
            .execute_batch(sql)
            .map_err(|e| self.db_error("script", e))
    }

    async fn column_types(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        self.tune()?;
        let stmt = self
            .conn
            .prepare(sql)
            .map_err(|e| self.db_error("describe", e))?;
        Ok(stmt
            .columns()
            .iter()
            .map(|c| c.decl_type().map(str::to_string))
            .collect())
    }

    async fn load_rows(&mut self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
        self.tune()?;
        self.load(target, rows)
    }

    /// A second, read-only connection to the same file on a thread of its own: SQLite's
    /// driver blocks, and the load into the other database must go on meanwhile.
    fn read_ahead(&mut self, read_sql: &str) -> Result<ReadAhead> {
        let Some(path) = self.path.clone() else {
            return Err(Error::Usage(
                "an in-memory SQLite database cannot be the source of a load into another database"
                    .into(),
            ));
        };
        Ok(ReadAhead::spawn_blocking(read_sql, move |sql, rows| {
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let conn = Connection::open_with_flags(&path, flags).map_err(|e| {
                Error::Connect(format!(
                    "cannot open SQLite database {}: {e}",
                    path.display()
                ))
            })?;
            let context = "reading source rows";
            let mut stmt = conn.prepare(sql).map_err(|e| db_error(context, e))?;
            let width = stmt.column_count();
            let mut result = stmt.query([]).map_err(|e| db_error(context, e))?;
            while let Some(row) = result.next().map_err(|e| db_error(context, e))? {
                if !rows.push_blocking(read_row(row, width)?) {
                    break;
                }
            }
            Ok(())
        }))
    }

    fn max_flush_rows(&self) -> usize {
        MAX_FLUSH_ROWS
    }

    /// SQLite's lock timeout is the busy timeout of the C API, not SQL.
    async fn set_lock_timeout(&mut self, timeout: std::time::Duration) -> Result<Vec<String>> {
        self.conn
            .busy_timeout(timeout)
            .map_err(|e| db_error("setting the busy timeout (lock_timeout)", e))?;
        self.lock_timeout.set(timeout);
        Ok(Vec::new())
    }

    async fn stream_into(
        &mut self,
        read_sql: &str,
        pipeline: &mut dyn RowPipeline,
        targets: &[LoadTarget],
    ) -> Result<Vec<u64>> {
        let _interrupt = self.interruptible();
        self.tune()?;
        let mut loaded = vec![0u64; targets.len()];
        let batch_rows = flush_rows(targets, MAX_FLUSH_ROWS);
        let context = "reading source rows";
        let mut stmt = self
            .conn
            .prepare(read_sql)
            .map_err(|e| self.db_error(context, e))?;
        let width = stmt.column_count();
        let mut rows = stmt.query([]).map_err(|e| self.db_error(context, e))?;
        while let Some(row) = rows.next().map_err(|e| self.db_error(context, e))? {
            pipeline.push(read_row(row, width)?)?;
            if pipeline.ready_rows() >= batch_rows {
                self.flush(pipeline, targets, &mut loaded)?;
            }
        }
        drop(rows);
        drop(stmt);
        pipeline.finish()?;
        self.flush(pipeline, targets, &mut loaded)?;
        Ok(loaded)
    }
}

impl SqliteBackend {
    /// While the guard lives, an interrupt calls `sqlite3_interrupt` (from the signal thread:
    /// this one is busy stepping the statement), which stops it at its next step with
    /// SQLITE_INTERRUPT; [`db_error`] turns that into the interrupt's error.
    fn interruptible(&self) -> interrupt::HookGuard {
        let handle = self.conn.get_interrupt_handle();
        interrupt::on_interrupt(move || handle.interrupt())
    }

    /// [`super::load_ready`], synchronously: the read statement borrows the connection, so the
    /// load goes through `&self` on that same connection (SQLite allows it mid-scan).
    fn flush(
        &self,
        pipeline: &mut dyn RowPipeline,
        targets: &[LoadTarget],
        loaded: &mut [u64],
    ) -> Result<()> {
        for (i, rows) in pipeline.take_ready().into_iter().enumerate() {
            if let Some(target) = targets.get(i) {
                loaded[i] += self.load(target, &rows)?;
            }
        }
        Ok(())
    }
}

/// `2 s`, `2.5 s`.
fn seconds(d: std::time::Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

fn read_row(row: &rusqlite::Row<'_>, width: usize) -> Result<Vec<Value>> {
    (0..width)
        .map(|i| {
            let v = row.get_ref(i).map_err(|e| db_error("reading a row", e))?;
            Ok(match v {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(n) => Value::Int(n),
                ValueRef::Real(f) => Value::Float(f),
                ValueRef::Text(t) => Value::text_from_bytes(t),
                ValueRef::Blob(b) => Value::Bytes(b.to_vec()),
            })
        })
        .collect()
}

/// A value bound by reference: no copy of the text on the Rust side.
struct Bound<'a>(&'a Value);

impl ToSql for Bound<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self.0 {
            Value::Null => ValueRef::Null,
            Value::Int(n) => ValueRef::Integer(*n),
            // A TEXT column would store SQLite's 15-digit text of it; REAL and NUMERIC
            // columns read the exact text back as the same REAL.
            Value::Float(f) => match crate::dialect::exact_real_text(*f) {
                Some(text) => return Ok(ToSqlOutput::Owned(SqlValue::Text(text))),
                None => ValueRef::Real(*f),
            },
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Bytes(b) => ValueRef::Blob(b),
            Value::TextBytes(b) => ValueRef::Text(b),
        }))
    }
}

/// SQLite's complaint without the statement: rusqlite's text for a statement that failed to
/// prepare quotes the whole SQL (105 lines for a target that is a view), and the message
/// (`view kv_wide already exists`, `no such column: s.x`) already names what is at fault.
fn db_error(context: &str, err: rusqlite::Error) -> Error {
    match err.sqlite_error_code() {
        Some(rusqlite::ErrorCode::OperationInterrupted) => interrupt::interrupted_error(true),
        // The busy timeout ran out: another connection holds the file's lock (SQLite locks
        // the whole database, and cannot say who holds it).
        _ if kind_of(&err) == ErrorKind::LockTimeout => Error::Job(format!(
            "sqlite {context}: lock_timeout expired waiting for a lock on the database file \
             (another connection is writing to it)"
        )),
        // The message alone: SqlInputError's Display echoes the whole statement.
        _ => {
            let kind = kind_of(&err);
            let message = match err {
                rusqlite::Error::SqlInputError { msg, .. } => msg,
                other => other.to_string(),
            };
            Error::database_of(kind, format!("sqlite {context}"), message)
        }
    }
}

/// The kind of an SQLite error, by its (extended) result code.
fn kind_of(err: &rusqlite::Error) -> ErrorKind {
    use rusqlite::ffi;
    let Some(e) = err.sqlite_error() else {
        return ErrorKind::Other;
    };
    match e.extended_code {
        ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
            ErrorKind::UniqueViolation
        }
        ffi::SQLITE_CONSTRAINT_NOTNULL => ErrorKind::NotNullViolation,
        // The busy timeout ran out (SQLite locks the whole file).
        _ if e.code == rusqlite::ErrorCode::DatabaseBusy => ErrorKind::LockTimeout,
        _ => ErrorKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::prelude::*;

    /// The dialect's column limit is the bundled library's SQLITE_MAX_COLUMN: a table of that
    /// many columns is created, one more is refused.
    #[tokio::test]
    async fn the_dialect_column_limit_is_the_bundled_librarys() {
        let limit = Sqlite.max_columns().expect("sqlite has a column limit");
        let mut db = SqliteBackend::in_memory().expect("in-memory database");
        let create = |n: usize| {
            let columns: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
            format!("CREATE TABLE t{n} ({})", columns.join(", "))
        };
        db.execute(&create(limit)).await.expect("the limit fits");
        let err = db.execute(&create(limit + 1)).await.expect_err("one more");
        assert!(err.to_string().contains("too many columns"), "{err}");
    }
}
