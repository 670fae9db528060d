//! Typed pivot columns as data: what a column stores ([`ColumnKind`], decided from the data by
//! [`crate::plan::types`], the same for every database) and the pieces a dialect renders from
//! it: the declared type and the pushdown's conversion of the source text.
//!
//! The kinds are exactly the forms the ladder accepts, so a dialect's CAST of a value of that
//! form cannot fail and prints back the source text.

use super::{Query, TableShape, Types};

/// What one typed pivot column stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnKind {
    SmallInt,
    Int,
    BigInt,
    /// `DECIMAL(precision, scale)`; every value has at most `scale` fractional digits (exactly
    /// `scale` with `pivot.infer.numbers: text`).
    Decimal {
        precision: u32,
        scale: u32,
    },
    /// `YYYY-MM-DD`.
    Date,
    /// `YYYY-MM-DD HH:MM:SS` with at most `fraction` fractional digits (0–6; exactly `fraction`
    /// with `pivot.infer.numbers: text`).
    Timestamp {
        fraction: u32,
    },
    /// `true` / `false`: only where the dialect prints a boolean back that way.
    Boolean,
    /// Source values that were already floating point.
    Float,
    /// Text of at most these lengths: characters, UTF-16 code units, UTF-8 bytes.
    Text {
        chars: u64,
        utf16: u64,
        bytes: u64,
    },
    /// Text the dialect's unbounded type holds (too long to bound, or not measured).
    UnboundedText,
    /// A `pivot.types` type the ladder does not model: declared as written, converted by the
    /// database alone.
    Declared(String),
}

impl ColumnKind {
    /// Kinds stored as the value's text: no conversion anywhere.
    pub fn is_text(&self) -> bool {
        matches!(self, ColumnKind::Text { .. } | ColumnKind::UnboundedText)
    }

    pub fn is_integer(&self) -> bool {
        matches!(
            self,
            ColumnKind::SmallInt | ColumnKind::Int | ColumnKind::BigInt
        )
    }

    /// Portable SQL spelling, what dialects start from.
    pub fn standard_sql(&self) -> Option<String> {
        Some(match self {
            ColumnKind::SmallInt => "SMALLINT".into(),
            ColumnKind::Int => "INTEGER".into(),
            ColumnKind::BigInt => "BIGINT".into(),
            ColumnKind::Decimal { precision, scale } => format!("DECIMAL({precision},{scale})"),
            ColumnKind::Date => "DATE".into(),
            ColumnKind::Timestamp { fraction } => format!("TIMESTAMP({fraction})"),
            ColumnKind::Boolean => "BOOLEAN".into(),
            ColumnKind::Float => "DOUBLE PRECISION".into(),
            ColumnKind::Declared(ty) => ty.clone(),
            ColumnKind::Text { .. } | ColumnKind::UnboundedText => return None,
        })
    }
}

/// A pivot column's own type, where the job types its columns (`column_type: infer`,
/// `pivot.types`); a column without one takes [`super::TableShape::column_type`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Typed {
    pub kind: ColumnKind,
    /// The type `CREATE TABLE` declares, rendered by the dialect from `kind`.
    pub sql_type: String,
    /// Why this type: the values that decided it (shown by `--dry-run` and `inspect`).
    pub why: String,
    /// Every value prints back exactly as its source text (inferred types; a `pivot.types`
    /// type converts exactly but may print differently, `1.5` as `1.500`).
    pub round_trips: bool,
    /// With `round_trips`: the value, not its spelling, comes back (`pivot.infer.numbers:
    /// value`: `12.5` in a DECIMAL(4,2) prints `12.50`), so the check compares both sides
    /// without trailing fractional zeros ([`Types::trim_fraction`]).
    pub by_value: bool,
}

impl Typed {
    /// Whether the round-trip check covers this column: a converted type whose every value
    /// must print back as written (not text, not a float the source already had).
    pub fn checked(&self) -> bool {
        self.round_trips && !self.kind.is_text() && self.kind != ColumnKind::Float
    }

    /// Checked, and converted by the stream itself: it binds an integer column's values as
    /// 64-bit numbers (`plan::types::convert`), which every database stores exactly and
    /// prints in canonical decimal, so the pivot checks their round trip as it converts
    /// them; the other kinds (dates, decimals…) keep the database's own test of the text.
    pub fn converted_by_stream(&self) -> bool {
        self.checked() && self.kind.is_integer()
    }
}

/// The condition that the source text `expr`, converted to `t` by this database, prints back
/// as written (by value: without trailing fractional zeros on both sides). What the
/// round-trip check counts the failures of, and what the pushdown loads a typed cell under.
pub(super) fn prints_back<D: Types + ?Sized>(d: &D, expr: &str, t: &Typed) -> String {
    let (typed, source) = (d.text_of(&d.cast_to(expr, t)), d.text_of(expr));
    if !t.by_value {
        return format!("{typed} = {source}");
    }
    // Equal spellings are equal values: the trimmed comparison (a LIKE and up to two TRIMs a
    // side, per row: +0.6 s per million decimals on MariaDB) runs only for values spelled
    // otherwise (`12.5` loaded as `12.50`). The same truth value as the trimmed test alone.
    format!(
        "({typed} = {source} OR {} = {})",
        d.trim_fraction(&typed),
        d.trim_fraction(&source)
    )
}

/// [`crate::dialect::query::typed_round_trip`]: one scan of the source, one `IN` test per distinct type.
pub(super) fn round_trip_query<D: Query + ?Sized>(
    d: &D,
    shapes: &[TableShape],
    source: &super::SourceQuery,
    streamed: bool,
) -> Option<String> {
    Some(format!(
        "SELECT COUNT(*) FROM ({}) s\nWHERE s.v IS NOT NULL AND ({}) = 1",
        d.fenced_source_rows(source),
        misprint_case(d, shapes, streamed)?
    ))
}

/// [`crate::dialect::query::ordered_rows_checked`]'s last column: 1 where the row's value,
/// converted to its typed column's type, does not print back as written, else 0 (NULLs,
/// untyped attributes). The stream's one read then carries the round-trip check.
pub(super) fn misprinted_column<D: Query + ?Sized>(d: &D, shapes: &[TableShape]) -> Option<String> {
    Some(format!(
        "CASE WHEN s.v IS NULL THEN 0 ELSE {} END AS misprinted",
        misprint_case(d, shapes, true)?
    ))
}

/// `CASE WHEN s.a IN (…) THEN <0 if s.v prints back, else 1> … ELSE 0 END` over the typed
/// columns of `shapes` the database converts (`streamed`: not the integers the stream binds
/// itself), one branch per distinct type; None without any.
fn misprint_case<D: Query + ?Sized>(
    d: &D,
    shapes: &[TableShape],
    streamed: bool,
) -> Option<String> {
    let mut by_type: Vec<(&Typed, Vec<String>)> = Vec::new();
    for c in shapes.iter().flat_map(|s| &s.columns) {
        let database_converts = |t: &&Typed| t.checked() && !(streamed && t.converted_by_stream());
        let Some(t) = c.typed.as_ref().filter(database_converts) else {
            continue;
        };
        let key = d.attribute_key_literal(&c.attribute);
        match by_type
            .iter_mut()
            .find(|(u, _)| u.sql_type == t.sql_type && u.by_value == t.by_value)
        {
            Some((_, keys)) => keys.push(key),
            None => by_type.push((t, vec![key])),
        }
    }
    if by_type.is_empty() {
        return None;
    }
    // CASE, not AND: a value is converted only under its own attribute's type.
    let branches: Vec<String> = by_type
        .iter()
        .map(|(t, keys)| {
            format!(
                "WHEN s.a IN ({}) THEN CASE WHEN {} THEN 0 ELSE 1 END",
                keys.join(", "),
                prints_back(d, "s.v", t)
            )
        })
        .collect();
    Some(format!("CASE {} ELSE 0 END", branches.join("\n  ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::{Dialect, MariaDb, MsSql, Postgres, Sqlite};

    fn typed(d: &dyn Dialect, kind: ColumnKind) -> Typed {
        Typed {
            sql_type: d.column_sql_type(&kind),
            kind,
            why: String::new(),
            round_trips: true,
            by_value: false,
        }
    }

    #[test]
    fn each_dialect_declares_and_casts_the_ladder() {
        let dec = ColumnKind::Decimal {
            precision: 3,
            scale: 2,
        };
        let ts = ColumnKind::Timestamp { fraction: 2 };
        let text = ColumnKind::Text {
            chars: 5,
            utf16: 6,
            bytes: 9,
        };
        let cases: [(&dyn Dialect, [&str; 5]); 4] = [
            (&Sqlite, ["INTEGER", "TEXT", "TEXT", "TEXT", "TEXT"]),
            (
                &Postgres,
                ["INTEGER", "DECIMAL(3,2)", "TIMESTAMP(2)", "BOOLEAN", "text"],
            ),
            (
                &MariaDb,
                [
                    "INT",
                    "DECIMAL(3,2)",
                    "DATETIME(2)",
                    "BOOLEAN",
                    "VARCHAR(5)",
                ],
            ),
            (
                &MsSql,
                [
                    "INT",
                    "DECIMAL(3,2)",
                    "DATETIME2(2)",
                    // SQL Server has no BOOLEAN type.
                    "BIT",
                    "NVARCHAR(6)",
                ],
            ),
        ];
        for (d, want) in cases {
            let kinds = [
                ColumnKind::Int,
                dec.clone(),
                ts.clone(),
                ColumnKind::Boolean,
                text.clone(),
            ];
            let got: Vec<String> = kinds.iter().map(|k| d.column_sql_type(k)).collect();
            assert_eq!(got, want, "{}", d.name());
        }
        // Booleans print back as true/false only on PostgreSQL; SQLite stores integers only.
        assert!(Postgres.stores(&ColumnKind::Boolean) && !MsSql.stores(&ColumnKind::Boolean));
        assert!(!Sqlite.stores(&dec) && Sqlite.stores(&ColumnKind::BigInt));
        assert_eq!(
            MariaDb.cast_to("x", &typed(&MariaDb, ColumnKind::SmallInt)),
            "CAST(x AS SIGNED)"
        );
        assert_eq!(
            MsSql.cast_to("x", &typed(&MsSql, ts)),
            "CAST(x AS DATETIME2(2))"
        );
        assert_eq!(Sqlite.cast_to("x", &typed(&Sqlite, dec)), "x");
        assert_eq!(Postgres.cast_to("x", &typed(&Postgres, text)), "x");
        // NVARCHAR stops at 4,000 UTF-16 units; beyond, the unbounded type.
        let long = ColumnKind::Text {
            chars: 4_001,
            utf16: 4_001,
            bytes: 4_001,
        };
        assert_eq!(MsSql.column_sql_type(&long), "NVARCHAR(MAX)");
    }
}
