//! PostgreSQL through tokio-postgres: a thin adapter that runs the dialect's text.
//!
//! Reads use the simple (text) protocol, with each column mapped by the type the server
//! reports when the statement is described: integers and floats are parsed, `bool` becomes
//! 0/1, `bytea` its bytes, and everything else (numeric, dates, json, …) keeps the server's
//! own text rendering, which is exact and needs no per-type decoder here. The large reads
//! (discovery's scan, the stream's ordered read) take the same text through `COPY (…) TO
//! STDOUT`, which spares the client a third of its CPU per row (one buffer per row instead of
//! a row object with per-column offsets and checks).
//!
//! Loads use `COPY … FROM STDIN (FORMAT binary)` when every target column has a type encoded
//! here, else a multi-row `INSERT` whose unusual parameters travel as text for the server to
//! parse ([`load`]). The streaming strategy reads on a second connection, because the first
//! is busy holding the load's transaction.

mod connect;
mod load;
mod monitor;
mod typed_binary;

use std::collections::HashMap;
use std::pin::pin;

use async_trait::async_trait;
use futures_util::StreamExt;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, SimpleQueryMessage};

use super::connection::open_asking;
use super::read_ahead::{ReadAhead, RowSender};
use super::watch::{self, SessionWatch};
use super::{Backend, ConnectOptions, LoadTarget};
use crate::dialect::{Dialect, Postgres, SessionSql};
use crate::error::{Error, ErrorKind, Result};
use crate::value::Value;

/// Wide rows per streamed load at the most ([`super::flush_rows`]).
const MAX_FLUSH_ROWS: usize = 50_000;

pub struct PostgresBackend {
    client: Client,
    /// Kept to open the second (reading) connection for the streaming strategy.
    target: connect::PgTarget,
    /// Column types of the tables loaded since the last statement (see [`load_types`]): a
    /// stream loads one table many times, and describing it each time is a round trip.
    load_types: HashMap<String, Vec<Type>>,
    /// The lock timeout and backend pid, once [`Backend::set_lock_timeout`] ran.
    session: SessionWatch,
    /// Planner settings each read connection takes ([`Backend::set_read_settings`]).
    read_settings: Vec<String>,
}

pub async fn connect(text: &str, options: &ConnectOptions) -> Result<Box<dyn Backend>> {
    let mut target = connect::parse(text, options)?;
    let client = open_asking(&mut target).await?;
    Ok(Box::new(PostgresBackend {
        client,
        target,
        load_types: HashMap::new(),
        session: SessionWatch::default(),
        read_settings: Vec::new(),
    }))
}

#[async_trait]
impl Backend for PostgresBackend {
    fn dialect(&self) -> &'static dyn Dialect {
        &Postgres
    }

    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Value>>> {
        self.load_types.clear();
        let (types, messages) = self
            .watched(sql, "query", fetch_all(&self.client, sql))
            .await?;
        decode_all(&types, messages)
    }

    async fn execute(&mut self, sql: &str) -> Result<u64> {
        // Any statement may change a table's columns: describe loads again after it.
        self.load_types.clear();
        let messages = self
            .watched(sql, "statement", self.client.simple_query(sql))
            .await?;
        Ok(messages
            .iter()
            .map(|m| match m {
                SimpleQueryMessage::CommandComplete(n) => *n,
                _ => 0,
            })
            .sum())
    }

    async fn execute_script(&mut self, sql: &str) -> Result<()> {
        self.load_types.clear();
        self.watched(sql, "script", self.client.batch_execute(sql))
            .await
    }

    async fn column_types(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        let stmt = self
            .watched(sql, "describe", self.client.prepare(sql))
            .await?;
        Ok(stmt
            .columns()
            .iter()
            .map(|c| Some(type_name(c.type_(), c.type_modifier())))
            .collect())
    }

    async fn load_rows(&mut self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
        if rows.is_empty() {
            return Ok(0);
        }
        let key = format!("{}\u{0}{}", target.table, target.columns.join("\u{0}"));
        let types = match self.load_types.get(&key) {
            Some(types) => types.clone(),
            None => {
                let types = load::load_types(&self.client, target).await?;
                self.load_types.insert(key, types.clone());
                types
            }
        };
        load::load(&self.client, target, &types, rows).await
    }

    fn read_ahead(&mut self, read_sql: &str) -> Result<ReadAhead> {
        Ok(self.start_read(read_sql))
    }

    fn max_flush_rows(&self) -> usize {
        MAX_FLUSH_ROWS
    }

    fn set_read_settings(&mut self, settings: Vec<String>) -> Result<()> {
        self.read_settings = settings;
        Ok(())
    }

    async fn set_lock_timeout(&mut self, timeout: std::time::Duration) -> Result<Vec<String>> {
        self.session = watch::start_session(self, timeout).await?;
        Ok(self.session.statements.clone())
    }
}

impl PostgresBackend {
    /// The ordered read, on a second connection: the first is busy holding the load's
    /// transaction, and a separate task lets the read run while batches load. It waits for
    /// locks no longer than the first, and plans with the settings the run chose for it.
    fn start_read(&self, read_sql: &str) -> ReadAhead {
        let target = self.target.clone();
        let mut settings = self
            .session
            .timeout
            .map(|t| Postgres.lock_timeout(t))
            .unwrap_or_default();
        settings.extend(self.read_settings.iter().cloned());
        ReadAhead::spawn(read_sql, |sql, mut rows| async move {
            let outcome = read_rows(&target, &settings, &sql, &mut rows).await;
            (rows, outcome)
        })
    }
}

/// Run `sql` on a new connection, handing every row to `rows` until it stops listening.
async fn read_rows(
    target: &connect::PgTarget,
    settings: &[String],
    sql: &str,
    rows: &mut RowSender,
) -> Result<()> {
    let context = "reading source rows";
    let reader = connect::open(target).await?;
    for setting in settings {
        reader
            .batch_execute(setting)
            .await
            .map_err(|e| db_error(context, &e))?;
    }
    let types = describe(&reader, sql, context).await?;
    let copy = format!("COPY ({sql}) TO STDOUT");
    let mut stream = pin!(reader
        .copy_out(copy.as_str())
        .await
        .map_err(|e| db_error(context, &e))?);
    let mut framed = CopyRows::default();
    while let Some(data) = stream.next().await {
        let data = data.map_err(|e| db_error(context, &e))?;
        for line in framed.push(&data) {
            if !rows.push(copy_row(line, &types)?).await {
                return Ok(());
            }
        }
    }
    framed.finish()
}

/// The rows of COPY's text output, cut from the messages that carry it. The server sends one
/// row per message, but nothing here relies on it: a row is what ends in a raw newline (one
/// inside a value is escaped), and an unfinished one waits for the next message.
#[derive(Default)]
struct CopyRows {
    buf: Vec<u8>,
    /// Bytes of `buf` that end in a newline: the rows the last `push` handed out.
    complete: usize,
}

impl CopyRows {
    /// Take one message; the rows it completes, each without its newline. An empty row is a
    /// row (one column holding '').
    fn push(&mut self, data: &[u8]) -> impl Iterator<Item = &[u8]> {
        self.buf.drain(..self.complete);
        self.buf.extend_from_slice(data);
        self.complete = self
            .buf
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |end| end + 1);
        let rows = self.complete.checked_sub(1).map(|end| &self.buf[..end]);
        rows.into_iter()
            .flat_map(|rows| rows.split(|&b| b == b'\n'))
    }

    /// The output ended: an unfinished row is an error, never dropped.
    fn finish(&self) -> Result<()> {
        match self.buf.len() - self.complete {
            0 => Ok(()),
            left => Err(copy_error(format!(
                "the COPY output ended inside a row ({left} bytes)"
            ))),
        }
    }
}

fn copy_error(what: String) -> Error {
    Error::database("postgres reading source rows", what)
}

/// One line of `COPY … TO STDOUT` (text format) decoded like a text-protocol row: fields
/// split on tabs, `\N` is NULL, backslash escapes undone, then [`decode_text`] by type. The
/// text comes from the same output functions, so the values are the simple protocol's exactly.
fn copy_row(line: &[u8], types: &[Type]) -> Result<Vec<Value>> {
    let bad = copy_error;
    // Checked once per row: undoing the server's escapes (all ASCII) keeps it UTF-8.
    let line =
        std::str::from_utf8(line).map_err(|e| bad(format!("a COPY row is not UTF-8: {e}")))?;
    let mut values = Vec::with_capacity(types.len());
    for field in line.split('\t') {
        let Some(ty) = types.get(values.len()) else {
            return Err(bad(format!(
                "a COPY row has more fields than the query's {} columns",
                types.len()
            )));
        };
        let value = if field == "\\N" {
            Value::Null
        } else if field.contains('\\') {
            let text = String::from_utf8(copy_unescape(field.as_bytes()))
                .map_err(|e| bad(format!("a COPY field is not UTF-8: {e}")))?;
            decode_text(Some(&text), ty)?
        } else {
            decode_text(Some(field), ty)?
        };
        values.push(value);
    }
    if values.len() != types.len() {
        return Err(bad(format!(
            "a COPY row has {} fields, the query {} columns",
            values.len(),
            types.len()
        )));
    }
    Ok(values)
}

/// COPY's text escapes undone: `\\`, `\b \f \n \r \t \v`, octal `\123` and hex `\x1F`
/// (the server writes only the first kinds; the rest are what the format allows), and a
/// backslash before any other byte stands for that byte.
fn copy_unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut bytes = field.iter().copied().peekable();
    let digits = |bytes: &mut std::iter::Peekable<_>, radix: u32, first: u32| {
        let mut code = first;
        for _ in 0..2 {
            match bytes
                .peek()
                .and_then(|&d: &u8| char::from(d).to_digit(radix))
            {
                Some(d) => {
                    code = code * radix + d;
                    bytes.next();
                }
                None => break,
            }
        }
        (code & 0xff) as u8
    };
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let Some(e) = bytes.next() else {
            out.push(b'\\');
            break;
        };
        out.push(match e {
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0b,
            b'0'..=b'7' => digits(&mut bytes, 8, u32::from(e - b'0')),
            b'x' if bytes.peek().is_some_and(u8::is_ascii_hexdigit) => digits(&mut bytes, 16, 0),
            other => other,
        });
    }
    out
}

/// The result column types of `sql`, from describing it without running it.
async fn describe(client: &Client, sql: &str, context: &str) -> Result<Vec<Type>> {
    let stmt = client
        .prepare(sql)
        .await
        .map_err(|e| db_error(context, &e))?;
    Ok(stmt.columns().iter().map(|c| c.type_().clone()).collect())
}

/// A query's column types and its text-protocol messages, still undecoded.
async fn fetch_all(
    client: &Client,
    sql: &str,
) -> std::result::Result<(Vec<Type>, Vec<SimpleQueryMessage>), tokio_postgres::Error> {
    let stmt = client.prepare(sql).await?;
    let types = stmt.columns().iter().map(|c| c.type_().clone()).collect();
    Ok((types, client.simple_query(sql).await?))
}

fn decode_all(types: &[Type], messages: Vec<SimpleQueryMessage>) -> Result<Vec<Vec<Value>>> {
    let mut out = Vec::new();
    for message in messages {
        if let SimpleQueryMessage::Row(row) = message {
            out.push(
                (0..types.len())
                    .map(|i| decode_text(row.get(i), &types[i]))
                    .collect::<Result<Vec<_>>>()?,
            );
        }
    }
    Ok(out)
}

/// One text-protocol cell, typed by what the server said the column is.
fn decode_text(text: Option<&str>, ty: &Type) -> Result<Value> {
    let Some(text) = text else {
        return Ok(Value::Null);
    };
    let bad = |what: &str| {
        Error::database(
            "postgres reading a row",
            format!("{what} '{text}' of type {ty}"),
        )
    };
    Ok(match *ty {
        Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => {
            Value::Int(text.parse().map_err(|_| bad("unparsable integer"))?)
        }
        // A real read as a real, then widened: the double nearest its text is another value.
        Type::FLOAT4 => Value::Float(f64::from(
            text.parse::<f32>().map_err(|_| bad("unparsable float"))?,
        )),
        Type::FLOAT8 => Value::Float(text.parse().map_err(|_| bad("unparsable float"))?),
        Type::BOOL => Value::Int(i64::from(text == "t")),
        Type::BYTEA => Value::Bytes(decode_bytea_hex(text).ok_or_else(|| bad("unparsable bytea"))?),
        _ => Value::Text(text.to_string()),
    })
}

/// `\x0a1b…` (bytea_output = hex, the default since 9.0).
fn decode_bytea_hex(text: &str) -> Option<Vec<u8>> {
    let hex = text.strip_prefix("\\x")?;
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A type as CREATE TABLE accepts it, with length or precision where the typmod gives one.
fn type_name(ty: &Type, typmod: i32) -> String {
    match *ty {
        Type::INT2 => "smallint".into(),
        Type::INT4 => "integer".into(),
        Type::INT8 => "bigint".into(),
        Type::FLOAT4 => "real".into(),
        Type::FLOAT8 => "double precision".into(),
        Type::BOOL => "boolean".into(),
        Type::VARCHAR if typmod > 4 => format!("varchar({})", typmod - 4),
        Type::BPCHAR if typmod > 4 => format!("char({})", typmod - 4),
        Type::NUMERIC if typmod > 4 => {
            let m = typmod - 4;
            format!("numeric({},{})", (m >> 16) & 0xffff, m & 0xffff)
        }
        // A bit string's typmod is its length; unnamed, `bit` is bit(1) and a key of
        // bit(4) made a target that refused every key ("bit string length 4 does not match").
        Type::BIT if typmod > 0 => format!("bit({typmod})"),
        Type::VARBIT if typmod > 0 => format!("bit varying({typmod})"),
        Type::VARCHAR => "varchar".into(),
        Type::BPCHAR => "char".into(),
        _ => ty.name().to_string(),
    }
}

/// The server's message with its detail and hint, without the client's generic prefix.
fn message(err: &tokio_postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => {
            if let Some(m) = created_meanwhile(db) {
                return m;
            }
            let mut m = format!(
                "{}: {} (SQLSTATE {})",
                db.severity(),
                db.message(),
                db.code().code()
            );
            if let Some(detail) = db.detail() {
                m.push_str(&format!("; {detail}"));
            }
            if let Some(hint) = db.hint() {
                m.push_str(&format!("; hint: {hint}"));
            }
            if *db.code() == SqlState::PROGRAM_LIMIT_EXCEEDED {
                // program_limit_exceeded: `row is too big`, too many columns.
                m.push_str(
                    "; a row must fit PostgreSQL's 8160-byte page limit (at most 18 bytes per \
                     non-null long cell): set target.split: auto to spread the columns over several tables",
                );
            }
            m
        }
        None => {
            let mut m = err.to_string();
            if let Some(source) = std::error::Error::source(err) {
                m.push_str(&format!(": {source}"));
            }
            m
        }
    }
}

/// Two sessions creating the same table at once: the one that commits second does not get
/// `relation already exists` but a unique violation on the system catalogs' own indexes
/// (`pg_type_typname_nsp_index`), which names nothing the user wrote. Said plainly instead.
fn created_meanwhile(db: &tokio_postgres::error::DbError) -> Option<String> {
    let catalog = db.constraint()?;
    if *db.code() != SqlState::UNIQUE_VIOLATION
        || !["pg_type_typname_nsp_index", "pg_class_relname_nsp_index"].contains(&catalog)
    {
        return None;
    }
    // `Key (typname, typnamespace)=(kv_wide, 2200) already exists.`
    let name = db
        .detail()
        .and_then(|d| d.split(")=(").nth(1))
        .and_then(|rest| rest.split(',').next())
        .unwrap_or("the target");
    Some(format!(
        "another run or session created table {name} at the same time (SQLSTATE 23505 on {catalog}); \
         run again once it has finished, or choose target.if_exists"
    ))
}

fn db_error(context: &str, err: &tokio_postgres::Error) -> Error {
    Error::database_of(kind_of(err), format!("postgres {context}"), message(err))
}

/// The kind of a server error, by its SQLSTATE. A unique violation on the system catalogs
/// ([`created_meanwhile`]) is no key of the user's.
pub(super) fn kind_of(err: &tokio_postgres::Error) -> ErrorKind {
    let Some(db) = err.as_db_error() else {
        return ErrorKind::Other;
    };
    let code = db.code();
    if *code == SqlState::UNIQUE_VIOLATION && created_meanwhile(db).is_none() {
        ErrorKind::UniqueViolation
    } else if *code == SqlState::NOT_NULL_VIOLATION {
        ErrorKind::NotNullViolation
    } else if *code == SqlState::LOCK_NOT_AVAILABLE {
        // `SET lock_timeout` expired.
        ErrorKind::LockTimeout
    } else {
        ErrorKind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cells_are_typed_by_the_column() {
        assert_eq!(
            decode_text(Some("42"), &Type::INT4).unwrap(),
            Value::Int(42)
        );
        assert_eq!(decode_text(Some("t"), &Type::BOOL).unwrap(), Value::Int(1));
        assert_eq!(
            decode_text(Some("\\x00ff"), &Type::BYTEA).unwrap(),
            Value::Bytes(vec![0, 255])
        );
        assert_eq!(
            decode_text(Some("1.50"), &Type::NUMERIC).unwrap(),
            Value::Text("1.50".into())
        );
        assert_eq!(decode_text(None, &Type::TEXT).unwrap(), Value::Null);
    }

    /// COPY's text format as the server writes it: `\N` only for NULL, the text `\N` with its
    /// backslash doubled, control characters and tabs escaped, bytea's hex doubled.
    #[test]
    fn copy_rows_decode_like_the_text_protocol() {
        let types = [Type::TEXT, Type::INT8, Type::BOOL, Type::BYTEA, Type::TEXT];
        let row = |line: &[u8]| copy_row(line, &types);
        assert_eq!(
            row(b"a\\tb\\nc\\\\N\t-42\tf\t\\\\x00ff\t\\N").unwrap(),
            vec![
                Value::Text("a\tb\nc\\N".into()),
                Value::Int(-42),
                Value::Int(0),
                Value::Bytes(vec![0, 255]),
                Value::Null,
            ]
        );
        assert_eq!(
            row("\\\\N\t1\tt\t\\\\x\tGrüße\\r\\b\\f\\v\u{1}".as_bytes()).unwrap(),
            vec![
                Value::Text("\\N".into()),
                Value::Int(1),
                Value::Int(1),
                Value::Bytes(vec![]),
                Value::Text("Grüße\r\u{8}\u{c}\u{b}\u{1}".into()),
            ]
        );
        // The format's other escapes, which this server does not write.
        assert_eq!(copy_unescape(b"\\101\\x42\\q\\"), b"ABq\\".to_vec());
        for wrong in [
            &b"a\t1\tt\t\\N"[..],
            b"a\t1\tt\t\\N\tb\tc",
            b"\xff\t1\tt\t\\N\tb",
        ] {
            assert!(row(wrong).is_err(), "{}", String::from_utf8_lossy(wrong));
        }
    }

    /// Rows split across messages, several in one message, empty rows, and an unfinished end.
    #[test]
    fn copy_rows_are_cut_at_newlines_whatever_the_messages() {
        let mut framed = CopyRows::default();
        let rows = |framed: &mut CopyRows, data: &[u8]| -> Vec<Vec<u8>> {
            framed.push(data).map(<[u8]>::to_vec).collect()
        };
        assert_eq!(rows(&mut framed, b"a\tb"), Vec::<Vec<u8>>::new());
        assert_eq!(
            rows(&mut framed, b"c\n\nd\te\nf"),
            vec![b"a\tbc".to_vec(), vec![], b"d\te".to_vec()]
        );
        assert!(framed.finish().is_err());
        assert_eq!(rows(&mut framed, b"\n"), vec![b"f".to_vec()]);
        assert!(framed.finish().is_ok());
        assert_eq!(rows(&mut framed, b"\n"), vec![Vec::<u8>::new()]);
        assert!(framed.finish().is_ok());
    }

    #[test]
    fn typmods_become_lengths() {
        assert_eq!(type_name(&Type::VARCHAR, 104), "varchar(100)");
        assert_eq!(
            type_name(&Type::NUMERIC, ((10 << 16) | 2) + 4),
            "numeric(10,2)"
        );
        assert_eq!(type_name(&Type::INT4, -1), "integer");
        assert_eq!(type_name(&Type::BIT, 4), "bit(4)");
        assert_eq!(type_name(&Type::VARBIT, 8), "bit varying(8)");
        assert_eq!(type_name(&Type::VARBIT, -1), "varbit");
    }
}
