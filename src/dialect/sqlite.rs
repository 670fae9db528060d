//! SQLite: the embedded default. Identifiers are compared ASCII-case-insensitively. Text
//! compares byte-wise under the default BINARY collation, but a source column may declare
//! `NOCASE` or `RTRIM`, which `GROUP BY` and `=` would then follow: the attribute key is
//! forced to `COLLATE BINARY`, so `Color` and `color` stay two attributes here as everywhere.

use super::portable::Portable;
use super::Dialect;
use crate::config::TableRef;

pub struct Sqlite;

impl Dialect for Sqlite {
    fn groups_by_sorting(&self) -> bool {
        true
    }

    fn attribute_key(&self, attribute_expr: &str) -> String {
        format!("{attribute_expr} COLLATE BINARY")
    }

    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn text_type(&self) -> &'static str {
        "TEXT"
    }

    fn integer_type(&self) -> &'static str {
        "INTEGER"
    }

    /// A one-column primary key declared exactly `INTEGER` becomes the rowid, which takes
    /// only integers (`datatype mismatch` on a text key that the source's column held
    /// fine). `INT` has the same INTEGER affinity and keeps the key an ordinary column.
    fn key_column_type(&self, ty: &str) -> String {
        if ty.trim().eq_ignore_ascii_case("integer") {
            "INT".into()
        } else {
            ty.to_string()
        }
    }

    /// SQLite's INTEGER (any type name containing "INT") holds 64 bits.
    fn portable_type(&self, declared: &str) -> Option<Portable> {
        match super::portable::parse(declared)? {
            Portable::SmallInt | Portable::Int => Some(Portable::BigInt),
            other => Some(other),
        }
    }

    /// SQLite keeps a value's own storage class whatever the column says; the caveats are
    /// where its affinity changes what comes back.
    fn spell(&self, kind: Portable) -> (String, Option<&'static str>) {
        match kind {
            Portable::SmallInt | Portable::Int | Portable::BigInt => ("INTEGER".into(), None),
            Portable::Text(_) | Portable::FixedText(_) | Portable::Uuid => ("TEXT".into(), None),
            Portable::Decimal(p, s) => (
                format!("NUMERIC({p},{s})"),
                Some("SQLite has no exact decimal: values beyond 15 significant digits become approximate"),
            ),
            Portable::Float => ("REAL".into(), None),
            Portable::Boolean => ("INTEGER".into(), Some("SQLite stores booleans as 0 and 1")),
            Portable::Date | Portable::Timestamp => (
                "TEXT".into(),
                Some("SQLite has no date type: stored as ISO-8601 text"),
            ),
        }
    }

    fn table_columns(&self, table: &TableRef) -> String {
        format!(
            "SELECT name FROM pragma_table_info({}, {}) ORDER BY cid",
            self.quote_literal(&table.name()),
            self.quote_literal(&table.schema().unwrap_or_else(|| "main".into()))
        )
    }

    fn null_safe_eq(&self, a: &str, b: &str) -> String {
        format!("{a} IS {b}")
    }

    fn upsert_style(&self) -> super::merge::UpsertStyle {
        super::merge::UpsertStyle::OnConflict
    }

    /// Schema and name as the catalog holds them (names compare case-insensitively).
    fn table_identity(&self, table: &TableRef) -> String {
        let schema = table.schema().unwrap_or_else(|| "main".into());
        format!(
            "SELECT (SELECT {} || '.' || lower(name) FROM {}.sqlite_master WHERE type IN ('table', 'view') AND name = {} COLLATE NOCASE)",
            self.quote_literal(&schema.to_lowercase()),
            self.quote_ident(&schema),
            self.quote_literal(&table.name())
        )
    }

    fn table_exists(&self, table: &TableRef) -> String {
        let catalog = match table.schema() {
            Some(schema) => format!("{}.sqlite_master", self.quote_ident(&schema)),
            None => "sqlite_master".into(),
        };
        format!(
            "SELECT COUNT(*) FROM {catalog} WHERE type = 'table' AND name = {} COLLATE NOCASE",
            self.quote_literal(&table.name())
        )
    }
}
