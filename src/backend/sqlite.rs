//! SQLite through rusqlite with the bundled library: the embedded default, nothing to install.
//!
//! SQLite lets one connection step a SELECT while it INSERTs elsewhere, so the streaming
//! strategy reads and loads on the same connection, inside the one open transaction.
//!
//! Loads are multi-row `INSERT … VALUES (…), (…)` statements prepared once per shape and
//! reused (the SQL text comes from the dialect and is cached here, not rebuilt per batch),
//! with values bound by reference. The only tuning applied to the connection is a larger page
//! cache ([`CACHE_KIB`]): it lets discovery, verification and ORDER BY sorts stay in memory
//! and keeps a big transaction's dirty pages from spilling early. It changes nothing about
//! durability; `journal_mode` and `synchronous` are left as the database has them, so a
//! committed result is exactly as safe as with any other SQLite client.

use std::cell::RefCell;
use std::collections::HashMap;

use std::path::Path;

use async_trait::async_trait;
use rusqlite::types::{ToSql, ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::read_ahead::ReadAhead;
use super::{flush_rows, Backend, LoadTarget, RowPipeline};
use crate::dialect::{Dialect, Sqlite};
use crate::error::{Error, Result};
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

pub struct SqliteBackend {
    conn: Connection,
    /// The database file (None in memory): a load into another database reads it on a
    /// connection of its own.
    path: Option<std::path::PathBuf>,
    /// INSERT text per (table, rows per statement), rendered by the dialect once.
    insert_sql: RefCell<HashMap<(String, usize), String>>,
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
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| db_error("setting busy timeout", e))?;
        let mut backend = Self::tuned(conn)?;
        backend.path = Some(path.to_path_buf());
        Ok(backend)
    }

    /// An in-memory database, for tests and examples.
    pub fn in_memory() -> Result<SqliteBackend> {
        let conn = Connection::open_in_memory().map_err(|e| db_error("opening :memory:", e))?;
        Self::tuned(conn)
    }

    fn tuned(conn: Connection) -> Result<SqliteBackend> {
        conn.pragma_update(None, "cache_size", -CACHE_KIB)
            .map_err(|e| db_error("setting cache_size", e))?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(SqliteBackend {
            conn,
            path: None,
            insert_sql: RefCell::new(HashMap::new()),
        })
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
                .entry((target.table.to_string(), chunk.len()))
                .or_insert_with(|| {
                    Sqlite.insert_values(&target.table, &target.columns, chunk.len())
                });
            let mut stmt = self
                .conn
                .prepare_cached(sql)
                .map_err(|e| db_error(&format!("preparing load into {}", target.table), e))?;
            let params = chunk.iter().flatten().map(Bound);
            loaded += stmt
                .execute(rusqlite::params_from_iter(params))
                .map_err(|e| db_error(&format!("loading rows into {}", target.table), e))?
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
        let mut stmt = self.conn.prepare(sql).map_err(|e| db_error("query", e))?;
        let width = stmt.column_count();
        let mut rows = stmt.query([]).map_err(|e| db_error("query", e))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| db_error("query", e))? {
            out.push(read_row(row, width)?);
        }
        Ok(out)
    }

    async fn execute(&mut self, sql: &str) -> Result<u64> {
        let mut stmt = self
            .conn
            .prepare(sql)
            .map_err(|e| db_error("statement", e))?;
        let n = stmt.raw_execute().map_err(|e| db_error("statement", e))?;
        Ok(n as u64)
    }

    async fn execute_script(&mut self, sql: &str) -> Result<()> {
        self.conn
            .execute_batch(sql)
            .map_err(|e| db_error("script", e))
    }

    async fn column_types(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        let stmt = self
            .conn
            .prepare(sql)
            .map_err(|e| db_error("describe", e))?;
        Ok(stmt
            .columns()
            .iter()
            .map(|c| c.decl_type().map(str::to_string))
            .collect())
    }

    async fn load_rows(&mut self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
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

    async fn stream_into(
        &mut self,
        read_sql: &str,
        pipeline: &mut dyn RowPipeline,
        targets: &[LoadTarget],
    ) -> Result<Vec<u64>> {
        let mut loaded = vec![0u64; targets.len()];
        let batch_rows = flush_rows(targets, MAX_FLUSH_ROWS);
        let mut stmt = self
            .conn
            .prepare(read_sql)
            .map_err(|e| db_error("reading source rows", e))?;
        let width = stmt.column_count();
        let mut rows = stmt
            .query([])
            .map_err(|e| db_error("reading source rows", e))?;
        while let Some(row) = rows
            .next()
            .map_err(|e| db_error("reading source rows", e))?
        {
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

fn read_row(row: &rusqlite::Row<'_>, width: usize) -> Result<Vec<Value>> {
    (0..width)
        .map(|i| {
            let v = row.get_ref(i).map_err(|e| db_error("reading a row", e))?;
            Ok(match v {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(n) => Value::Int(n),
                ValueRef::Real(f) => Value::Float(f),
                ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
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
            Value::Float(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Bytes(b) => ValueRef::Blob(b),
        }))
    }
}

fn db_error(context: &str, err: rusqlite::Error) -> Error {
    Error::database(format!("sqlite {context}"), err.to_string())
}
