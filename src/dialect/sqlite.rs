//! SQLite: the embedded default. Identifiers are compared ASCII-case-insensitively. Text
//! compares byte-wise under the default BINARY collation, but a source column may declare
//! `NOCASE` or `RTRIM`, which `GROUP BY` and `=` would then follow: the attribute key is
//! forced to `COLLATE BINARY`, so `Color` and `color` stay two attributes here as everywhere.

use super::{Catalog, ColumnKind, Query, Quoting, Schema, Script, Typed, Types};
use crate::table_ref::TableRef;

pub struct Sqlite;

impl Quoting for Sqlite {
    /// SQLite stores any bytes as text; the cast keeps the storage class text, so the literal
    /// equals the stored value where a blob never would.
    fn text_bytes_literal(&self, bytes: &[u8]) -> String {
        format!("CAST(X'{}' AS TEXT)", crate::value::hex(bytes))
    }

    fn attribute_key(&self, attribute_expr: &str) -> String {
        format!("{attribute_expr} COLLATE BINARY")
    }

    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn null_safe_eq(&self, a: &str, b: &str) -> String {
        format!("{a} IS {b}")
    }
}

impl Types for Sqlite {
    fn text_type(&self) -> &'static str {
        "TEXT"
    }

    /// SQLITE_MAX_COLUMN of the bundled library: its default, which the build does not change
    /// (a unit test of the SQLite backend checks it). It counts the entity key columns too,
    /// and bounds a SELECT's result columns as well as a table's.
    fn max_columns(&self) -> Option<usize> {
        Some(2_000)
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

    /// SQLite has no exact decimal, date or timestamp storage: a `DECIMAL(3,2)` column has
    /// NUMERIC affinity and turns `'0.40'` into the REAL 0.4. Integers (INTEGER affinity keeps
    /// every 64-bit value exactly) and source floats are typed; the rest stays TEXT, which
    /// keeps the text exactly (see BENCHMARKS.md / README "Typed columns").
    fn stores(&self, kind: &ColumnKind) -> bool {
        kind.is_integer() || matches!(kind, ColumnKind::Float)
    }

    fn column_sql_type(&self, kind: &ColumnKind) -> String {
        match kind {
            k if k.is_integer() => "INTEGER".into(),
            ColumnKind::Float => "REAL".into(),
            ColumnKind::Declared(ty) => ty.clone(),
            _ => "TEXT".into(),
        }
    }

    /// The column's type affinity (sqlite.org/datatype3.html §3.1): NUMERIC turns `'149.9900'`
    /// into 149.99 and `'82.0'` into 82, REAL turns `'82'` into 82.0, INTEGER `'82.0'` into 82.
    fn declared_changes_values(
        &self,
        declared: &str,
        integers_only: bool,
        floats_only: bool,
    ) -> Option<String> {
        let ty = declared.to_ascii_uppercase();
        let affinity = if ty.contains("INT") {
            "INTEGER"
        } else if ["CHAR", "CLOB", "TEXT", "BLOB"]
            .iter()
            .any(|t| ty.contains(t))
            || ty.is_empty()
        {
            return None;
        } else if ["REAL", "FLOA", "DOUB"].iter().any(|t| ty.contains(t)) {
            "REAL"
        } else {
            "NUMERIC"
        };
        let keeps = floats_only || (integers_only && affinity != "REAL");
        (!keeps)
            .then(|| format!("SQLite's {affinity} affinity would turn numeric text into numbers"))
    }

    /// SQLite has `rtrim(x, chars)`, not `TRIM(TRAILING … FROM …)`.
    fn trim_fraction(&self, expr: &str) -> String {
        format!("CASE WHEN {expr} LIKE '%.%' THEN rtrim(rtrim({expr}, '0'), '.') ELSE {expr} END")
    }

    fn cast_to(&self, expr: &str, typed: &Typed) -> String {
        match &typed.kind {
            k if k.is_integer() => format!("CAST({expr} AS INTEGER)"),
            ColumnKind::Float => format!("CAST({expr} AS REAL)"),
            _ => expr.to_string(),
        }
    }

    /// SQLite's INTEGER (any type name containing "INT") holds 64 bits.
    fn portable_type(&self, declared: &str) -> Option<ColumnKind> {
        match super::portable::parse(declared)? {
            ColumnKind::SmallInt | ColumnKind::Int => Some(ColumnKind::BigInt),
            other => Some(other),
        }
    }
}

impl Schema for Sqlite {
    fn upsert_style(&self) -> super::merge::UpsertStyle {
        super::merge::UpsertStyle::OnConflict
    }
}

impl Catalog for Sqlite {
    fn table_columns(&self, table: &TableRef) -> String {
        format!(
            "SELECT name FROM pragma_table_info({}, {}) ORDER BY cid",
            self.quote_literal(&table.name()),
            self.quote_literal(&table.schema().unwrap_or_else(|| "main".into()))
        )
    }

    fn column_types(&self, table: &TableRef) -> String {
        format!(
            "SELECT name, type FROM pragma_table_info({}, {}) ORDER BY cid",
            self.quote_literal(&table.name()),
            self.quote_literal(&table.schema().unwrap_or_else(|| "main".into()))
        )
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

    fn view_exists(&self, table: &TableRef) -> Option<String> {
        let schema = table.schema().unwrap_or_else(|| "main".into());
        Some(format!(
            "SELECT COUNT(*) FROM {}.sqlite_master WHERE type = 'view' AND name = {} COLLATE NOCASE",
            self.quote_ident(&schema),
            self.quote_literal(&table.name())
        ))
    }

    /// `pragma_index_list` covers PRIMARY KEY and UNIQUE constraints (their automatic
    /// indexes) and unique indexes; a partial one proves nothing, an expression part has no
    /// column name (so it never matches a job's column).
    fn unique_keys(&self, table: &TableRef) -> Option<String> {
        let schema = table.schema().unwrap_or_else(|| "main".into());
        Some(format!(
            "SELECT il.name, ii.name FROM pragma_index_list({t}, {s}) il, pragma_index_info(il.name, {s}) ii WHERE il.\"unique\" = 1 AND il.partial = 0",
            t = self.quote_literal(&table.name()),
            s = self.quote_literal(&schema),
        ))
    }

    /// `ON CONFLICT (key)` takes the primary key — an `INTEGER PRIMARY KEY` is the rowid and
    /// has no index of its own to list — or a unique index that is not partial.
    fn upsert_keys(&self, table: &TableRef) -> Option<String> {
        let schema = table.schema().unwrap_or_else(|| "main".into());
        let (t, s) = (
            self.quote_literal(&table.name()),
            self.quote_literal(&schema),
        );
        Some(format!(
            "SELECT il.name, ii.name FROM pragma_index_list({t}, {s}) il, pragma_index_info(il.name, {s}) ii WHERE il.\"unique\" = 1 AND il.partial = 0 \
             UNION ALL SELECT 'PRIMARY KEY', name FROM pragma_table_info({t}, {s}) WHERE pk > 0"
        ))
    }

    /// `pragma_table_xinfo`: `hidden` 2 and 3 are generated columns (which `table_info`, and
    /// so the merge's column list, leaves out already).
    fn filled_columns(&self, table: &TableRef) -> Option<String> {
        let schema = table.schema().unwrap_or_else(|| "main".into());
        Some(format!(
            "SELECT name, CASE WHEN hidden IN (2, 3) THEN 1 ELSE 0 END FROM pragma_table_xinfo({}, {}) WHERE hidden IN (2, 3) OR dflt_value IS NOT NULL ORDER BY cid",
            self.quote_literal(&table.name()),
            self.quote_literal(&schema)
        ))
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

impl Query for Sqlite {
    /// In process, the check in the read runs on the pivot's own thread: at 1M rows it cost
    /// the read ~0.2 s more than the separate scan it replaces (0.13 s).
    fn checks_types_in_read(&self) -> bool {
        false
    }

    fn groups_by_sorting(&self) -> bool {
        true
    }

    /// A value column declared `COLLATE NOCASE` orders `a` and `B` case-blind; BINARY is
    /// the bytes, and leaves numbers to compare as numbers.
    fn value_in_byte_order(&self, v: &str, _declared: Option<&str>) -> Option<String> {
        Some(format!("{v} COLLATE BINARY"))
    }

    fn text_equality(&self) -> super::TextEquality {
        super::TextEquality::BytesUnlessDeclared(
            "SELECT COUNT(*) FROM sqlite_master WHERE sql LIKE '%collate%'",
        )
    }

    fn orders_text_as_it_compares(&self) -> bool {
        true
    }
}

impl Script for Sqlite {
    fn spelling(&self) -> Option<&'static super::Spelling> {
        use super::spelling::*;
        Some(&Spelling {
            concat: Concat::Operator("||"),
            substring: "substr",
            position: Position::HaystackFirst("instr"),
            integer_division: IntegerDivision::Slash,
            modulo_function: false,
            constant_from: "",
            cast_integer: "INTEGER",
            ordered_concat: OrderedConcat::SeparatorArgument("group_concat"),
            with_recursive: "WITH RECURSIVE",
            with_before_insert: false,
            recursive_text_converted: false,
            inline_constants: false,
            // sqlite3.c: "at most 64 tables in a join" (one bit per table in a 64-bit mask).
            max_join_tables: Some((64, "SQLite joins at most 64 tables")),
            lift_recursion_limit: "",
        })
    }
}
