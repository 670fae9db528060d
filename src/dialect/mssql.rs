//! SQL Server (T-SQL). `=` ignores trailing spaces always and case under the default
//! collation, so attribute names are compared as binary-collated text with a sentinel
//! character appended (`'Color ' + '|'` ≠ `'Color' + '|'`). Identifiers are `[…]`, at most
//! 128 UTF-16 units, and compare like the database collation: case-insensitively, trailing
//! spaces ignored.

use super::{
    Catalog, ColumnKind, IdentLimit, Query, Quoting, RowBudget, Schema, Script, Typed, Types,
};
use crate::table_ref::TableRef;

pub struct MsSql;

/// Columns per table (`CREATE TABLE`): SQL Server's hard limit for non-sparse tables. The
/// 4,096-per-SELECT limit never binds first: eavpivot's widest SELECT has one column per
/// target column plus one.
pub const MAX_COLUMNS_PER_TABLE: usize = 1_024;

impl MsSql {
    /// The type probe: the server describes `query`'s result columns with their declared
    /// types (`nvarchar(50)`), which result-set metadata alone does not carry.
    pub fn describe_first_result_set(&self, query: &str) -> String {
        format!(
            "EXEC sp_describe_first_result_set @tsql = {}",
            self.quote_literal(query)
        )
    }

    /// [`Schema::insert_values`] for `rows` whose NULL cells (`cell(row, column)`) are
    /// written as the literal `NULL` instead of a parameter; the others are `@P1, @P2, …` in
    /// row order, some converted first ([`Cell::ParamAs`]). tiberius sends a `None` parameter
    /// as the untyped TDS NULLTYPE (0x1F), which Babelfish answers by dropping the
    /// connection; a literal NULL is typed by its column on every server.
    pub fn insert_values_nulls_inline(
        &self,
        table: &TableRef,
        columns: &[String],
        rows: usize,
        cell: impl Fn(usize, usize) -> Cell,
    ) -> String {
        let cols: Vec<String> = columns.iter().map(|c| self.quote_ident(c)).collect();
        let mut index = 0;
        let tuples: Vec<String> = (0..rows)
            .map(|r| {
                let cells: Vec<String> = (0..columns.len())
                    .map(|c| {
                        let as_type = match cell(r, c) {
                            Cell::Null => return "NULL".to_string(),
                            Cell::Param => None,
                            Cell::ParamAs(sql_type) => Some(sql_type),
                        };
                        index += 1;
                        match as_type {
                            None => self.placeholder(index),
                            Some(t) => format!("CAST({} AS {t})", self.placeholder(index)),
                        }
                    })
                    .collect();
                format!("({})", cells.join(", "))
            })
            .collect();
        format!(
            "INSERT INTO {table} ({}) VALUES {}",
            cols.join(", "),
            tuples.join(", ")
        )
    }
}

/// The types whose implicit conversion to text (style 0) loses part of the value, with what
/// it loses (SQL Server's CAST and CONVERT documentation; Babelfish converts the first three
/// exactly):
/// [`Types::text_conversion_loss`], and the standalone script's refusal.
pub const TEXT_CONVERSION_LOSSES: [(&[&str], &str); 4] = [
    (
        &["float", "real"],
        "SQL Server converts a FLOAT or REAL to text with 6 significant digits (1.23457e+006)",
    ),
    (
        &["datetime", "smalldatetime"],
        "SQL Server converts a DATETIME to text without its seconds (Jan  2 2020  3:04AM)",
    ),
    (
        &["money", "smallmoney"],
        "SQL Server converts a MONEY to text with 2 decimals (12.35)",
    ),
    // Babelfish writes the bytes' integer instead (0x616263 as `6382179`): lost either way.
    // The stream writes the bytes as UTF-8 text, as MariaDB and SQLite hold them.
    (
        &["binary", "varbinary"],
        "SQL Server converts a BINARY or VARBINARY to NVARCHAR by reading its bytes as UTF-16 (0x4142 becomes N'䉁')",
    ),
];

/// The types [`Types::read_value`] reads as `DECIMAL(19,4)` (`run` and the standalone script).
pub const READ_AS_DECIMAL: [&str; 2] = ["money", "smallmoney"];

/// The types [`Types::read_value`] reads as the server's text of them (values only: a key
/// keeps its type, and Babelfish converts no text to a DATETIMEOFFSET in `INSERT … SELECT`).
const READ_AS_TEXT: [&str; 3] = ["datetime2", "time", "datetimeoffset"];

/// One cell of [`MsSql::insert_values_nulls_inline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    Null,
    Param,
    /// The parameter cast to this type first.
    ParamAs(&'static str),
}

/// Appended to every attribute name before comparison so trailing spaces count.
const SENTINEL: char = '|';
const BINARY_COLLATION: &str = "Latin1_General_100_BIN2";

impl Quoting for MsSql {
    fn name(&self) -> &'static str {
        "mssql"
    }

    fn quote_ident(&self, name: &str) -> String {
        format!("[{}]", name.replace(']', "]]"))
    }

    fn quote_literal(&self, text: &str) -> String {
        super::splice_nul(
            format!("N'{}'", text.replace('\'', "''")),
            self.nul_splice(),
        )
    }

    /// T-SQL concatenates with `+`; a NUL kept inside `N'…'` is cut off by some clients
    /// and drivers before the text reaches the server.
    fn nul_splice(&self) -> &'static str {
        "' + NCHAR(0) + N'"
    }

    fn ident_limit(&self) -> IdentLimit {
        IdentLimit::Utf16(128)
    }

    /// Babelfish keeps a table name over 63 bytes under a shortened one that `sp_rename`
    /// then cannot find, so a replace of a target named in 45 to 63 bytes failed swapping
    /// its staging table in. Its own names are eavpivot's to choose: 63 bytes fit both.
    fn own_name_limit(&self) -> IdentLimit {
        IdentLimit::Bytes(63)
    }

    /// Case-insensitive (the default collations), trailing spaces ignored; each character
    /// lowered alone, so a final `Σ` is `σ` as the server's upper/lower pairs have it.
    fn ident_key(&self, name: &str) -> String {
        name.trim_end_matches(' ')
            .chars()
            .flat_map(char::to_lowercase)
            .collect()
    }

    fn column_name_problem(&self, name: &str) -> Option<&'static str> {
        if name.contains('\0') {
            Some("contains a NUL character")
        } else if name.ends_with(' ') {
            // CREATE TABLE would silently drop the trailing spaces.
            Some("ends with a space, which SQL Server drops from identifiers")
        } else {
            None
        }
    }

    fn attribute_key(&self, attribute_expr: &str) -> String {
        format!(
            "(CAST({attribute_expr} AS NVARCHAR(MAX)) + N'{SENTINEL}') COLLATE {BINARY_COLLATION}"
        )
    }

    fn attribute_key_literal(&self, name: &str) -> String {
        self.quote_literal(&format!("{name}{SENTINEL}"))
    }

    fn encode_attribute_key(&self, name: &str) -> String {
        format!("{name}{SENTINEL}")
    }

    fn decode_attribute_key(&self, mut raw: String) -> String {
        if raw.ends_with(SENTINEL) {
            raw.pop();
        }
        raw
    }

    fn placeholder(&self, index: usize) -> String {
        format!("@P{index}")
    }

    fn limit(&self, query: &str, n: u64) -> String {
        format!("SELECT TOP ({n}) * FROM ({query}) AS limited")
    }
}

impl Types for MsSql {
    fn text_type(&self) -> &'static str {
        "NVARCHAR(MAX)"
    }

    fn type_name_of(&self, kind: &ColumnKind) -> Option<String> {
        Some(match kind {
            ColumnKind::Int => "INT".into(),
            ColumnKind::Timestamp { fraction } => format!("DATETIME2({fraction})"),
            ColumnKind::Float => "FLOAT".into(),
            // Never inferred here (BIT prints back as 1/0); a boolean entity key from another
            // database keeps its meaning.
            ColumnKind::Boolean => "BIT".into(),
            other => return other.standard_sql(),
        })
    }

    /// `ALTER COLUMN` converts with the default style (0): a FLOAT or REAL keeps 6 significant
    /// digits, a DATETIME or SMALLDATETIME loses its seconds (SQL Server's CAST and CONVERT
    /// documentation; Babelfish converts them exactly, SQL Server is the contract).
    /// `Operand data type bit is invalid for max operator`; the large-object and spatial types
    /// cannot be compared at all.
    fn unaggregated_value(&self, declared: &str) -> Option<&'static str> {
        let base = super::portable::base_name(declared);
        [
            "bit",
            "xml",
            "text",
            "ntext",
            "image",
            "geography",
            "geometry",
        ]
        .contains(&base.as_str())
        .then_some("SQL Server's MAX and MIN do not take them")
    }

    /// TDS sends a MONEY as an integer of ten-thousandths, which the driver hands on as a
    /// float: past 15 significant digits the last ones are lost (900000000000000.12 arrived as
    /// 900000000000000.1). DECIMAL(19,4) holds every MONEY and SMALLMONEY, and converts to text,
    /// exactly.
    ///
    /// A DATETIME2, TIME or DATETIMEOFFSET is read as the server's own text of it, which the
    /// pushdown writes: SQL Server pads the fraction to the type's scale (`05.1000000`), as the
    /// stream printed it, but Babelfish trims it (`05.1`), so there a merge by the other
    /// strategy rewrote every such cell. Conflicts then go by that text, as the stream's
    /// always did: by time, except between offsets.
    fn read_value(&self, expr: &str, declared: &str) -> Option<String> {
        let base = super::portable::base_name(declared);
        if READ_AS_TEXT.contains(&base.as_str()) {
            return Some(format!("CAST({expr} AS NVARCHAR(40))"));
        }
        READ_AS_DECIMAL
            .contains(&base.as_str())
            .then(|| format!("CAST({expr} AS DECIMAL(19,4))"))
    }

    fn read_key(&self, expr: &str, declared: &str) -> Option<String> {
        let base = super::portable::base_name(declared);
        match READ_AS_TEXT.contains(&base.as_str()) {
            true => None,
            false => self.read_value(expr, declared),
        }
    }

    fn text_conversion_loss(&self, declared: &str) -> Option<&'static str> {
        let base = super::portable::base_name(declared);
        TEXT_CONVERSION_LOSSES
            .iter()
            .find(|(types, _)| types.contains(&base.as_str()))
            .map(|(_, loss)| *loss)
    }

    /// `DATETIME` and `SMALLDATETIME` read `yyyy-mm-dd hh:mm:ss` as year-day-month under a
    /// `dmy` login language (SET DATEFORMAT); `DATETIME2` reads it the same way under any:
    /// the text goes through it, and SQL Server rounds it to the column as it would have.
    fn cast_to(&self, expr: &str, typed: &Typed) -> String {
        match super::portable::base_name(&typed.sql_type).as_str() {
            _ if typed.kind.is_text() => expr.to_string(),
            "datetime" | "smalldatetime" => {
                format!("CAST(CAST({expr} AS DATETIME2(7)) AS {})", typed.sql_type)
            }
            _ => format!("CAST({expr} AS {})", typed.sql_type),
        }
    }

    /// `NVARCHAR(n)` counts UTF-16 code units, up to 4,000.
    /// `TRIM(TRAILING … FROM …)` is SQL Server 2022's and Babelfish rejects it: cut at the
    /// last character that is not `0` (found in the reversed text), and that one too when it
    /// is the point.
    fn trim_fraction(&self, expr: &str) -> String {
        let last = format!("PATINDEX('%[^0]%', REVERSE({expr}))");
        format!(
            "CASE WHEN {expr} LIKE '%.%' THEN LEFT({expr}, LEN({expr}) - {last} +              CASE WHEN SUBSTRING(REVERSE({expr}), {last}, 1) = '.' THEN 0 ELSE 1 END) ELSE {expr} END"
        )
    }

    fn bounded_text_type(&self, _chars: u64, utf16: u64, _bytes: u64) -> Option<(String, usize)> {
        (utf16 <= 4_000).then(|| (format!("NVARCHAR({})", utf16.max(1)), 0))
    }

    fn max_columns(&self) -> Option<usize> {
        Some(MAX_COLUMNS_PER_TABLE)
    }

    fn row_budget(&self) -> Option<RowBudget> {
        Some(RowBudget::SQL_SERVER)
    }

    /// Bytes of the value as the NVARCHAR the target column holds (2 per UTF-16 unit).
    fn value_bytes(&self, v: &str) -> String {
        format!("DATALENGTH(CAST({v} AS NVARCHAR(MAX)))")
    }

    /// Index keys take at most 900 bytes and no LOB types ((N)VARCHAR(MAX), TEXT, NTEXT,
    /// IMAGE, XML); anything not listed here is refused, to stay on the safe side.
    fn key_bytes(&self, ty: &str) -> Option<usize> {
        let (base, len) = super::type_parts(ty);
        match base.as_str() {
            "tinyint" | "bit" => Some(1),
            "smallint" => Some(2),
            "int" | "date" | "smalldatetime" | "real" => Some(4),
            "bigint" | "datetime" | "datetime2" | "float" | "money" | "time" => Some(8),
            "datetimeoffset" => Some(10),
            "decimal" | "numeric" | "uniqueidentifier" => Some(17),
            "char" | "varchar" | "binary" | "varbinary" => len,
            "nchar" | "nvarchar" => len.map(|n| n.saturating_mul(2)),
            _ => None,
        }
    }

    fn max_key_bytes(&self) -> Option<usize> {
        Some(900)
    }
}

impl Schema for MsSql {
    fn stream_load(&self, table: &TableRef, columns: &[String]) -> (String, &'static str) {
        let cols: Vec<String> = columns.iter().map(|c| self.quote_ident(c)).collect();
        (
            format!(
                "INSERT BULK {table} ({}) WITH (CHECK_CONSTRAINTS, KEEP_NULLS, FIRE_TRIGGERS)",
                cols.join(", ")
            ),
            "stream: wide rows bulk loaded in batches, each column typed as the server describes it (by multi-row INSERT where a value cannot be sent exactly)",
        )
    }

    /// `kept`: SQL Server's `ALTER COLUMN` resets what it is not told, the collation to the
    /// database's and the nullability to the session's default.
    fn alter_column_type(
        &self,
        table: &TableRef,
        column: &str,
        sql_type: &str,
        kept: Option<&str>,
    ) -> Option<String> {
        Some(format!(
            "ALTER TABLE {table} ALTER COLUMN {} {}",
            self.quote_ident(column),
            super::ddl::retyped(sql_type, kept)
        ))
    }

    /// `NOCOUNT OFF`: a server whose `user options` turn NOCOUNT on for every session would
    /// report no row counts, and the stream's loads are checked by their counts.
    fn begin(&self) -> String {
        "SET XACT_ABORT ON; SET NOCOUNT OFF; BEGIN TRANSACTION".into()
    }

    fn commit(&self) -> String {
        "COMMIT TRANSACTION".into()
    }

    fn rollback(&self) -> String {
        "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION".into()
    }

    fn rename_table(&self, from: &TableRef, to: &TableRef) -> String {
        format!(
            // `@objtype`: Babelfish requires it; SQL Server accepts it.
            "EXEC sp_rename {}, {}, N'OBJECT'",
            self.quote_literal(&from.sql()),
            self.quote_literal(&to.name())
        )
    }
}

/// A column's name as it was created, in SQL Server's branch of [`MsSql::listing_names`].
/// Babelfish's `sys.columns` lists names lower-cased (SQL Server's keeps them), so a merge
/// could not tell the target's `color` (attribute `color`) from `Color`'s column; both
/// servers' `INFORMATION_SCHEMA.COLUMNS` keep the case. The same column by name under the
/// database's collation (names are unique under it); a table the view does not list (another
/// database, `tempdb`) keeps `sys.columns`' name. Babelfish runs [`original_name`] instead;
/// a test runs this branch there too and checks the two agree.
fn case_kept_name() -> &'static str {
    "CAST(COALESCE(i.COLUMN_NAME, c.name) AS NVARCHAR(128))"
}

/// The join [`case_kept_name`] reads, over `sys.columns c`.
fn case_kept_join() -> &'static str {
    "LEFT JOIN INFORMATION_SCHEMA.COLUMNS i ON i.TABLE_SCHEMA = OBJECT_SCHEMA_NAME(c.object_id) \
     AND i.TABLE_NAME = OBJECT_NAME(c.object_id) \
     AND CAST(i.COLUMN_NAME AS NVARCHAR(128)) COLLATE DATABASE_DEFAULT = CAST(c.name AS NVARCHAR(128)) COLLATE DATABASE_DEFAULT"
}

/// Babelfish keeps a name over 63 bytes under a shortened one (`sys.columns` lists
/// `colour_xxx…` and an MD5, `INFORMATION_SCHEMA.COLUMNS` its first 63 characters), so a
/// merge took such a column for a new one and failed adding it again. The name as created
/// is kept in the column's options (`bbf_original_name`, with its case and every character).
fn original_name() -> &'static str {
    "CAST(COALESCE((SELECT o.option_value FROM pg_catalog.pg_attribute a \
     CROSS APPLY pg_catalog.pg_options_to_table(a.attoptions) o \
     WHERE a.attrelid = c.object_id AND a.attnum = c.column_id AND o.option_name = 'bbf_original_name'), c.name) AS NVARCHAR(128))"
}

impl MsSql {
    /// A query over `sys.columns c` that lists column names: `query(name, join)` with the
    /// name as created. On Babelfish (`SERVERPROPERTY('babelfish')`, NULL on SQL Server) it
    /// runs through `sp_executesql`, so that SQL Server never compiles its catalog's names.
    fn listing_names(&self, query: impl Fn(&str, &str) -> String) -> String {
        format!(
            "IF CAST(SERVERPROPERTY('babelfish') AS INT) = 1 EXEC sp_executesql {} ELSE {}",
            self.quote_literal(&query(original_name(), "")),
            query(case_kept_name(), case_kept_join())
        )
    }
}

impl Catalog for MsSql {
    /// `sp_rename` renames only in the current database, and `sys.columns` lists only its
    /// tables: a target in another database would fail its swap after the whole load, and a
    /// merge would not see its columns.
    fn target_name_problem(&self, table: &TableRef) -> Option<String> {
        let database = table.database()?;
        Some(format!(
            "it names the database {database}, and eavpivot writes only in the database it is connected to (sp_rename and sys.columns work there alone); connect to {database} (/{database} in the URL, Database={database} in an ADO.NET string) and name the table without it"
        ))
    }

    /// By the database's collation, as SQL Server compares column names: under the common
    /// ones `ß` is `ss` and a full-width letter its ASCII one, and under an `_AI` one `é` is
    /// `e` — which lower-casing cannot tell, so CREATE TABLE refused such pairs. Names of
    /// printable ASCII alone compare as the key has it under every case-insensitive
    /// collation: no query for them.
    fn identifier_classes(&self, names: &[String]) -> Option<String> {
        let plain = |n: &String| n.bytes().all(|b| b == b' ' || b.is_ascii_graphic());
        if names.iter().all(plain) {
            return None;
        }
        let rows: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("({i}, {})", self.quote_literal(n)))
            .collect();
        Some(format!(
            "SELECT v.i, DENSE_RANK() OVER (ORDER BY v.n COLLATE DATABASE_DEFAULT) AS class\nFROM (VALUES {}) v(i, n)",
            rows.join(", ")
        ))
    }

    /// Names are cast to NVARCHAR: `sysname` is NVARCHAR on SQL Server but VARCHAR on
    /// Babelfish, whose replies then carry a name in the server's code page ('☃' as '?'), so
    /// a merge took an existing column for a new one. See [`case_kept_name`] and
    /// [`original_name`].
    fn table_columns(&self, table: &TableRef) -> String {
        let table = self.quote_literal(&table.sql());
        self.listing_names(|name, join| {
            format!(
                "SELECT {name} FROM sys.columns c {join} WHERE c.object_id = OBJECT_ID({table}) ORDER BY c.column_id"
            )
        })
    }

    /// Lengths, precision and scale spelled out as `CREATE TABLE` declares them; third, what an
    /// `ALTER COLUMN` must restate: a collation other than the database's, and on SQL Server
    /// the nullability (Babelfish keeps it, and rejects both clauses there). An alias type
    /// (`CREATE TYPE name FROM NVARCHAR(10)`, `sysname`) is its base type, which a merge can
    /// compare and widen (by its own name it was refused); CLR types (`system_type_id` 240:
    /// `geometry`, `hierarchyid`) keep theirs.
    fn column_types(&self, table: &TableRef) -> String {
        let table = self.quote_literal(&table.sql());
        self.listing_names(|name, join| {
            format!(
                "SELECT {name}, CASE WHEN t.name IN ('decimal', 'numeric') THEN CONCAT(t.name, '(', c.precision, ',', c.scale, ')') WHEN t.name IN ('datetime2', 'time') THEN CONCAT(t.name, '(', c.scale, ')') WHEN t.name IN ('nvarchar', 'nchar') THEN CONCAT(t.name, '(', CASE WHEN c.max_length = -1 THEN 'max' ELSE CAST(c.max_length / 2 AS VARCHAR(10)) END, ')') WHEN t.name IN ('varchar', 'char') THEN CONCAT(t.name, '(', CASE WHEN c.max_length = -1 THEN 'max' ELSE CAST(c.max_length AS VARCHAR(10)) END, ')') ELSE t.name END, CONCAT(CASE WHEN c.collation_name <> (SELECT d.collation_name FROM sys.databases d WHERE d.name = DB_NAME()) THEN CONCAT('COLLATE ', c.collation_name) END, CASE WHEN CAST(SERVERPROPERTY('babelfish') AS INT) = 1 THEN NULL WHEN c.is_nullable = 0 THEN ' NOT NULL' ELSE ' NULL' END) FROM sys.columns c JOIN sys.types t ON t.user_type_id = CASE WHEN c.system_type_id = 240 THEN c.user_type_id ELSE c.system_type_id END {join} WHERE c.object_id = OBJECT_ID({table}) ORDER BY c.column_id"
            )
        })
    }

    /// A `rowversion` (type 189) is filled by the server on every write, like a computed or
    /// identity column, and takes no value either.
    fn filled_columns(&self, table: &TableRef) -> Option<String> {
        let table = self.quote_literal(&table.sql());
        Some(self.listing_names(|name, join| {
            format!(
                "SELECT {name}, CASE WHEN c.is_computed = 1 OR c.is_identity = 1 OR c.system_type_id = 189 THEN 1 ELSE 0 END FROM sys.columns c {join} WHERE c.object_id = OBJECT_ID({table}) AND (c.is_computed = 1 OR c.is_identity = 1 OR c.system_type_id = 189 OR c.default_object_id <> 0) ORDER BY c.column_id"
            )
        }))
    }

    /// Another table's foreign key (the DROP of the replaced table fails) and a view bound to
    /// it `WITH SCHEMABINDING` (its rename fails) block; triggers, indexes but the primary
    /// key, its own CHECK and foreign-key constraints and grants go with the replaced table.
    /// Babelfish lists neither schema-bound views nor grants here (nor, then, blocks on them).
    fn replace_leaves(&self, table: &TableRef) -> Option<String> {
        let t = format!("OBJECT_ID({})", self.quote_literal(&table.sql()));
        Some(format!(
            "SELECT 'foreign key ' + f.name + ' of ' + OBJECT_NAME(f.parent_object_id), 1 FROM sys.foreign_keys f \
             WHERE f.referenced_object_id = {t} AND f.parent_object_id <> f.referenced_object_id \
             UNION ALL SELECT 'view ' + OBJECT_NAME(d.referencing_id), 1 FROM sys.sql_expression_dependencies d \
             WHERE d.referenced_id = {t} AND d.is_schema_bound_reference = 1 \
             UNION ALL SELECT 'trigger ' + g.name, 0 FROM sys.triggers g WHERE g.parent_id = {t} \
             UNION ALL SELECT 'index ' + i.name, 0 FROM sys.indexes i WHERE i.object_id = {t} AND i.is_primary_key = 0 AND i.name IS NOT NULL \
             UNION ALL SELECT 'constraint ' + o.name, 0 FROM sys.objects o WHERE o.parent_object_id = {t} AND o.type IN ('C', 'F') \
             UNION ALL SELECT 'grant ' + p.permission_name + ' to ' + USER_NAME(p.grantee_principal_id), 0 FROM sys.database_permissions p \
             WHERE p.class = 1 AND p.major_id = {t} AND p.state IN ('G', 'W') \
             ORDER BY 2 DESC, 1"
        ))
    }

    fn view_exists(&self, table: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT COUNT(*) FROM sys.views WHERE object_id = OBJECT_ID({})",
            self.quote_literal(&table.sql())
        ))
    }

    fn table_identity(&self, table: &TableRef) -> String {
        format!("SELECT OBJECT_ID({})", self.quote_literal(&table.sql()))
    }

    fn table_exists(&self, table: &TableRef) -> String {
        format!(
            "SELECT CASE WHEN OBJECT_ID({}, N'U') IS NULL THEN 0 ELSE 1 END",
            self.quote_literal(&table.sql())
        )
    }
}

impl Query for MsSql {
    /// Sent exactly as printed: `--dry-run` shows this EXEC, not the bare SELECT.
    fn describe_entity(&self, source: &super::SourceQuery) -> String {
        self.describe_first_result_set(&super::entity_probe_query(self, source))
    }

    fn describe_value(&self, source: &super::SourceQuery) -> String {
        self.describe_first_result_set(&super::query::value_probe_query(self, source))
    }

    /// Unmeasured on a real server: keep the pushdown up to a conservative width (its
    /// per-row CASE cost grows with width).
    fn stream_above_columns(&self) -> usize {
        32
    }

    /// A session or server with `SET NOCOUNT ON` reports no row counts: the entities are
    /// counted by their own query.
    fn counts_inserted_rows(&self) -> bool {
        false
    }

    fn text_equality(&self) -> super::TextEquality {
        super::TextEquality::Collation
    }

    /// A `_CI` collation orders `it's` before `NULL`; a BIN2 collation orders by code point
    /// (trailing spaces are still ignored: `a` and `a ` tie, as in every SQL Server
    /// comparison). A VARCHAR goes to NVARCHAR of its length first, so that the collation
    /// changes no character (its code page may not be Latin1's).
    fn value_in_byte_order(&self, v: &str, declared: Option<&str>) -> Option<String> {
        let declared = declared?.to_ascii_uppercase();
        let as_unicode = match declared.split('(').next().unwrap_or_default().trim() {
            "NVARCHAR" | "NCHAR" => v.to_string(),
            "VARCHAR" | "CHAR" => {
                // NVARCHAR(n) holds at most 4,000 characters.
                let length = declared
                    .split_once('(')
                    .and_then(|(_, rest)| rest.trim_end_matches(')').trim().parse::<u32>().ok())
                    .filter(|&n| n <= 4000)
                    .map_or("MAX".to_string(), |n| n.to_string());
                format!("CAST({v} AS NVARCHAR({length}))")
            }
            _ => return None,
        };
        Some(format!("{as_unicode} COLLATE {BINARY_COLLATION}"))
    }
}

impl Script for MsSql {
    /// T-SQL's ordered aggregation (`STRING_AGG … WITHIN GROUP`, SQL Server 2017) is missing
    /// from Babelfish before 4.3, and `FOR XML PATH('')` with `.value()` from Babelfish
    /// altogether; a concatenation of one `MAX(CASE)` per position runs on both and on SQL
    /// Server 2008. Recursive members are written like the published T-SQL solver: constants
    /// inline, the recursive text column converted to one type in both members.
    fn spelling(&self) -> Option<&'static super::Spelling> {
        use super::spelling::*;
        Some(&Spelling {
            concat: Concat::Function,
            substring: "SUBSTRING",
            position: Position::NeedleFirst("CHARINDEX"),
            integer_division: IntegerDivision::Slash,
            modulo_function: false,
            constant_from: "",
            cast_integer: "INTEGER",
            ordered_concat: OrderedConcat::CasePerPosition("+"),
            with_recursive: "WITH",
            with_before_insert: true,
            recursive_text_converted: true,
            inline_constants: true,
            // SQL Server documents no fixed limit since 2008 (2005: 256 tables per SELECT,
            // the number its JDBC driver still reports); 256 also bounds a 16×16 grid.
            max_join_tables: Some((256, "SQL Server joins at most 256 tables per SELECT (its documented limit up to 2005, still reported by its drivers)")),
            lift_recursion_limit: "\nOPTION (MAXRECURSION 0)",
        })
    }

    fn standalone_script(
        &self,
        plan: &super::script::ScriptPlan,
        options: super::script::ScriptOptions,
    ) -> crate::error::Result<String> {
        let aggregation = match options.for_xml_path {
            true => super::mssql_script::Aggregation::ForXmlPath,
            false => super::mssql_script::Aggregation::Ordered,
        };
        super::mssql_script::render(plan, aggregation)
    }
}
