//! Loading rows into PostgreSQL: `COPY … FROM STDIN (FORMAT binary)` when every target column
//! has a type encoded here ([`binary_encoded`]), else multi-row `INSERT`s whose unusual
//! parameters travel as text for the server to parse.

use std::pin::pin;

use bytes::BytesMut;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{to_sql_checked, Format, IsNull, ToSql, Type};
use tokio_postgres::Client;

use super::db_error;
use super::typed_binary;
use crate::backend::LoadTarget;
use crate::dialect::{Postgres, Schema};
use crate::error::Result;
use crate::value::Value;

/// PostgreSQL's limit on bind parameters per statement (a 16-bit count).
const MAX_PARAMS: usize = 65_535;

/// The types of `target`'s columns, in its column order.
pub(super) async fn load_types(client: &Client, target: &LoadTarget) -> Result<Vec<Type>> {
    // Describing a one-row INSERT yields the target columns' types without running anything.
    let probe = Postgres.insert_values(&target.table, &target.columns, 1);
    Ok(client
        .prepare(&probe)
        .await
        .map_err(|e| db_error(&format!("loading rows into {}", target.table), &e))?
        .params()
        .to_vec())
}

pub(super) async fn load(
    client: &Client,
    target: &LoadTarget,
    types: &[Type],
    rows: &[Vec<Value>],
) -> Result<u64> {
    target.check_widths(rows)?;
    let context = format!("loading rows into {}", target.table);
    if types.iter().all(binary_encoded) {
        copy_binary(client, target, types, rows, &context).await
    } else {
        insert_batches(client, target, types, rows, &context).await
    }
}

async fn copy_binary(
    client: &Client,
    target: &LoadTarget,
    types: &[Type],
    rows: &[Vec<Value>],
    context: &str,
) -> Result<u64> {
    let sql = Postgres.copy_in_binary(&target.table, &target.columns);
    let sink = client
        .copy_in(&sql)
        .await
        .map_err(|e| db_error(context, &e))?;
    let mut writer = pin!(BinaryCopyInWriter::new(sink, types));
    for row in rows {
        writer
            .as_mut()
            .write_raw(row.iter().map(Param).collect::<Vec<_>>())
            .await
            .map_err(|e| db_error(context, &e))?;
    }
    writer
        .as_mut()
        .finish()
        .await
        .map_err(|e| db_error(context, &e))
}

async fn insert_batches(
    client: &Client,
    target: &LoadTarget,
    types: &[Type],
    rows: &[Vec<Value>],
    context: &str,
) -> Result<u64> {
    let width = target.columns.len().max(1);
    let per_statement = (MAX_PARAMS / width).clamp(1, 1_000);
    let mut loaded = 0;
    for chunk in rows.chunks(per_statement) {
        let sql = Postgres.insert_values(&target.table, &target.columns, chunk.len());
        let all_types: Vec<Type> = (0..chunk.len())
            .flat_map(|_| types.iter().cloned())
            .collect();
        let stmt = client
            .prepare_typed(&sql, &all_types)
            .await
            .map_err(|e| db_error(context, &e))?;
        loaded += client
            .execute_raw(&stmt, chunk.iter().flatten().map(Param).collect::<Vec<_>>())
            .await
            .map_err(|e| db_error(context, &e))?;
    }
    Ok(loaded)
}

/// Types [`Param`] writes in binary; any other goes as text for the server to parse.
fn binary_encoded(ty: &Type) -> bool {
    matches!(
        *ty,
        Type::INT2
            | Type::INT4
            | Type::INT8
            | Type::FLOAT4
            | Type::FLOAT8
            | Type::BOOL
            | Type::DATE
            | Type::TIMESTAMP
            | Type::NUMERIC
            | Type::TEXT
            | Type::VARCHAR
            | Type::BPCHAR
            | Type::NAME
            | Type::BYTEA
    )
}

/// A [`Value`] bound to a parameter of whatever type the target column has.
#[derive(Debug)]
struct Param<'a>(&'a Value);

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        let v = self.0;
        if v.is_null() {
            return Ok(IsNull::Yes);
        }
        if !binary_encoded(ty) {
            // Text format (see encode_format): the server parses it as the column's type.
            let text = v.as_text().unwrap_or_default();
            return text.as_str().to_sql(&Type::TEXT, out);
        }
        let out_of_range = || format!("value {v} does not fit a {ty} column");
        match (ty, v) {
            (&Type::INT2, _) => i16::try_from(int_of(v, ty)?)
                .map_err(|_| out_of_range())?
                .to_sql(ty, out),
            (&Type::INT4, _) => i32::try_from(int_of(v, ty)?)
                .map_err(|_| out_of_range())?
                .to_sql(ty, out),
            (&Type::INT8, _) => int_of(v, ty)?.to_sql(ty, out),
            (&Type::BOOL, Value::Text(t)) if t == "true" || t == "false" => {
                (t == "true").to_sql(ty, out)
            }
            (&Type::BOOL, _) => (int_of(v, ty)? != 0).to_sql(ty, out),
            (&Type::DATE | &Type::TIMESTAMP | &Type::NUMERIC, _) => {
                let text = v.as_text().unwrap_or_default();
                typed_binary::encode(ty, &text, out).ok_or_else(|| {
                    format!("value '{text}' is not a canonical {ty} for a {ty} column")
                })?;
                Ok(IsNull::No)
            }
            (&Type::FLOAT4, _) => (float_of(v, ty)? as f32).to_sql(ty, out),
            (&Type::FLOAT8, _) => float_of(v, ty)?.to_sql(ty, out),
            (&Type::BYTEA, Value::Bytes(b)) => b.as_slice().to_sql(ty, out),
            (_, Value::Bytes(b) | Value::TextBytes(b)) => utf8_of(b, ty)?.to_sql(ty, out),
            _ => v.as_text().unwrap_or_default().as_str().to_sql(ty, out),
        }
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    fn encode_format(&self, ty: &Type) -> Format {
        if binary_encoded(ty) {
            Format::Binary
        } else {
            Format::Text
        }
    }

    to_sql_checked!();
}

fn int_of(v: &Value, ty: &Type) -> std::result::Result<i64, String> {
    v.as_i64()
        .ok_or_else(|| format!("value '{v}' is not an integer for a {ty} column"))
}

/// Bytes (a `bytea` value) as the text a text column holds: only where they are UTF-8. The
/// refusal shows them as PostgreSQL spells a bytea (`\x00ff`), not as `error::shown_bytes`'s
/// SQL literal, so the user finds the value as their database prints it.
fn utf8_of<'a>(b: &'a [u8], ty: &Type) -> std::result::Result<&'a str, String> {
    std::str::from_utf8(b).map_err(|_| {
        let shown: String = b.iter().take(16).map(|x| format!("{x:02x}")).collect();
        let more = if b.len() > 16 { "…" } else { "" };
        format!(
            "the value \\x{shown}{more} is bytes that are not UTF-8 text, which a {ty} column cannot hold: convert it in the job's `value:` (e.g. encode(v, 'hex'))"
        )
    })
}

fn float_of(v: &Value, ty: &Type) -> std::result::Result<f64, String> {
    match v {
        Value::Float(f) => Ok(*f),
        Value::Int(i) => Ok(*i as f64),
        other => other
            .as_text()
            .and_then(|t| t.trim().parse().ok())
            .ok_or_else(|| format!("value '{other}' is not a number for a {ty} column")),
    }
}
