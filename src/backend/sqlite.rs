//! SQLite through rusqlite with the bundled library: the embedded default, nothing to install.
//!
//! SQLite lets one connection step a SELECT while it INSERTs elsewhere, so the streaming
//! strategy reads and loads on the same connection, inside the one open transaction.

use std::path::Path;

use async_trait::async_trait;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::{Backend, LoadTarget, RowPipeline};
use crate::dialect::{Dialect, Sqlite};
use crate::error::{Error, Result};
use crate::value::Value;

/// SQLite's default limit on bound parameters per statement (SQLITE_MAX_VARIABLE_NUMBER).
const MAX_PARAMS: usize = 32_766;
/// Wide rows collected before a load: big enough to amortise, small enough to keep memory flat.
const BATCH_ROWS: usize = 2_000;

pub struct SqliteBackend {
    conn: Connection,
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
            Error::Connect(format!("cannot open SQLite database {}: {e}", path.display()))
        })?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| db_error("setting busy timeout", e))?;
        Ok(SqliteBackend { conn })
    }

    /// An in-memory database, for tests and examples.
    pub fn in_memory() -> Result<SqliteBackend> {
        let conn = Connection::open_in_memory().map_err(|e| db_error("opening :memory:", e))?;
        Ok(SqliteBackend { conn })
    }

    fn load(&self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
        if rows.is_empty() {
            return Ok(0);
        }
        let width = target.columns.len().max(1);
        let per_statement = (MAX_PARAMS / width).clamp(1, 500);
        let mut loaded = 0u64;
        for chunk in rows.chunks(per_statement) {
            let sql = Sqlite.insert_values(&target.table, &target.columns, chunk.len());
            let mut stmt = self
                .conn
                .prepare_cached(&sql)
                .map_err(|e| db_error(&format!("preparing load into {}", target.table), e))?;
            let params = chunk.iter().flatten().map(to_sql_value);
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
        let mut stmt = self.conn.prepare(sql).map_err(|e| db_error("statement", e))?;
        let n = stmt.raw_execute().map_err(|e| db_error("statement", e))?;
        Ok(n as u64)
    }

    async fn execute_script(&mut self, sql: &str) -> Result<()> {
        self.conn
            .execute_batch(sql)
            .map_err(|e| db_error("script", e))
    }

    async fn column_types(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        let stmt = self.conn.prepare(sql).map_err(|e| db_error("describe", e))?;
        Ok(stmt
            .columns()
            .iter()
            .map(|c| c.decl_type().map(str::to_string))
            .collect())
    }

    async fn load_rows(&mut self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
        self.load(target, rows)
    }

    async fn stream_into(
        &mut self,
        read_sql: &str,
        pipeline: &mut dyn RowPipeline,
        targets: &[LoadTarget],
    ) -> Result<Vec<u64>> {
        let mut loaded = vec![0u64; targets.len()];
        let mut stmt = self
            .conn
            .prepare(read_sql)
            .map_err(|e| db_error("reading source rows", e))?;
        let width = stmt.column_count();
        let mut rows = stmt.query([]).map_err(|e| db_error("reading source rows", e))?;
        while let Some(row) = rows.next().map_err(|e| db_error("reading source rows", e))? {
            pipeline.push(read_row(row, width)?)?;
            if pipeline.ready_rows() >= BATCH_ROWS {
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

fn to_sql_value(v: &Value) -> SqlValue {
    match v {
        Value::Null => SqlValue::Null,
        Value::Int(n) => SqlValue::Integer(*n),
        Value::Float(f) => SqlValue::Real(*f),
        Value::Text(s) => SqlValue::Text(s.clone()),
        Value::Bytes(b) => SqlValue::Blob(b.clone()),
    }
}

fn db_error(context: &str, err: rusqlite::Error) -> Error {
    Error::database(format!("sqlite {context}"), err.to_string())
}
