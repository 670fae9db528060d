//! Oracle Database 12.2 or later: a dialect with no backend (no Oracle server runs where
//! eavpivot is built and tested), so `eavpivot script --dialect oracle` and `run --dry-run`
//! render its SQL and an independent parser checks it (tests/golden/oracle_parse.rs (suite golden)).
//!
//! What differs from the portable shape, and why:
//! - **Names.** `"…"` quotes and keeps a name exactly (case-sensitive); an unquoted name is
//!   folded to upper case, so an entity key written `item_id` becomes the column `ITEM_ID`,
//!   what `SELECT item_id FROM item_wide` finds. Table names are pasted as written (Oracle
//!   folds them itself) and looked up in the catalog folded the same way. Attribute columns
//!   are always quoted and kept exactly: `Color` and `COLOR` are two columns. A quoted name
//!   cannot hold `"` or NUL and is at most 128 bytes (12.2's limit, counted in the database
//!   character set's bytes: AL32UTF8 assumed).
//! - **'' is NULL.** Oracle stores an empty string as NULL. An empty value in the source is
//!   already NULL there, so its cell is NULL (not counted as a value); an empty attribute name
//!   is NULL too, and is skipped or refused with the NULL names (`pivot.empty_names`). The
//!   plan says so on every Oracle run ([`Script::plan_notes`]). Attribute names are compared
//!   as `'|' || name` so that no comparison ever meets NULL (`s.a <> ''` is never true here).
//! - **DDL commits.** Every CREATE/ALTER/DROP commits on its own, as on MariaDB: loads go into
//!   a staging table that is renamed into place. Oracle has no atomic swap of two names: a
//!   replaced target is renamed aside, then the staging table renamed in; between the two
//!   renames (milliseconds) a reader finds no table. The run's write lock is a DBMS_LOCK
//!   user lock (needs EXECUTE on DBMS_LOCK), held until the session ends.
//! - **Types.** CLOB for text, `VARCHAR2(n CHAR)` where every value fits 4,000 bytes,
//!   `NUMBER(p)` for integers, DATE and TIMESTAMP(0) for dates and times (converted with
//!   explicit format models, so inserts do not depend on NLS settings). Decimals and floats
//!   stay text: `TO_CHAR` prints `0.5` as `.5`, so they would not print back as written.
//! - **Recursion** is written `WITH s (cols) AS (… UNION ALL …)`: no RECURSIVE keyword, the
//!   column list required ([`Script::spelling`]).

use super::prelude::*;
use super::{ColumnKind, IdentLimit, Typed};
use crate::table_ref::TableRef;

pub struct Oracle;

/// Marks every attribute key (`'|' || name`), so an empty name is `'|'`, never NULL.
const KEY_MARK: char = '|';

/// Index keys of an 8 KB block hold at most 6,398 bytes (ORA-01450).
const MAX_KEY_BYTES: usize = 6_398;

impl Oracle {
    /// Statements a session must run first, so that `TO_CHAR` prints dates and timestamps
    /// in the forms the typed round-trip check compares with the source text. Without them
    /// that check fails (it never passes wrongly).
    pub fn session_setup(&self) -> Vec<String> {
        vec![
            "ALTER SESSION SET NLS_DATE_FORMAT = 'YYYY-MM-DD'".into(),
            "ALTER SESSION SET NLS_TIMESTAMP_FORMAT = 'YYYY-MM-DD HH24:MI:SS'".into(),
        ]
    }

    /// The name the catalog holds for one part of a table name as written: a quoted part
    /// exactly, an unquoted one folded to upper case.
    fn catalog_part(&self, written: &str) -> String {
        match written.strip_prefix('"').and_then(|p| p.strip_suffix('"')) {
            Some(exact) => exact.to_string(),
            None => written.to_ascii_uppercase(),
        }
    }

    /// The owner of `table` as a SQL expression: its schema as written, else the session's.
    fn owner_of(&self, table: &TableRef) -> String {
        let written = table.sql();
        let schema = written[..written.len() - table.last_part().len()]
            .strip_suffix('.')
            .and_then(|s| TableRef::parse(s).ok());
        match schema {
            Some(s) => self.quote_literal(&self.catalog_part(s.last_part())),
            None => "SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA')".into(),
        }
    }

    /// `owner = … AND <name_column> = …` of `table` in an `all_*` catalog view.
    fn in_catalog(&self, table: &TableRef, name_column: &str) -> String {
        format!(
            "owner = {} AND {name_column} = {}",
            self.owner_of(table),
            self.quote_literal(&self.catalog_part(table.last_part()))
        )
    }

    /// The DBMS_LOCK user-lock id of writing `table`: a hash of its owner and name into the
    /// range DBMS_LOCK leaves to applications (0 to 1,073,741,823).
    fn lock_id(&self, table: &TableRef) -> String {
        format!(
            "ORA_HASH('eavpivot:' || {} || '.' || {}, 1073741823)",
            self.owner_of(table),
            self.quote_literal(&self.catalog_part(table.last_part()))
        )
    }
}

impl Quoting for Oracle {
    fn name(&self) -> &'static str {
        "oracle"
    }

    /// `'` doubled; a NUL by `CHR(0)`. Note that `''` is NULL to Oracle.
    fn nul_splice(&self) -> &'static str {
        "' || CHR(0) || '"
    }

    /// Oracle has no hex string literal: the bytes as RAW, read as text of the database
    /// character set.
    fn text_bytes_literal(&self, bytes: &[u8]) -> String {
        format!(
            "UTL_RAW.CAST_TO_VARCHAR2(HEXTORAW('{}'))",
            crate::value::hex(bytes)
        )
    }

    fn ident_limit(&self) -> IdentLimit {
        IdentLimit::Bytes(128)
    }

    fn unquoted_case(&self) -> super::UnquotedCase {
        super::UnquotedCase::Upper
    }

    /// Quoted names are case-sensitive and kept exactly.
    fn ident_key(&self, name: &str) -> String {
        name.to_string()
    }

    fn column_name_problem(&self, name: &str) -> Option<&'static str> {
        if name.is_empty() {
            Some("is empty, which Oracle does not allow as a name")
        } else if name.contains('\0') {
            Some("contains a NUL character")
        } else if name.contains('"') {
            Some("contains a double quote, which an Oracle name cannot hold even quoted")
        } else {
            None
        }
    }

    /// `'|' || name`: an empty name (NULL to Oracle) becomes `'|'`, so that every test of a
    /// name compares text with text; VARCHAR2 compares without padding, so trailing spaces
    /// and case stay apart (NLS_COMP=BINARY, the default).
    fn attribute_key(&self, attribute_expr: &str) -> String {
        format!("'{KEY_MARK}' || {attribute_expr}")
    }

    fn attribute_key_literal(&self, name: &str) -> String {
        self.quote_literal(&self.encode_attribute_key(name))
    }

    fn encode_attribute_key(&self, name: &str) -> String {
        format!("{KEY_MARK}{name}")
    }

    fn decode_attribute_key(&self, raw: String) -> String {
        match raw.strip_prefix(KEY_MARK) {
            Some(name) => name.to_string(),
            None => raw,
        }
    }

    fn placeholder(&self, index: usize) -> String {
        format!(":{index}")
    }

    fn limit(&self, query: &str, n: u64) -> String {
        format!("{query} FETCH FIRST {n} ROWS ONLY")
    }
}

impl Types for Oracle {
    /// Unicode in a database of character set AL32UTF8 (the default since 12.2).
    fn text_type(&self) -> &'static str {
        "CLOB"
    }

    /// ORA-01792: at most 1,000 columns per table.
    fn max_columns(&self) -> Option<usize> {
        Some(1_000)
    }

    fn value_bytes(&self, v: &str) -> String {
        format!("LENGTHB({v})")
    }

    /// LOBs cannot be keyed; the rest by their largest stored size.
    fn key_bytes(&self, ty: &str) -> Option<usize> {
        let (base, len) = super::type_parts(ty);
        let char_semantics = ty.to_ascii_lowercase().contains(" char)");
        match base.as_str() {
            "number" | "integer" | "float" => Some(22),
            "date" => Some(7),
            "timestamp" => Some(11),
            "binary_double" => Some(8),
            "binary_float" => Some(4),
            "varchar2" | "char" if char_semantics => len.map(|n| n.saturating_mul(4)),
            "varchar2" | "char" | "raw" => len,
            "nvarchar2" | "nchar" => len.map(|n| n.saturating_mul(2)),
            _ => None,
        }
    }

    fn max_key_bytes(&self) -> Option<usize> {
        Some(MAX_KEY_BYTES)
    }

    fn integer_type(&self) -> &'static str {
        "NUMBER(19)"
    }

    /// Integers, dates and whole-second timestamps print back as written (under
    /// [`Oracle::session_setup`]); `TO_CHAR` drops a decimal's leading zero (`.5`), pads
    /// fractions to the column's scale, and has no boolean.
    fn stores(&self, kind: &ColumnKind) -> bool {
        match kind {
            ColumnKind::Decimal { .. } | ColumnKind::Float | ColumnKind::Boolean => false,
            ColumnKind::Timestamp { fraction } => *fraction == 0,
            _ => true,
        }
    }

    fn type_name_of(&self, kind: &ColumnKind) -> Option<String> {
        Some(match kind {
            ColumnKind::SmallInt => "NUMBER(5)".into(),
            ColumnKind::Int => "NUMBER(10)".into(),
            ColumnKind::BigInt => "NUMBER(19)".into(),
            ColumnKind::Decimal { precision, scale } => format!("NUMBER({precision},{scale})"),
            ColumnKind::Float => "BINARY_DOUBLE".into(),
            // An entity key read from another database: Oracle SQL has no boolean column.
            ColumnKind::Boolean => "NUMBER(1)".into(),
            other => return other.standard_sql(),
        })
    }

    /// `VARCHAR2(n CHAR)` holds at most 4,000 bytes (MAX_STRING_SIZE = STANDARD).
    fn bounded_text_type(&self, chars: u64, _utf16: u64, bytes: u64) -> Option<(String, usize)> {
        let declared = usize::try_from(bytes).ok()?;
        (bytes <= 4_000).then(|| (format!("VARCHAR2({} CHAR)", chars.max(1)), declared))
    }

    /// Format models, not NLS settings, read the ladder's forms.
    fn cast_to(&self, expr: &str, typed: &Typed) -> String {
        match &typed.kind {
            k if k.is_text() => expr.to_string(),
            ColumnKind::Date => format!("TO_DATE({expr}, 'YYYY-MM-DD')"),
            ColumnKind::Timestamp { .. } => {
                format!("TO_TIMESTAMP({expr}, 'YYYY-MM-DD HH24:MI:SS')")
            }
            _ => format!("CAST({expr} AS {})", typed.sql_type),
        }
    }

    /// CAST to CLOB would compare as a LOB (ORA-00932): text of at most 4,000 bytes.
    fn text_of(&self, expr: &str) -> String {
        format!("TO_CHAR({expr})")
    }

    /// Oracle's DATE holds a time of day too; `NUMBER(p,0)` is an integer.
    fn portable_type(&self, declared: &str) -> Option<ColumnKind> {
        let (base, len) = super::type_parts(declared);
        let whole = declared.replace(' ', "").to_ascii_lowercase();
        match base.as_str() {
            "date" => Some(ColumnKind::Timestamp { fraction: 0 }),
            "number" if whole.ends_with(",0)") || !whole.contains(',') => match len {
                Some(p) if p <= 4 => Some(ColumnKind::SmallInt),
                Some(p) if p <= 9 => Some(ColumnKind::Int),
                Some(p) if p <= 18 => Some(ColumnKind::BigInt),
                _ => super::portable::parse(declared),
            },
            "binary_double" | "binary_float" => Some(ColumnKind::Float),
            _ => super::portable::parse(declared),
        }
    }
}

impl Schema for Oracle {
    /// A transaction starts with its first change; this states it, and fails loudly
    /// (ORA-01453) if one is somehow already open.
    fn begin(&self) -> String {
        "SET TRANSACTION READ WRITE".into()
    }

    /// Every CREATE, ALTER, RENAME and DROP commits on its own.
    fn transactional_ddl(&self) -> bool {
        false
    }

    /// Oracle before 23ai has no multi-row VALUES: several rows are one `INSERT ALL`.
    fn insert_values(&self, table: &TableRef, columns: &[String], rows: usize) -> String {
        let cols: Vec<String> = columns.iter().map(|c| self.quote_ident(c)).collect();
        let cols = cols.join(", ");
        let into: Vec<String> = (0..rows)
            .map(|r| {
                let params: Vec<String> = (1..=columns.len())
                    .map(|c| self.placeholder(r * columns.len() + c))
                    .collect();
                format!("INTO {table} ({cols}) VALUES ({})", params.join(", "))
            })
            .collect();
        match rows {
            1 => format!("INSERT {}", into.join("")),
            _ => format!("INSERT ALL\n  {}\nSELECT 1 FROM dual", into.join("\n  ")),
        }
    }

    /// `MODIFY` changes only what it names: the column keeps the rest of its definition.
    fn alter_column_type(
        &self,
        table: &TableRef,
        column: &str,
        sql_type: &str,
        _kept: Option<&str>,
    ) -> Option<String> {
        Some(format!(
            "ALTER TABLE {table} MODIFY ({} {sql_type})",
            self.quote_ident(column)
        ))
    }

    fn upsert_style(&self) -> super::merge::UpsertStyle {
        super::merge::UpsertStyle::MergeInto
    }

    /// Columns and types (and NOT NULL), no rows.
    fn create_table_like(&self, new: &TableRef, old: &TableRef) -> Option<String> {
        Some(format!(
            "CREATE TABLE {new} AS SELECT * FROM {old} WHERE 1 = 0"
        ))
    }

    /// Three statements, not one: a reader may find no table between the two renames.
    fn swap_in(
        &self,
        staging: &TableRef,
        target: &TableRef,
        replaced: Option<&TableRef>,
    ) -> Vec<String> {
        match replaced {
            None => vec![self.rename_table(staging, target)],
            Some(old) => vec![
                self.rename_table(target, old),
                self.rename_table(staging, target),
                self.drop_table(old),
            ],
        }
    }
}

impl Catalog for Oracle {
    fn table_exists(&self, table: &TableRef) -> String {
        format!(
            "SELECT COUNT(*) FROM all_tables WHERE {}",
            self.in_catalog(table, "table_name")
        )
    }

    fn view_exists(&self, table: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT COUNT(*) FROM all_views WHERE {}",
            self.in_catalog(table, "view_name")
        ))
    }

    /// The object id changes when a table of that name is dropped and made again.
    fn table_identity(&self, table: &TableRef) -> String {
        format!(
            "SELECT MAX(object_id) FROM all_objects WHERE {} AND object_type IN ('TABLE', 'VIEW')",
            self.in_catalog(table, "object_name")
        )
    }

    fn table_columns(&self, table: &TableRef) -> String {
        format!(
            "SELECT column_name FROM all_tab_columns WHERE {} ORDER BY column_id",
            self.in_catalog(table, "table_name")
        )
    }

    /// Lengths, precision and scale spelled out as `CREATE TABLE` declares them.
    fn column_types(&self, table: &TableRef) -> String {
        format!(
            "SELECT column_name, CASE WHEN data_type = 'NUMBER' AND data_precision IS NOT NULL THEN 'NUMBER(' || data_precision || ',' || data_scale || ')' WHEN data_type IN ('VARCHAR2', 'NVARCHAR2', 'CHAR', 'NCHAR') THEN data_type || '(' || char_length || CASE WHEN char_used = 'C' THEN ' CHAR' END || ')' ELSE data_type END FROM all_tab_columns WHERE {} ORDER BY column_id",
            self.in_catalog(table, "table_name")
        )
    }

    /// A DBMS_LOCK user lock in exclusive mode (6, X_MODE: SQL cannot name a package
    /// constant), not waited for (0), and not released at commit (`release_on_commit` left
    /// at its default FALSE: SQL before 23ai has no BOOLEAN to pass): held until the session
    /// ends, so a killed run releases it. REQUEST returns 0 when granted and 4 when this
    /// session holds it already. The holder is not named: that needs V$LOCK.
    fn write_lock(&self, table: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT CASE WHEN DBMS_LOCK.REQUEST({}, 6, 0) IN (0, 4) THEN 1 ELSE 0 END, NULL FROM dual",
            self.lock_id(table)
        ))
    }
}

impl Query for Oracle {
    /// Unmeasured on a real server: keep the pushdown up to a conservative width (its
    /// per-row CASE cost grows with width).
    fn stream_above_columns(&self) -> usize {
        32
    }
}

impl Script for Oracle {
    fn plan_notes(&self) -> Vec<String> {
        vec![
            "oracle: an empty string is NULL in Oracle, so empty values are NULL cells (not counted as values) and empty attribute names are treated as NULL names (pivot.empty_names); no value read from Oracle is an empty string".into(),
            "oracle: DDL commits on its own and two tables cannot swap names at once: a replaced target is renamed aside before the new table takes its name, so a reader may find no table for that moment".into(),
        ]
    }

    /// Recursive subquery factoring: `WITH s (cols) AS (… UNION ALL …)`, no RECURSIVE; no `%`
    /// operator; `/` gives a decimal; constants are selected FROM dual.
    fn spelling(&self) -> Option<&'static super::Spelling> {
        use super::spelling::*;
        Some(&Spelling {
            concat: Concat::Operator("||"),
            substring: "substr",
            position: Position::HaystackFirst("INSTR"),
            integer_division: IntegerDivision::TruncatedSlash,
            modulo_function: true,
            constant_from: " FROM dual",
            cast_integer: "INTEGER",
            ordered_concat: OrderedConcat::WithinGroup,
            with_recursive: "WITH",
            with_before_insert: false,
            recursive_text_converted: false,
            inline_constants: false,
            // Oracle documents no limit on the tables of one join.
            max_join_tables: None,
            lift_recursion_limit: "",
        })
    }

    fn script_renderer(&self) -> Option<super::script::Renderer> {
        Some(super::oracle_script::render)
    }
}

impl super::SessionSql for Oracle {
    /// DDL_LOCK_TIMEOUT bounds the wait for a table's DDL lock (CREATE, RENAME, DROP), in
    /// whole seconds. Oracle has no session setting for row-lock waits.
    fn lock_timeout(&self, timeout: std::time::Duration) -> Vec<String> {
        vec![format!(
            "ALTER SESSION SET DDL_LOCK_TIMEOUT = {}",
            timeout.as_secs().clamp(1, 1_000_000)
        )]
    }

    fn session_id(&self) -> Option<String> {
        Some("SELECT TO_NUMBER(SYS_CONTEXT('USERENV', 'SID')) FROM dual".into())
    }

    /// Needs SELECT on V$SESSION (SELECT_CATALOG_ROLE); without it, nothing is named.
    fn lock_holders(&self, id: i64) -> Vec<String> {
        vec![format!(
            "SELECT o.object_name, 'session ' || w.blocking_session, COALESCE(b.program, b.username, '?') \
             FROM v$session w JOIN v$session b ON b.sid = w.blocking_session \
             LEFT JOIN all_objects o ON o.object_id = w.row_wait_obj# \
             WHERE w.sid = {id} AND w.blocking_session IS NOT NULL"
        )]
    }
}

impl super::Identity for Oracle {
    /// A table name reaches every schema of one database (a PDB): the database and
    /// container are the key.
    fn server_identity(&self) -> Vec<String> {
        vec!["SELECT SYS_CONTEXT('USERENV', 'DB_UNIQUE_NAME'), SYS_CONTEXT('USERENV', 'CON_NAME') FROM dual".into()]
    }

    fn view_reads(&self, view: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT referenced_owner, referenced_name FROM all_dependencies WHERE {} AND type = 'VIEW' AND referenced_type IN ('TABLE', 'VIEW')",
            self.in_catalog(view, "name")
        ))
    }
}

#[cfg(test)]
#[path = "oracle_tests.rs"]
mod tests;
