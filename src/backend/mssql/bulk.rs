//! Wide rows into SQL Server through the bulk-load protocol (`INSERT BULK`, then one TDS
//! BulkLoad message of ROW tokens), on the load's own connection and inside its open
//! transaction.
//!
//! Why bulk: a parameterised `INSERT … VALUES` carries at most 2,100 parameters and 1,000
//! rows, so a wide table needs many `sp_executesql` round trips per batch, each parsed and
//! converted by the server; a bulk load sends the whole batch as typed rows in one message.
//!
//! Bulk rows are typed by the client: each cell must already be the exact TDS type of its
//! column, as the server describes it (`SELECT TOP 0 …`, read through tiberius), where a
//! bound parameter lets the server convert. So a batch goes by bulk only when that is
//! exact, and otherwise by the parameterised INSERT ([`Route::Insert`] says why):
//! - tiberius's identifier guard refuses the table name or a quoted column name (control
//!   characters, or a table written with `"…"` quotes): nothing has been sent yet;
//! - a column is of a type mapped here only approximately or not at all (dates, decimals,
//!   `NCHAR`, `NVARCHAR(2001…4000)`, which tiberius would declare as `nvarchar(max)`), is
//!   read-only, or is not the column asked for;
//! - a value does not convert exactly: an integer outside its column's width, a float into
//!   a column of another type than float or text (into text it goes as its shortest exact
//!   decimal digits, as the INSERT binds it: the server's own print keeps 6), text longer
//!   than its column (or, for `NVARCHAR(MAX)`,
//!   over 8,000 bytes: real servers refuse those from tiberius, its issue #322), non-ASCII
//!   text for a `VARCHAR` column, NULL for a `NOT NULL` column (the INSERT then gets the
//!   server's own error).
//!
//! The load runs with `CHECK_CONSTRAINTS`, `KEEP_NULLS` and `FIRE_TRIGGERS`, so a bulk
//! batch stores and checks exactly what the INSERT would have (NULL stays NULL where a
//! column has a default, constraints stay trusted, triggers fire), and needs no permission
//! beyond the INSERT's (and SELECT, for the metadata query): without those options SQL
//! Server asks for ALTER TABLE.
//!
//! The column types are read for every batch, so the check is against the table as it is;
//! tiberius then reads them once more itself before `INSERT BULK`: two short round trips per
//! batch of up to 2,000 rows.

use crate::dialect::prelude::*;
use std::borrow::Cow;
use std::fmt;

use tiberius::error::Error as TdsError;
use tiberius::{
    ColumnData, FixedLenType, MetaDataColumn, SqlBulkCopyOption, SqlBulkCopyOptions, TokenRow,
    TypeInfo, Uuid, VarLenContext, VarLenType,
};

use super::{db_error, TdsClient};
use crate::backend::LoadTarget;
use crate::dialect::MsSql;
use crate::error::Result;
use crate::value::Value;

/// The longest `MAX`-typed value sent by bulk load, in bytes (see `var_len_kind`).
const MAX_BULK_TEXT_BYTES: usize = 8_000;

/// How one batch is loaded; bulk rows borrow the batch's text and bytes.
#[derive(Debug)]
pub(super) enum Route<'a> {
    Bulk(Vec<TokenRow<'a>>),
    /// Why not bulk, and how each column's values are bound (all [`Param::AsIs`] where the
    /// server could not describe the columns).
    Insert(Fallback, Vec<Param>),
}

/// How the parameterised INSERT binds a value for one column, so that the server's implicit
/// conversion can neither round nor misread it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Param {
    AsIs,
    /// A text column: a float goes as its exact decimal text, not as a FLOAT the server
    /// would print with 6 significant digits (CAST and CONVERT's style 0).
    Text,
    /// `DATETIME`/`SMALLDATETIME`: text goes through `DATETIME2`, which reads
    /// `yyyy-mm-dd hh:mm:ss` whatever the session's `DATEFORMAT`, where these two types read
    /// it as year-day-month under a `dmy` login language (British, German, French, …).
    DateTime,
    /// `DATETIMEOFFSET`: text goes through an explicit CAST: Babelfish converts no text to it
    /// implicitly (`column "e" is of type datetimeoffset but expression is of type "varchar"`).
    DateTimeOffset,
}

impl Param {
    /// The type a text parameter is cast to first, where it is not bound as it is.
    pub(super) fn text_cast(self) -> Option<&'static str> {
        match self {
            Param::DateTime => Some("DATETIME2(7)"),
            Param::DateTimeOffset => Some("DATETIMEOFFSET(7)"),
            Param::AsIs | Param::Text => None,
        }
    }
}

/// Each column's [`Param`], from the server's description of the target.
fn params(metadata: &[MetaDataColumn<'_>], width: usize) -> Vec<Param> {
    if metadata.len() != width {
        return vec![Param::AsIs; width];
    }
    metadata
        .iter()
        .map(|meta| match meta.base().ty() {
            TypeInfo::FixedLen(FixedLenType::Datetime | FixedLenType::Datetime4) => Param::DateTime,
            TypeInfo::VarLenSized(cx) => match cx.r#type() {
                VarLenType::Datetimen => Param::DateTime,
                VarLenType::DatetimeOffsetn => Param::DateTimeOffset,
                VarLenType::NVarchar
                | VarLenType::NChar
                | VarLenType::BigVarChar
                | VarLenType::BigChar
                | VarLenType::Text
                | VarLenType::NText => Param::Text,
                _ => Param::AsIs,
            },
            _ => Param::AsIs,
        })
        .collect()
}

/// Why a batch goes by the parameterised INSERT instead; said in that INSERT's errors.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Fallback {
    /// tiberius's identifier guard refused the table or a column name.
    Identifier,
    /// The server described another number of columns than were asked for.
    Columns { described: usize, asked: usize },
    /// The named column cannot take bulk rows exactly.
    Column(String),
    /// A value for the named column does not convert exactly.
    Value(String),
    /// A row of this many values for a narrower or wider table.
    RowWidth(usize),
}

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fallback::Identifier => {
                f.write_str("tiberius refuses the table or a column name for a bulk load")
            }
            Fallback::Columns { described, asked } => write!(
                f,
                "the server described {described} columns for the {asked} to load"
            ),
            Fallback::Column(name) => write!(
                f,
                "column '{name}' is read-only or of a type a bulk load would not fill exactly"
            ),
            Fallback::Value(name) => write!(
                f,
                "a value for column '{name}' needs the server's own conversion"
            ),
            Fallback::RowWidth(n) => write!(f, "a row of {n} values"),
        }
    }
}

/// What a target column takes in a bulk row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An integer of this many bytes (`TINYINT` 1 is unsigned).
    Int(u8),
    Bit,
    /// `REAL` (4) or `FLOAT` (8).
    Float(u8),
    /// `NVARCHAR` of at most this many bytes (UTF-16).
    NText(usize),
    /// `VARCHAR`/`CHAR` of at most this many bytes, in an ASCII-compatible code page.
    Ascii(usize),
    /// `VARBINARY`/`BINARY` of at most this many bytes.
    Binary(usize),
    Guid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    kind: Kind,
    /// A fixed-length TDS type: the column is `NOT NULL` and the value has no length.
    fixed: bool,
    nullable: bool,
}

fn options() -> SqlBulkCopyOptions {
    SqlBulkCopyOption::CheckConstraints
        | SqlBulkCopyOption::KeepNulls
        | SqlBulkCopyOption::FireTriggers
}

fn quoted_columns(target: &LoadTarget) -> Vec<String> {
    target
        .columns
        .iter()
        .map(|c| MsSql.quote_ident(c))
        .collect()
}

/// Decide how `rows` go into `target`: asks the server for the column types (one
/// `SELECT TOP 0`, skipped when tiberius's guard already refuses a name) and converts every
/// cell; the batch is bulk only when all of it converts exactly.
pub(super) async fn route<'a>(
    client: &mut TdsClient,
    target: &LoadTarget,
    rows: &'a [Vec<Value>],
) -> Result<Route<'a>> {
    let table = target.table.sql();
    let quoted = quoted_columns(target);
    let names: Vec<&str> = quoted.iter().map(String::as_str).collect();
    let metadata = match client.column_metadata(&table, &names).await {
        Ok(metadata) => metadata,
        Err(TdsError::BulkInput(_)) => {
            let as_is = vec![Param::AsIs; target.columns.len()];
            return Ok(Route::Insert(Fallback::Identifier, as_is));
        }
        Err(e) => {
            let context = format!("reading the column types of {table} for a bulk load");
            return Err(db_error(&context, e));
        }
    };
    let params = params(&metadata, target.columns.len());
    let slots = match slots(&metadata, &target.columns) {
        Ok(slots) => slots,
        Err(why) => return Ok(Route::Insert(why, params)),
    };
    Ok(match bulk_rows(&slots, &target.columns, rows) {
        Ok(rows) => Route::Bulk(rows),
        Err(why) => Route::Insert(why, params),
    })
}

/// Send `rows` (already converted by [`route`]) as one bulk load; the rows the server stored.
pub(super) async fn load(
    client: &mut TdsClient,
    target: &LoadTarget,
    rows: Vec<TokenRow<'_>>,
) -> Result<u64> {
    let table = target.table.sql();
    let quoted = quoted_columns(target);
    let names: Vec<&str> = quoted.iter().map(String::as_str).collect();
    let context = format!("bulk loading rows into {table}");
    let fail = |e| db_error(&context, e);
    let mut request = client
        .bulk_insert_with_options(&table, &names, options(), &[])
        .await
        .map_err(fail)?;
    for row in rows {
        request.send(row).await.map_err(fail)?;
    }
    Ok(request.finalize().await.map_err(fail)?.total())
}

/// One slot per asked-for column, in order, or why the table cannot take bulk rows.
fn slots(metadata: &[MetaDataColumn<'_>], columns: &[String]) -> Result<Vec<Slot>, Fallback> {
    if metadata.len() != columns.len() {
        return Err(Fallback::Columns {
            described: metadata.len(),
            asked: columns.len(),
        });
    }
    metadata
        .iter()
        .zip(columns)
        .map(|(meta, name)| {
            let base = meta.base();
            // tiberius leaves read-only columns out of the bulk load: the rows would not fit.
            let kind = (meta.col_name() == name.as_str() && base.is_updateable())
                .then(|| kind(base.ty()))
                .flatten()
                .ok_or_else(|| Fallback::Column(name.clone()))?;
            Ok(Slot {
                kind,
                fixed: matches!(base.ty(), TypeInfo::FixedLen(_)),
                nullable: base.is_nullable(),
            })
        })
        .collect()
}

/// The types tiberius both declares exactly in `INSERT BULK` and encodes from a
/// [`ColumnData`] we can build without loss.
fn kind(ty: &TypeInfo) -> Option<Kind> {
    match ty {
        TypeInfo::FixedLen(fixed) => Some(match fixed {
            FixedLenType::Int1 => Kind::Int(1),
            FixedLenType::Int2 => Kind::Int(2),
            FixedLenType::Int4 => Kind::Int(4),
            FixedLenType::Int8 => Kind::Int(8),
            FixedLenType::Bit => Kind::Bit,
            FixedLenType::Float4 => Kind::Float(4),
            FixedLenType::Float8 => Kind::Float(8),
            _ => return None,
        }),
        TypeInfo::VarLenSized(cx) => var_len_kind(cx),
        _ => None,
    }
}

/// The longest value bulk loaded into a column declared `len` bytes long (`0xFFFF`: `MAX`).
fn max_bulk_bytes(len: usize) -> usize {
    if len == 0xFFFF {
        MAX_BULK_TEXT_BYTES
    } else {
        len
    }
}

fn var_len_kind(cx: &VarLenContext) -> Option<Kind> {
    let len = cx.len();
    match cx.r#type() {
        VarLenType::Intn if matches!(len, 1 | 2 | 4 | 8) => Some(Kind::Int(len as u8)),
        VarLenType::Bitn => Some(Kind::Bit),
        VarLenType::Floatn if matches!(len, 4 | 8) => Some(Kind::Float(len as u8)),
        VarLenType::Guid => Some(Kind::Guid),
        // tiberius declares `nvarchar(<bytes>)` up to 4,000 bytes and `nvarchar(max)` above,
        // so only these two ranges are declared as a type the rows really have.
        VarLenType::NVarchar if len <= 4000 => Some(Kind::NText(len)),
        // A `(n)varchar(max)`/`varbinary(max)` value over 8,000 bytes is refused by real
        // servers with error 4816 (tiberius issue #322, open): such a batch goes by INSERT.
        VarLenType::NVarchar if len == 0xFFFF => Some(Kind::NText(MAX_BULK_TEXT_BYTES)),
        VarLenType::BigVarChar | VarLenType::BigChar => {
            let ascii = cx
                .collation()
                .and_then(|c| c.encoding().ok())
                .is_some_and(|e| e.is_ascii_compatible());
            ascii.then_some(Kind::Ascii(max_bulk_bytes(len)))
        }
        VarLenType::BigVarBin | VarLenType::BigBinary => Some(Kind::Binary(max_bulk_bytes(len))),
        _ => None,
    }
}

fn bulk_rows<'a>(
    slots: &[Slot],
    columns: &[String],
    rows: &'a [Vec<Value>],
) -> Result<Vec<TokenRow<'a>>, Fallback> {
    rows.iter()
        .map(|row| {
            if row.len() != slots.len() {
                return Err(Fallback::RowWidth(row.len()));
            }
            let mut out = TokenRow::with_capacity(slots.len());
            for ((slot, value), name) in slots.iter().zip(row).zip(columns) {
                out.push(cell(*slot, value).ok_or_else(|| Fallback::Value(name.clone()))?);
            }
            Ok(out)
        })
        .collect()
}

/// `value` as exactly the data its column takes, or `None` when only the server could
/// convert it.
fn cell(slot: Slot, value: &Value) -> Option<ColumnData<'_>> {
    use ColumnData as C;
    fn text(s: Cow<'_, str>) -> Option<ColumnData<'_>> {
        Some(ColumnData::String(Some(s)))
    }
    match (slot.kind, value) {
        (_, Value::Null) if slot.fixed || !slot.nullable => None,
        (kind, Value::Null) => Some(null(kind)),
        (Kind::Int(1), Value::Int(n)) => u8::try_from(*n).ok().map(|v| C::U8(Some(v))),
        (Kind::Int(2), Value::Int(n)) => i16::try_from(*n).ok().map(|v| C::I16(Some(v))),
        (Kind::Int(4), Value::Int(n)) => i32::try_from(*n).ok().map(|v| C::I32(Some(v))),
        (Kind::Int(_), Value::Int(n)) => Some(C::I64(Some(*n))),
        (Kind::Bit, Value::Int(n @ (0 | 1))) => Some(C::Bit(Some(*n == 1))),
        // NaN and infinities are no SQL Server floats; a REAL takes only what it holds exactly.
        (Kind::Float(4), Value::Float(f)) if f.is_finite() && f64::from(*f as f32) == *f => {
            Some(C::F32(Some(*f as f32)))
        }
        (Kind::Float(8), Value::Float(f)) if f.is_finite() => Some(C::F64(Some(*f))),
        (Kind::NText(max), Value::Text(s)) if s.encode_utf16().count() * 2 <= max => {
            text(Cow::Borrowed(s))
        }
        (Kind::Ascii(max), Value::Text(s)) if s.is_ascii() && s.len() <= max => {
            text(Cow::Borrowed(s))
        }
        // A float as its shortest exact decimal text (the server's own print keeps 6 digits).
        (Kind::NText(max), Value::Float(f)) if f.is_finite() => {
            let s = f.to_string();
            (s.len() * 2 <= max).then(|| text(Cow::Owned(s))).flatten()
        }
        (Kind::Ascii(max), Value::Float(f)) if f.is_finite() => {
            let s = f.to_string();
            (s.len() <= max).then(|| text(Cow::Owned(s))).flatten()
        }
        // The server turns an integer into text as plain decimal digits, as Rust does.
        (Kind::NText(max), Value::Int(n)) => {
            let s = n.to_string();
            (s.len() * 2 <= max).then(|| text(Cow::Owned(s))).flatten()
        }
        (Kind::Ascii(max), Value::Int(n)) => {
            let s = n.to_string();
            (s.len() <= max).then(|| text(Cow::Owned(s))).flatten()
        }
        (Kind::Binary(max), Value::Bytes(b)) if b.len() <= max => {
            Some(C::Binary(Some(Cow::Borrowed(b))))
        }
        // Only the 36-character hyphenated form: how SQL Server shows a GUID, and a form it
        // converts from text (a bare 32-digit one it refuses, so bulk must not accept it).
        (Kind::Guid, Value::Text(s)) if s.len() == 36 => {
            Uuid::parse_str(s).ok().map(|u| C::Guid(Some(u)))
        }
        _ => None,
    }
}

fn null(kind: Kind) -> ColumnData<'static> {
    use ColumnData as C;
    match kind {
        Kind::Int(1) => C::U8(None),
        Kind::Int(2) => C::I16(None),
        Kind::Int(4) => C::I32(None),
        Kind::Int(_) => C::I64(None),
        Kind::Bit => C::Bit(None),
        Kind::Float(4) => C::F32(None),
        Kind::Float(_) => C::F64(None),
        Kind::NText(_) | Kind::Ascii(_) => C::String(None),
        Kind::Binary(_) => C::Binary(None),
        Kind::Guid => C::Guid(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tiberius::{BaseMetaDataColumn, Collation, ColumnFlag};

    /// Latin1_General_CI_AS (code page 1252).
    fn latin1() -> Option<Collation> {
        Some(Collation::new(0x00D0_0409, 52))
    }

    fn column(name: &str, ty: TypeInfo, nullable: bool) -> MetaDataColumn<'static> {
        let flags = if nullable {
            ColumnFlag::Nullable | ColumnFlag::UpdateableUnknown
        } else {
            ColumnFlag::UpdateableUnknown.into()
        };
        MetaDataColumn {
            base: BaseMetaDataColumn {
                flags,
                ty,
                table_name: None,
            },
            col_name: Cow::Owned(name.to_string()),
        }
    }

    fn var(ty: VarLenType, len: usize) -> TypeInfo {
        let collation = match ty {
            VarLenType::NVarchar | VarLenType::BigVarChar | VarLenType::NChar => latin1(),
            _ => None,
        };
        TypeInfo::VarLenSized(VarLenContext::new(ty, len, collation))
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn integers_take_the_width_the_server_describes() {
        let meta = vec![
            column("k", TypeInfo::FixedLen(FixedLenType::Int4), false),
            column("t", var(VarLenType::Intn, 1), true),
            column("b", var(VarLenType::Intn, 8), true),
        ];
        let cols = names(&["k", "t", "b"]);
        let slots = slots(&meta, &cols).expect("all mapped");
        let values = [vec![
            Value::Int(7),
            Value::Int(255),
            Value::Int(5_000_000_000),
        ]];
        let rows = bulk_rows(&slots, &cols, &values).expect("exact");
        let cells: Vec<_> = rows[0].iter().cloned().collect();
        assert!(matches!(cells[0], ColumnData::I32(Some(7))));
        assert!(matches!(cells[1], ColumnData::U8(Some(255))));
        assert!(matches!(cells[2], ColumnData::I64(Some(5_000_000_000))));
        for (i, bad) in [
            (0, Value::Int(1 << 40)),
            (1, Value::Int(-1)),
            (1, Value::Int(256)),
            (2, Value::Text("1".into())),
            (2, Value::Float(1.0)),
        ] {
            let mut row = vec![Value::Int(1), Value::Int(1), Value::Int(1)];
            row[i] = bad;
            assert_eq!(
                bulk_rows(&slots, &cols, &[row]).err(),
                Some(Fallback::Value(cols[i].clone()))
            );
        }
    }

    #[test]
    fn nulls_only_where_the_column_takes_them() {
        let meta = vec![
            column("k", TypeInfo::FixedLen(FixedLenType::Int4), false),
            column("v", var(VarLenType::NVarchar, 0xFFFF), true),
        ];
        let cols = names(&["k", "v"]);
        let slots = slots(&meta, &cols).expect("mapped");
        let values = [vec![Value::Int(1), Value::Null]];
        let ok = bulk_rows(&slots, &cols, &values).expect("ok");
        assert!(matches!(
            ok[0].iter().nth(1),
            Some(ColumnData::String(None))
        ));
        assert_eq!(
            bulk_rows(&slots, &cols, &[vec![Value::Null, Value::Null]]).err(),
            Some(Fallback::Value("k".into()))
        );
    }

    #[test]
    fn long_max_text_goes_by_insert() {
        let meta = vec![column("v", var(VarLenType::NVarchar, 0xFFFF), true)];
        let cols = names(&["v"]);
        let slots = slots(&meta, &cols).expect("mapped");
        let text = |chars: usize| vec![vec![Value::Text("é".repeat(chars))]];
        assert!(
            bulk_rows(&slots, &cols, &text(4_000)).is_ok(),
            "8,000 bytes"
        );
        assert_eq!(
            bulk_rows(&slots, &cols, &text(4_001)).err(),
            Some(Fallback::Value("v".into()))
        );
    }

    #[test]
    fn text_must_fit_its_column() {
        let meta = vec![
            column("n", var(VarLenType::NVarchar, 10), true),
            column("a", var(VarLenType::BigVarChar, 3), true),
        ];
        let cols = names(&["n", "a"]);
        let slots = slots(&meta, &cols).expect("mapped");
        let row = |n: &str, a: &str| vec![Value::Text(n.into()), Value::Text(a.into())];
        assert!(bulk_rows(&slots, &cols, &[row("fünf!", "abc")]).is_ok());
        assert!(bulk_rows(&slots, &cols, &[vec![Value::Int(-1234), Value::Int(12)]]).is_ok());
        assert!(bulk_rows(&slots, &cols, &[row("sechs!", "abc")]).is_err());
        assert!(bulk_rows(&slots, &cols, &[row("x", "abcd")]).is_err());
        assert!(bulk_rows(&slots, &cols, &[row("x", "é")]).is_err());
        // A float into text goes as its exact digits (SQL Server would print 6): "1.5" fits
        // 10 bytes, "1234567.891" does not.
        let float = |f: f64| vec![Value::Float(f), Value::Null];
        let rows = [float(1.5)];
        let bulk = bulk_rows(&slots, &cols, &rows).expect("fits");
        assert!(format!("{:?}", bulk[0]).contains("\"1.5\""), "{bulk:?}");
        assert!(bulk_rows(&slots, &cols, &[float(1234567.891)]).is_err());
    }

    #[test]
    fn columns_tiberius_would_declare_wrongly_fall_back() {
        for ty in [
            var(VarLenType::NVarchar, 8000),
            var(VarLenType::NChar, 20),
            var(VarLenType::Daten, 3),
            TypeInfo::FixedLen(FixedLenType::Money),
        ] {
            let meta = vec![column("c", ty, true)];
            assert_eq!(
                slots(&meta, &names(&["c"])).err(),
                Some(Fallback::Column("c".into()))
            );
        }
        let meta = vec![column("C", var(VarLenType::NVarchar, 0xFFFF), true)];
        assert!(slots(&meta, &names(&["c"])).is_err(), "another column");
        assert!(slots(&meta, &names(&["C", "D"])).is_err(), "too few");
    }

    #[test]
    fn floats_bits_binary_and_guids_convert_exactly() {
        let meta = vec![
            column("r", TypeInfo::FixedLen(FixedLenType::Float4), false),
            column("f", var(VarLenType::Floatn, 8), true),
            column("b", var(VarLenType::Bitn, 1), true),
            column("x", var(VarLenType::BigVarBin, 2), true),
            column("g", var(VarLenType::Guid, 16), true),
        ];
        let cols = names(&["r", "f", "b", "x", "g"]);
        let slots = slots(&meta, &cols).expect("mapped");
        let guid = "6F9619FF-8B86-D011-B42D-00C04FC964FF";
        let row = |r: f64, f: f64, b: i64, x: &[u8], g: &str| {
            vec![
                Value::Float(r),
                Value::Float(f),
                Value::Int(b),
                Value::Bytes(x.to_vec()),
                Value::Text(g.into()),
            ]
        };
        assert!(bulk_rows(&slots, &cols, &[row(0.5, 0.1, 1, b"ab", guid)]).is_ok());
        for (bad, column) in [
            (row(0.1, 0.1, 1, b"ab", guid), "r"),
            (row(0.5, f64::NAN, 1, b"ab", guid), "f"),
            (row(0.5, 0.1, 2, b"ab", guid), "b"),
            (row(0.5, 0.1, 0, b"abc", guid), "x"),
            (row(0.5, 0.1, 0, b"ab", &guid.replace('-', "")), "g"),
        ] {
            assert_eq!(
                bulk_rows(&slots, &cols, &[bad]).err(),
                Some(Fallback::Value(column.into()))
            );
        }
    }
}
