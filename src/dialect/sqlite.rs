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

/// The SQL function, registered by the SQLite backend on its connection, that gives a REAL
/// its [`exact_real_text`] (or the REAL itself where SQLite's own text is exact).
pub const REAL_TEXT: &str = "eavpivot_real_text";

/// The text a TEXT column must hold for the REAL `f` where SQLite's own (15 significant
/// digits, which the column would store if given the REAL) does not read back as `f`: its
/// shortest exact digits (16 or 17) laid out as SQLite's `printf('%!.16g')`/`'%!.17g'` lays
/// them out. None where SQLite's is exact. The stream binds it; the pushdown calls it as
/// [`REAL_TEXT`].
pub fn exact_real_text(f: f64) -> Option<String> {
    if !f.is_finite() || format!("{f:.14e}").parse::<f64>().ok() == Some(f) {
        return None;
    }
    let shortest = format!("{f:e}");
    let (mantissa, exponent) = shortest.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let sign = if mantissa.starts_with('-') { "-" } else { "" };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let precision = digits.len() as i32;
    if exponent < -4 || exponent >= precision {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        let esign = if exponent < 0 { '-' } else { '+' };
        return Some(format!("{sign}{first}.{rest}e{esign}{:02}", exponent.abs()));
    }
    let text = if exponent < 0 {
        format!("0.{}{digits}", "0".repeat((-exponent - 1) as usize))
    } else {
        // `exponent < precision`: the point falls within the digits or right after them.
        let point = (exponent + 1) as usize;
        match digits.get(point..) {
            Some(frac) if !frac.is_empty() => format!("{}.{frac}", &digits[..point]),
            _ => format!("{digits}.0"),
        }
    };
    Some(format!("{sign}{text}"))
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

    /// A REAL's text is printed with 15 significant digits (`0.30000000000000004` → `0.3`),
    /// and SQLite's `printf` at 17 is not exact either (`4.4251604027143375e+284` prints
    /// `…367e+284`, another double): the backend's [`REAL_TEXT`] function gives the text
    /// the stream writes ([`exact_real_text`]).
    /// A value declared with TEXT affinity is never a REAL: left as it is.
    fn text_cell(&self, expr: &str, declared: Option<&str>) -> String {
        let text_affinity = declared.is_some_and(|t| {
            let t = t.to_ascii_uppercase();
            ["CHAR", "CLOB", "TEXT"].iter().any(|a| t.contains(a)) && !t.contains("INT")
        });
        match text_affinity {
            true => expr.to_string(),
            false => format!(
                "CASE WHEN typeof({expr}) = 'real' THEN {REAL_TEXT}({expr}) ELSE {expr} END"
            ),
        }
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

    /// The RENAME in `legacy_alter_table` mode: otherwise SQLite checks every view and
    /// trigger of the schema as it renames, and one that reads the target fails it between
    /// the DROP and the RENAME (`error in view v: no such table`). So renamed, such a view
    /// reads the table swapped in, by its name, as it did the replaced one.
    fn swap_rename(&self, staging: &TableRef, target: &TableRef) -> Vec<String> {
        vec![
            "PRAGMA legacy_alter_table = ON".to_string(),
            self.rename_table(staging, target),
            "PRAGMA legacy_alter_table = OFF".to_string(),
        ]
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
    /// Other tables' foreign keys to it (the DROP of the replaced table deletes its rows
    /// and fails them); its indexes and triggers, which go with it.
    fn replace_leaves(&self, table: &TableRef) -> Option<String> {
        let schema = table.schema().unwrap_or_else(|| "main".into());
        let catalog = format!("{}.sqlite_master", self.quote_ident(&schema));
        let name = self.quote_literal(&table.name());
        Some(format!(
            "SELECT DISTINCT 'foreign key of ' || m.name, 1 FROM {catalog} m, pragma_foreign_key_list(m.name, {}) f \
             WHERE m.type = 'table' AND f.\"table\" = {name} COLLATE NOCASE AND m.name <> {name} COLLATE NOCASE \
             UNION ALL SELECT type || ' ' || name, 0 FROM {catalog} WHERE type IN ('index', 'trigger') AND sql IS NOT NULL AND tbl_name = {name} COLLATE NOCASE \
             ORDER BY 2 DESC, 1",
            self.quote_literal(&schema)
        ))
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact where SQLite's own text is not, as SQLite lays numbers out; left to SQLite
    /// where its text is exact.
    #[test]
    fn a_real_gets_its_exact_text_where_sqlites_is_not() {
        let cases: [(f64, Option<&str>); 10] = [
            (0.1 + 0.2, Some("0.30000000000000004")),
            (-(0.1 + 0.2), Some("-0.30000000000000004")),
            (123_456_789_012_345_680.0, Some("1.2345678901234568e+17")),
            (f64::MAX, Some("1.7976931348623157e+308")),
            (4.425_160_402_714_337_5e284, Some("4.4251604027143375e+284")),
            (1_234_567_890_123_456.8, Some("1234567890123456.8")),
            (0.000_123_456_789_012_345_67, Some("0.00012345678901234567")),
            (100.0, None),
            (1e-7, None),
            (0.1, None),
        ];
        for (f, want) in cases {
            let got = exact_real_text(f);
            assert_eq!(got.as_deref(), want, "{f:e}");
            if let Some(text) = got {
                assert_eq!(text.parse::<f64>().ok(), Some(f), "{text}");
            }
        }
        let mut bits: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..100_000 {
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            let f = f64::from_bits(bits);
            match exact_real_text(f) {
                Some(text) => assert_eq!(text.parse::<f64>().ok(), Some(f), "{f:e}: {text}"),
                None => assert!(
                    !f.is_finite() || format!("{f:.14e}").parse::<f64>().ok() == Some(f),
                    "{f:e}"
                ),
            }
        }
    }
}
