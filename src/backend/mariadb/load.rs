//! Loading rows into MariaDB: `LOAD DATA LOCAL INFILE` of lines encoded in memory where the
//! server allows it, else multi-row `INSERT`s cut to the server's packet budget (see the
//! parent module's comment for why and when).

use std::fmt::Write as _;

use bytes::Bytes;
use futures_util::StreamExt;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Row};

use super::{db_error, decode_row, kind_of_code};
use crate::backend::LoadTarget;
use crate::dialect::{MariaDb, Schema};
use crate::error::{Error, ErrorKind, Result};
use crate::value::Value;

/// The protocol's limit on placeholders in one prepared statement.
const MAX_PARAMS: usize = 65_535;
/// Bytes per chunk handed to the driver for `LOAD DATA LOCAL` (each becomes one packet).
const INFILE_CHUNK: usize = 1 << 20;

/// One `LOAD DATA LOCAL INFILE` of `rows`, encoded in memory; fails on any warning.
pub(super) async fn load_data_local(
    conn: &mut Conn,
    target: &LoadTarget,
    rows: &[Vec<Value>],
) -> Result<u64> {
    let context = format!("loading rows into {}", target.table);
    target.check_widths(rows)?;
    let chunks = encode_lines(rows);
    conn.set_infile_handler(async move {
        Ok(futures_util::stream::iter(chunks.into_iter().map(Ok)).boxed())
    });
    let sql = MariaDb.load_data_local(&target.table, &target.columns);
    conn.query_drop(sql)
        .await
        .map_err(|e| db_error(&context, &e))?;
    let loaded = conn.affected_rows();
    if conn.get_warnings() > 0 {
        let shown: Vec<Row> = conn
            .query(MariaDb.warnings_query())
            .await
            .map_err(|e| db_error(&context, &e))?;
        let mut messages = Vec::new();
        let mut kind = ErrorKind::Other;
        for row in shown {
            let fields = decode_row(row)?;
            // Level, Code, Message: the first warning whose code has a kind gives the error's.
            if kind == ErrorKind::Other {
                let code = fields.get(1).and_then(Value::as_i64);
                kind = code
                    .and_then(|c| u16::try_from(c).ok())
                    .map_or(ErrorKind::Other, kind_of_code);
            }
            let fields: Vec<String> = fields.iter().map(Value::to_string).collect();
            messages.push(fields.join(" "));
        }
        return Err(Error::database_of(
            kind,
            format!("mariadb {context}"),
            format!(
                "the server reported warnings, so the load is refused: {}",
                messages.join("; ")
            ),
        ));
    }
    if loaded != rows.len() as u64 {
        return Err(Error::database(
            format!("mariadb {context}"),
            format!("{} rows sent but the server took {loaded}", rows.len()),
        ));
    }
    Ok(loaded)
}

/// `rows` as the lines of [`MariaDb::load_data_local`], in chunks of about [`INFILE_CHUNK`].
fn encode_lines(rows: &[Vec<Value>]) -> Vec<Bytes> {
    let mut chunks = Vec::new();
    let mut buf: Vec<u8> = Vec::with_capacity(INFILE_CHUNK + 4096);
    let mut number = String::new();
    for row in rows {
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                buf.push(b'\t');
            }
            let bytes = match v {
                Value::Null => None,
                Value::Text(s) => Some(s.as_bytes()),
                Value::Bytes(b) | Value::TextBytes(b) => Some(b.as_slice()),
                Value::Int(n) => {
                    number.clear();
                    // Writing to a String cannot fail.
                    let _ = write!(number, "{n}");
                    Some(number.as_bytes())
                }
                // Not reached: batches with floats take the INSERT path.
                Value::Float(f) => {
                    number.clear();
                    let _ = write!(number, "{f}");
                    Some(number.as_bytes())
                }
            };
            MariaDb.load_data_field(bytes, &mut buf);
        }
        buf.push(b'\n');
        if buf.len() >= INFILE_CHUNK {
            chunks.push(Bytes::from(std::mem::replace(
                &mut buf,
                Vec::with_capacity(INFILE_CHUNK + 4096),
            )));
        }
    }
    if !buf.is_empty() {
        chunks.push(Bytes::from(buf));
    }
    chunks
}

/// Multi-row INSERTs, each under the byte budget and the placeholder limit.
pub(super) async fn insert_rows(
    conn: &mut Conn,
    budget: usize,
    target: &LoadTarget,
    rows: &[Vec<Value>],
) -> Result<u64> {
    let width = target.columns.len().max(1);
    let max_rows = (MAX_PARAMS / width).clamp(1, 1_000);
    let context = format!("loading rows into {}", target.table);
    let mut loaded = 0;
    let mut start = 0;
    while start < rows.len() {
        let mut end = start;
        let mut bytes = 0;
        while end < rows.len() && end - start < max_rows {
            let size: usize = rows[end].iter().map(value_size).sum::<usize>() + 8 * width;
            if end > start && bytes + size > budget {
                break;
            }
            bytes += size;
            end += 1;
        }
        let chunk = &rows[start..end];
        let sql = MariaDb.insert_values(&target.table, &target.columns, chunk.len());
        let params: Vec<mysql_async::Value> = chunk.iter().flatten().map(to_mysql).collect();
        conn.exec_drop(sql, params)
            .await
            .map_err(|e| db_error(&context, &e))?;
        loaded += conn.affected_rows();
        start = end;
    }
    Ok(loaded)
}

fn value_size(v: &Value) -> usize {
    match v {
        Value::Text(s) => s.len(),
        Value::Bytes(b) | Value::TextBytes(b) => b.len(),
        _ => 8,
    }
}

fn to_mysql(v: &Value) -> mysql_async::Value {
    match v {
        Value::Null => mysql_async::Value::NULL,
        Value::Int(i) => mysql_async::Value::Int(*i),
        Value::Float(f) => mysql_async::Value::Double(*f),
        Value::Text(s) => mysql_async::Value::Bytes(s.as_bytes().to_vec()),
        Value::Bytes(b) | Value::TextBytes(b) => mysql_async::Value::Bytes(b.clone()),
    }
}
