//! MariaDB / MySQL. Backslash is an escape character in literals (unless NO_BACKSLASH_ESCAPES),
//! column names compare case-insensitively and may not end in a space, and DDL commits on its
//! own, so loads go into a staging table made visible by one atomic `RENAME TABLE`.

use super::{
    Catalog, ColumnKind, IdentLimit, Query, Quoting, RowBudget, Schema, Script, Typed, Types,
};
use crate::table_ref::TableRef;

pub struct MariaDb;

/// SQL giving the text of `expr` as a string literal for this session: `QUOTE()` escapes with
/// backslashes, which a session under `NO_BACKSLASH_ESCAPES` would read as characters. For
/// the catalog's texts (comments) that a statement restates: COMMENT takes no expression.
fn literal_in_sql(expr: &str) -> String {
    format!(
        "IF(@@SESSION.sql_mode LIKE '%NO_BACKSLASH_ESCAPES%', CONCAT('''', REPLACE({expr}, '''', ''''''), ''''), QUOTE({expr}))"
    )
}

impl MariaDb {
    /// The schema a table name resolves to: its own, or the connection's database.
    fn schema_of(&self, table: &TableRef) -> String {
        match table.schema() {
            Some(s) => self.quote_literal(&s),
            None => "DATABASE()".into(),
        }
    }

    fn in_catalog(&self, table: &TableRef) -> String {
        self.in_catalog_as("", table)
    }

    /// [`MariaDb::in_catalog`] for catalog columns under an alias (`"k."`).
    fn in_catalog_as(&self, alias: &str, table: &TableRef) -> String {
        format!(
            "{} AND {}",
            name_is(&format!("{alias}table_schema"), &self.schema_of(table)),
            name_is(
                &format!("{alias}table_name"),
                &self.quote_literal(&table.name())
            )
        )
    }

    /// Statements run on every new connection: UTF-8 in and out, whatever the server default;
    /// and strict mode for every table (the server's own modes kept), so that a value a column
    /// cannot hold fails the statement instead of being stored as `?` or cut short: a server
    /// set to `sql_mode = ''`, or the default `STRICT_TRANS_TABLES` on a table of a
    /// non-transactional engine (MyISAM, Aria), would otherwise change it with a warning.
    ///
    /// And `explicit_defaults_for_timestamp` on (the default since 10.10): off, as a legacy
    /// `my.cnf` has it, a `TIMESTAMP NOT NULL` key column is created `DEFAULT
    /// current_timestamp() ON UPDATE current_timestamp()`, and a merge's UPDATE rewrote the
    /// entity's key with the time of the merge.
    pub fn session_setup(&self) -> Vec<String> {
        vec![
            "SET NAMES utf8mb4".into(),
            "SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'STRICT_ALL_TABLES')"
                .into(),
            "SET SESSION explicit_defaults_for_timestamp = ON".into(),
        ]
    }

    /// One row, one integer: the largest packet (so statement) the server accepts.
    pub fn max_packet_query(&self) -> &'static str {
        "SELECT @@max_allowed_packet"
    }

    /// One row, one integer: 1 when the server accepts `LOAD DATA LOCAL INFILE`.
    pub fn local_infile_query(&self) -> &'static str {
        "SELECT @@local_infile"
    }

    /// The bulk load: `LOAD DATA LOCAL INFILE` of tab-separated lines the backend streams
    /// from memory (no file is read; the name is only what the server asks the client for).
    ///
    /// The format, which [`MariaDb::load_data_field`] writes: fields end in TAB, lines in LF,
    /// `\` escapes, `\N` is NULL, nothing encloses fields. The separators are hex literals so
    /// the statement means the same under `NO_BACKSLASH_ESCAPES`, and `CHARACTER SET binary`
    /// stores the bytes as sent (UTF-8 text stays UTF-8, binary columns get exact bytes).
    pub fn load_data_local(&self, table: &TableRef, columns: &[String]) -> String {
        let cols: Vec<String> = columns.iter().map(|c| self.quote_ident(c)).collect();
        format!(
            "LOAD DATA LOCAL INFILE 'eavpivot-stream' INTO TABLE {table} CHARACTER SET binary \
             FIELDS TERMINATED BY X'09' ESCAPED BY X'5C' LINES TERMINATED BY X'0A' ({})",
            cols.join(", ")
        )
    }

    /// Append one field of a [`MariaDb::load_data_local`] line to `out`: `None` is NULL.
    /// Byte-wise, so any bytes survive: the escaped bytes are ASCII and never occur inside a
    /// multi-byte UTF-8 sequence.
    pub fn load_data_field(&self, value: Option<&[u8]>, out: &mut Vec<u8>) {
        let Some(bytes) = value else {
            out.extend_from_slice(b"\\N");
            return;
        };
        for &b in bytes {
            match b {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\t' => out.extend_from_slice(b"\\t"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                0 => out.extend_from_slice(b"\\0"),
                _ => out.push(b),
            }
        }
    }

    /// The first warnings of the last statement: `LOAD DATA LOCAL` turns data errors (a value
    /// that does not fit its column, a duplicate key) into warnings, so any warning fails the
    /// load as the strict-mode INSERT would have.
    pub fn warnings_query(&self) -> &'static str {
        "SHOW WARNINGS LIMIT 3"
    }
}

impl Quoting for MariaDb {
    fn name(&self) -> &'static str {
        "mariadb"
    }

    fn quote_ident(&self, name: &str) -> String {
        format!("`{}`", name.replace('`', "``"))
    }

    /// As a hex literal of the UTF-8 bytes: immune to sql_mode, charset and backslash rules.
    fn quote_literal(&self, text: &str) -> String {
        if text.is_empty() {
            return "''".into();
        }
        let hex: String = text.bytes().map(|b| format!("{b:02X}")).collect();
        format!("CONVERT(X'{hex}' USING utf8mb4)")
    }

    fn ident_limit(&self) -> IdentLimit {
        IdentLimit::Chars(64)
    }

    /// Column names compare case-insensitively but accent-sensitively (verified on 10.11:
    /// `é`/`e` may coexist, `É`/`é` and `a`/`A` may not): each character lowered alone by
    /// `utf8mb3_general_ci`'s table. That is Unicode's simple mapping, one character for one,
    /// so `İ` is `i` (not `i̇`) and a final `Σ` is `σ` (not `ς`); checked against the server's
    /// `LOWER` for every BMP character, where it lowers no character that this key keeps.
    fn ident_key(&self, name: &str) -> String {
        name.chars()
            .flat_map(|c| match c {
                '\u{130}' => 'i'.to_lowercase(),
                c => c.to_lowercase(),
            })
            .collect()
    }

    fn column_name_problem(&self, name: &str) -> Option<&'static str> {
        if name.contains('\0') {
            Some("contains a NUL character")
        } else if name.chars().any(|c| u32::from(c) > 0xFFFF) {
            // Identifiers are utf8mb3: `Invalid utf8mb4 character string` otherwise.
            Some("contains a character outside the Basic Multilingual Plane (such as an emoji), which MariaDB identifiers cannot hold")
        } else if name.ends_with(' ') {
            Some("ends with a space, which MariaDB does not allow in a column name")
        } else {
            None
        }
    }

    /// Bytes, not characters: the default collations ignore case and trailing spaces.
    fn attribute_key(&self, attribute_expr: &str) -> String {
        format!("CAST(CONVERT({attribute_expr} USING utf8mb4) AS BINARY)")
    }

    fn attribute_key_literal(&self, name: &str) -> String {
        let hex: String = name.bytes().map(|b| format!("{b:02X}")).collect();
        if hex.is_empty() {
            "CAST('' AS BINARY)".into()
        } else {
            format!("X'{hex}'")
        }
    }

    fn null_safe_eq(&self, a: &str, b: &str) -> String {
        format!("{a} <=> {b}")
    }
}

impl Types for MariaDb {
    fn text_type(&self) -> &'static str {
        "LONGTEXT"
    }

    /// MariaDB sends a FLOAT as text with 6 significant digits (16777216 arrives as
    /// 16777200, 123456.7 as 123457); as a DOUBLE, with the digits that give it back exactly.
    fn read_value(&self, expr: &str, declared: &str) -> Option<String> {
        (super::portable::base_name(declared) == "float").then(|| format!("CAST({expr} AS DOUBLE)"))
    }

    fn type_name_of(&self, kind: &ColumnKind) -> Option<String> {
        Some(match kind {
            ColumnKind::Int => "INT".into(),
            ColumnKind::Timestamp { fraction } => format!("DATETIME({fraction})"),
            ColumnKind::Float => "DOUBLE".into(),
            other => return other.standard_sql(),
        })
    }

    /// `VARCHAR(n)` counts characters; utf8mb4 declares 4 bytes each plus a 2-byte length
    /// against the 65,535-byte row limit.
    fn bounded_text_type(&self, chars: u64, _utf16: u64, _bytes: u64) -> Option<(String, usize)> {
        let n = usize::try_from(chars.max(1)).ok()?;
        (n <= 16_383).then(|| (format!("VARCHAR({n})"), 4 * n + 2))
    }

    /// CAST knows CHAR, not LONGTEXT.
    fn text_of(&self, expr: &str) -> String {
        format!("CAST({expr} AS CHAR)")
    }

    fn declared_row_limit(&self) -> Option<usize> {
        Some(65_535)
    }

    /// MariaDB's CAST knows SIGNED, DECIMAL, DATE, DATETIME and DOUBLE, not the column types.
    fn cast_to(&self, expr: &str, typed: &Typed) -> String {
        let target = match &typed.kind {
            k if k.is_integer() => "SIGNED".to_string(),
            ColumnKind::Decimal { precision, scale } => format!("DECIMAL({precision},{scale})"),
            ColumnKind::Date => "DATE".into(),
            ColumnKind::Timestamp { fraction } => format!("DATETIME({fraction})"),
            ColumnKind::Float => "DOUBLE".into(),
            // Text, and declared types: the INSERT converts as the column says.
            _ => return expr.to_string(),
        };
        format!("CAST({expr} AS {target})")
    }

    /// InnoDB's limit (`errno: 185 "Too many columns"` above 1,017); the server's own is 4,096.
    fn max_columns(&self) -> Option<usize> {
        Some(1_017)
    }

    /// Measured on MariaDB 10.11 (InnoDB, DYNAMIC, strict, 16 KiB pages): CREATE TABLE with
    /// an INT key takes 383 LONGTEXT columns and refuses 384 (`Row size too large (> 8126)`):
    /// 5 header + 19 system-column bytes, then 21 bytes and one null bit per column.
    /// At insert, DYNAMIC rows keep values of up to 40 bytes in the row (plus a length byte)
    /// and move longer ones off-page, longest first, leaving a 20-byte reference and a
    /// 2-byte length. Measured on 10.11 with an INT primary key and 383 LONGTEXT columns:
    /// 383 × 20-byte values insert, 383 × 21 do not; 365 × 41-byte (or 1,000-byte) values
    /// insert, 368 do not (22 in-row bytes each).
    fn row_budget(&self) -> Option<RowBudget> {
        Some(RowBudget {
            max_bytes: 8_126,
            overhead: 24,
            inline_max: 40,
            length_bytes: 1,
            pointer: 22,
            create_charge: Some(21),
        })
    }

    /// Bytes of the value as the utf8mb4 text a LONGTEXT column stores.
    fn value_bytes(&self, v: &str) -> String {
        format!("OCTET_LENGTH(CONVERT({v} USING utf8mb4))")
    }

    /// InnoDB cannot key TEXT/BLOB/JSON without a prefix length (`BLOB/TEXT column … used
    /// in key specification without a key length`), and a key spans at most 3,072 bytes
    /// (DYNAMIC rows); a utf8mb4 character may take 4.
    fn key_bytes(&self, ty: &str) -> Option<usize> {
        let (base, len) = super::type_parts(ty);
        let base = base.trim_end_matches(" unsigned");
        match base {
            "tinyint" | "smallint" | "mediumint" | "int" | "integer" | "bigint" | "float"
            | "double" | "date" | "datetime" | "timestamp" | "time" | "year" | "bit" => Some(8),
            "decimal" | "numeric" => Some(32),
            "char" | "varchar" => len.map(|n| n.saturating_mul(4)),
            "binary" | "varbinary" => len,
            _ => None,
        }
    }

    fn max_key_bytes(&self) -> Option<usize> {
        Some(3_072)
    }

    /// `datetime` without a length has no fractional digits here.
    fn portable_type(&self, declared: &str) -> Option<ColumnKind> {
        let lower = declared.trim().to_ascii_lowercase();
        if lower == "datetime" || lower == "timestamp" {
            return Some(ColumnKind::Timestamp { fraction: 0 });
        }
        super::portable::parse(declared)
    }
}

impl Schema for MariaDb {
    fn stream_load(&self, table: &TableRef, columns: &[String]) -> (String, &'static str) {
        (
            self.load_data_local(table, columns),
            "stream: wide rows loaded in batches by LOAD DATA LOCAL (by multi-row INSERT where the server's local_infile is off or a batch holds floats)",
        )
    }

    fn begin(&self) -> String {
        "START TRANSACTION".into()
    }

    fn transactional_ddl(&self) -> bool {
        false
    }

    /// Only `utf8mb4` holds every value the stream and the pushdown write (a `latin1` schema's
    /// `LONGTEXT` refused `☃`, or took its UTF-8 bytes as three Latin-1 characters): where the
    /// schema's default is another character set, `DEFAULT CHARSET=utf8mb4` with the `utf8mb4`
    /// collation of the same rules as its default where there is one (`utf8mb3_unicode_ci` →
    /// `utf8mb4_unicode_ci`; names from the server's own catalog). A schema already in it keeps
    /// its own collation (NULL: no option). The script reads the same query. The `COLLATE=`
    /// is made inside the subquery, which gives NULL when no collation matches: under
    /// `sql_mode = ORACLE`, `CONCAT` takes a NULL as `''`, and `COLLATE= COMMENT` failed.
    fn created_table_options(&self, table: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT CASE WHEN s.default_character_set_name <> 'utf8mb4' THEN CONCAT('DEFAULT CHARSET=utf8mb4', COALESCE((SELECT CONCAT(' COLLATE=', c.collation_name) FROM information_schema.collations c WHERE c.character_set_name = 'utf8mb4' AND c.collation_name = REGEXP_REPLACE(s.default_collation_name, '^utf8(mb3)?_', 'utf8mb4_')), '')) END AS table_options FROM information_schema.schemata s WHERE s.schema_name = {}",
            self.schema_of(table)
        ))
    }

    /// Used on a merge's copy of the target, outside the transaction (DDL is not
    /// transactional here).
    /// `MODIFY` redefines the whole column: `kept` restates its character set and collation,
    /// `NOT NULL`, default, `ON UPDATE` and comment, which it would otherwise drop.
    fn alter_column_type(
        &self,
        table: &TableRef,
        column: &str,
        sql_type: &str,
        kept: Option<&str>,
    ) -> Option<String> {
        Some(format!(
            "ALTER TABLE {table} MODIFY {} {}",
            self.quote_ident(column),
            super::ddl::retyped(sql_type, kept)
        ))
    }

    fn upsert_style(&self) -> super::merge::UpsertStyle {
        super::merge::UpsertStyle::UpdateJoinThenInsert
    }

    fn create_table_like(&self, new: &TableRef, old: &TableRef) -> Option<String> {
        Some(format!("CREATE TABLE {new} LIKE {old}"))
    }

    /// COMMENT takes only a plain string literal; the write path's marks are plain text
    /// (letters, digits, `_-. `), so quotes are all they need.
    fn mark_created(&self, create_table: String, mark: &str) -> String {
        format!(
            "{create_table} COMMENT = '{}'",
            mark.replace(['\\', '\''], "_")
        )
    }

    /// One atomic RENAME TABLE swaps both names: readers see the old table or the new, never
    /// none. Dropping the old table afterwards is cleanup.
    fn swap_in(
        &self,
        staging: &TableRef,
        target: &TableRef,
        replaced: Option<&TableRef>,
    ) -> Vec<String> {
        match replaced {
            None => vec![self.rename_table(staging, target)],
            Some(old) => vec![
                format!("RENAME TABLE {target} TO {old}, {staging} TO {target}"),
                self.drop_table(old),
            ],
        }
    }

    fn rename_table(&self, from: &TableRef, to: &TableRef) -> String {
        format!("RENAME TABLE {from} TO {to}")
    }
}

/// `column = literal` for a schema or table name as the server resolves it: case-sensitively
/// where it keeps names as given (`lower_case_table_names = 0`, the default on Linux:
/// `ITEM_WIDE` and `item_wide` are two tables), else as the catalog's collation compares
/// (names stored in lower case, or compared so). The catalog alone compares case-insensitively,
/// which took `item_wide` for a target named `ITEM_WIDE`.
fn name_is(column: &str, literal: &str) -> String {
    format!(
        "({column} = {literal} AND (@@lower_case_table_names <> 0 OR CAST({column} AS BINARY) = CAST({literal} AS BINARY)))"
    )
}

impl Catalog for MariaDb {
    /// `CREATE TABLE … LIKE` copies neither triggers nor foreign keys; a trigger is dropped
    /// with the replaced table, and a foreign key of another table follows the rename to it.
    fn lost_by_copy(&self, table: &TableRef) -> Option<String> {
        let (schema, name) = (self.schema_of(table), self.quote_literal(&table.name()));
        let is = |column: &str, literal: &str| name_is(column, literal);
        Some(format!(
            "SELECT 'trigger', trigger_name FROM information_schema.triggers WHERE {} AND {} \
             UNION ALL SELECT 'foreign key', constraint_name FROM information_schema.referential_constraints WHERE {} AND {} \
             UNION ALL SELECT 'foreign key of another table', CONCAT(table_name, '.', constraint_name) FROM information_schema.referential_constraints WHERE {} AND {}",
            is("event_object_schema", &schema),
            is("event_object_table", &name),
            is("constraint_schema", &schema),
            is("table_name", &name),
            is("unique_constraint_schema", &schema),
            is("referenced_table_name", &name),
        ))
    }

    /// Another table's foreign key follows the RENAME to the replaced table, which then cannot
    /// be dropped (every later run of the job would fail on it): it blocks. Triggers,
    /// indexes but the primary key, its own foreign keys and CHECK constraints, and grants on
    /// the table go with the replaced table.
    fn replace_leaves(&self, table: &TableRef) -> Option<String> {
        let (schema, name) = (self.schema_of(table), self.quote_literal(&table.name()));
        let is = |column: &str, literal: &str| name_is(column, literal);
        Some(format!(
            "SELECT CONCAT('foreign key ', constraint_name, ' of ', table_name), 1 FROM information_schema.referential_constraints WHERE {} AND {} AND NOT ({} AND {}) \
             UNION ALL SELECT CONCAT('trigger ', trigger_name), 0 FROM information_schema.triggers WHERE {} AND {} \
             UNION ALL SELECT DISTINCT CONCAT('index ', index_name), 0 FROM information_schema.statistics WHERE {} AND index_name <> 'PRIMARY' \
             UNION ALL SELECT CONCAT('constraint ', constraint_name), 0 FROM information_schema.referential_constraints WHERE {} AND {} \
             UNION ALL SELECT CONCAT('constraint ', constraint_name), 0 FROM information_schema.check_constraints WHERE {} AND {} \
             UNION ALL SELECT CONCAT('grant ', privilege_type, ' to ', grantee), 0 FROM information_schema.table_privileges WHERE {} \
             ORDER BY 2 DESC, 1",
            is("unique_constraint_schema", &schema),
            is("referenced_table_name", &name),
            is("constraint_schema", &schema),
            is("table_name", &name),
            is("event_object_schema", &schema),
            is("event_object_table", &name),
            self.in_catalog(table),
            is("constraint_schema", &schema),
            is("table_name", &name),
            is("constraint_schema", &schema),
            is("table_name", &name),
            self.in_catalog(table),
        ))
    }

    /// An empty comment is restored too (the mark is eavpivot's, not the user's).
    fn restore_comment(&self, table: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT CONCAT('ALTER TABLE ', {target}, ' COMMENT = ', {comment}) FROM information_schema.tables WHERE {}",
            self.in_catalog(table),
            target = self.quote_literal(&table.to_string()),
            comment = literal_in_sql("table_comment"),
        ))
    }

    fn view_exists(&self, table: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE {} AND table_type = 'VIEW'",
            self.in_catalog(table)
        ))
    }

    /// PRIMARY KEY and UNIQUE indexes of the table named exactly so. A key with a binary
    /// column is left out: the attribute key reads bytes as UTF-8, so two byte strings could
    /// become one key.
    fn unique_keys(&self, table: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT k.index_name, k.column_name FROM information_schema.statistics k WHERE k.non_unique = 0 AND {} AND NOT EXISTS (SELECT 1 FROM information_schema.statistics x JOIN information_schema.columns c ON c.table_schema = x.table_schema AND c.table_name = x.table_name AND c.column_name = x.column_name WHERE x.table_schema = k.table_schema AND x.table_name = k.table_name AND x.index_name = k.index_name AND c.data_type IN ('binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob'))",
            self.in_catalog_as("k.", table)
        ))
    }

    fn table_exists(&self, table: &TableRef) -> String {
        format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE {}",
            self.in_catalog(table)
        )
    }

    fn upsert_keys(&self, table: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT index_name, column_name FROM information_schema.statistics WHERE non_unique = 0 AND {}",
            self.in_catalog(table)
        ))
    }

    /// `column_default` is the text `NULL` for a nullable column without a default; a
    /// timestamp's `ON UPDATE` comes with its default.
    fn filled_columns(&self, table: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT column_name, CASE WHEN is_generated = 'ALWAYS' THEN 1 ELSE 0 END FROM information_schema.columns WHERE {} AND (is_generated = 'ALWAYS' OR extra LIKE '%auto_increment%' OR (column_default IS NOT NULL AND column_default <> 'NULL')) ORDER BY ordinal_position",
            self.in_catalog(table)
        ))
    }

    fn table_columns(&self, table: &TableRef) -> String {
        format!(
            "SELECT column_name FROM information_schema.columns WHERE {} ORDER BY ordinal_position",
            self.in_catalog(table)
        )
    }

    /// Third: the rest of the column's definition, as `MODIFY` must restate it.
    fn column_types(&self, table: &TableRef) -> String {
        format!(
            "SELECT column_name, column_type, NULLIF(CONCAT_WS(' ', \
             IF(character_set_name IS NULL, NULL, CONCAT('CHARACTER SET ', character_set_name, ' COLLATE ', collation_name)), \
             IF(is_nullable = 'NO', 'NOT NULL', NULL), \
             IF(column_default IS NULL OR column_default = 'NULL', NULL, CONCAT('DEFAULT ', column_default)), \
             IF(extra LIKE 'on update %', extra, NULL), \
             IF(column_comment = '', NULL, CONCAT('COMMENT ', {comment}))), '') \
             FROM information_schema.columns WHERE {} ORDER BY ordinal_position",
            self.in_catalog(table),
            comment = literal_in_sql("column_comment"),
        )
    }

    fn table_identity(&self, table: &TableRef) -> String {
        format!(
            "SELECT (SELECT CONCAT(table_schema, '.', table_name) FROM information_schema.tables WHERE {} LIMIT 1)",
            self.in_catalog(table)
        )
    }

    /// A named lock per table (GET_LOCK names are server-wide, at most 64 characters): held by
    /// the connection, so a run killed with -9 releases it with its connection.
    fn write_lock(&self, table: &TableRef) -> Option<String> {
        let name = format!(
            "CONCAT('eavpivot:', SHA1(CONCAT({}, '.', {})))",
            self.schema_of(table),
            self.quote_literal(&table.name())
        );
        Some(format!("SELECT GET_LOCK({name}, 0), IS_USED_LOCK({name})"))
    }

    fn leftover_tables(&self, table: &TableRef, prefix: &str) -> Option<String> {
        let pattern: String = prefix
            .chars()
            .flat_map(|c| match c {
                '!' | '%' | '_' => vec!['!', c],
                c => vec![c],
            })
            .chain(['%'])
            .collect();
        Some(format!(
            "SELECT table_name, table_comment FROM information_schema.tables WHERE {} AND table_name LIKE {pattern} ESCAPE '!' AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) LIKE CAST({pattern} AS BINARY) ESCAPE '!')",
            name_is("table_schema", &self.schema_of(table)),
            pattern = self.quote_literal(&pattern)
        ))
    }

    /// Rows, and two hashes of every row (each cell's text as hex, exact for numbers too, `N`
    /// for NULL): CRC32 summed and half an MD5 XORed, so that no single change leaves both as
    /// they were. A locking read: it sees (and holds) the latest committed rows, as the merge's INSERT … SELECT does.
    fn table_fingerprint(&self, table: &TableRef, columns: &[String]) -> Option<String> {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| {
                format!(
                    "COALESCE(HEX(CAST({} AS BINARY)), 'N')",
                    self.quote_ident(c)
                )
            })
            .collect();
        let row = format!("CONCAT_WS(',', {})", cells.join(", "));
        Some(format!(
            "SELECT COUNT(*), COALESCE(SUM(CRC32({row})), 0), COALESCE(BIT_XOR(CAST(CONV(LEFT(MD5({row}), 16), 16, 10) AS UNSIGNED)), 0) FROM {table} LOCK IN SHARE MODE"
        ))
    }
}

impl Query for MariaDb {
    fn text_equality(&self) -> super::TextEquality {
        super::TextEquality::Collation
    }

    /// `_ci` collations order `it's` before `NULL`; `utf8mb4_nopad_bin` orders UTF-8 by
    /// code point, trailing spaces included.
    fn value_in_byte_order(&self, v: &str, declared: Option<&str>) -> Option<String> {
        super::declared_text(declared)
            .then(|| format!("CONVERT({v} USING utf8mb4) COLLATE utf8mb4_nopad_bin"))
    }

    fn column_charset_query(&self, table: &TableRef, column: &str) -> Option<String> {
        Some(format!(
            "SELECT character_set_name FROM information_schema.columns WHERE {} AND column_name = {}",
            self.in_catalog(table),
            self.quote_literal(column)
        ))
    }

    /// A utf8mb4 column compared under `utf8mb4_nopad_bin` (code point by code point, no
    /// padding: equal exactly when the UTF-8 bytes are) needs no conversion per column per
    /// row; the `X'…'` literal is converted once, and every name it is built from was read
    /// from this column. A utf8mb3 column already holds the UTF-8 bytes the general key
    /// converts to, so its bytes as they are compare exactly (a collation would convert
    /// the literal to utf8mb3, which has no emoji). Other character sets keep the general
    /// key. Measured at 10,000 × 100: hand statement 26.8 s, general key ~45 s, bytes
    /// 32.5 s, `nopad_bin` 27.2 s (BENCHMARKS.md "Pushdown at the cost of its SQL").
    fn attribute_key_of_charset(&self, attribute_expr: &str, charset: &str) -> Option<String> {
        match charset.to_ascii_lowercase().as_str() {
            "utf8mb4" => Some(format!("{attribute_expr} COLLATE utf8mb4_nopad_bin")),
            "utf8mb3" | "utf8" => Some(format!("CAST({attribute_expr} AS BINARY)")),
            _ => None,
        }
    }

    /// From benches/pivot on loopback, quiet machine (BENCHMARKS.md "Remote links", 1M
    /// source rows, n = 2): pushdown 2.10 s at 10 columns and 6.06 s at 100, so 3.96 s per
    /// 90M more CASE arms (44 ns each, 2.5× PostgreSQL's); the rest of the 10-column run
    /// less ~0.5 s of work both strategies do is the row cost. The stream took 2.14 s (10
    /// columns) and 1.85 s (100): 1.64 µs a row. A text-protocol row carries a 4-byte packet
    /// header and a 1-byte length per short field; `LOAD DATA` a separator per field. `REPEAT` gives NULL past
    /// `max_allowed_packet` (the probe then sees the wrong size and gives up).
    fn pivot_costs(&self) -> Option<super::PivotCosts> {
        Some(super::PivotCosts {
            case_cell_ns: 44.0,
            pushdown_row_ns: 1160.0,
            stream_row_ns: 1640.0,
            row_overhead_bytes: 7,
            field_overhead_bytes: 1,
            filler: "SELECT REPEAT('x', {bytes})",
        })
    }
}

impl Script for MariaDb {
    fn spelling(&self) -> Option<&'static super::Spelling> {
        use super::spelling::*;
        Some(&Spelling {
            concat: Concat::Function,
            substring: "SUBSTRING",
            position: Position::HaystackFirst("INSTR"),
            // `/` gives a decimal.
            integer_division: IntegerDivision::DivOperator,
            modulo_function: false,
            constant_from: "",
            cast_integer: "SIGNED",
            ordered_concat: OrderedConcat::SeparatorClause,
            with_recursive: "WITH RECURSIVE",
            with_before_insert: false,
            recursive_text_converted: false,
            inline_constants: false,
            // "Too many tables; MariaDB can only use 61 tables in a join" (MAX_TABLES).
            max_join_tables: Some((61, "MariaDB joins at most 61 tables")),
            lift_recursion_limit: "",
        })
    }

    fn script_renderer(&self) -> Option<super::script::Renderer> {
        Some(super::mariadb_script::render)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(value: Option<&str>) -> String {
        let mut out = Vec::new();
        MariaDb.load_data_field(value.map(str::as_bytes), &mut out);
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn load_data_fields_escape_separators_and_keep_null_apart_from_text() {
        assert_eq!(field(None), "\\N");
        assert_eq!(field(Some("\\N")), "\\\\N");
        assert_eq!(field(Some("")), "");
        assert_eq!(field(Some("a\tb\nc\r\0d\\")), "a\\tb\\nc\\r\\0d\\\\");
        assert_eq!(field(Some("日本 😀")), "日本 😀");
    }

    #[test]
    fn the_cheaper_attribute_key_is_only_for_utf8_columns() {
        assert_eq!(
            MariaDb.attribute_key_of_charset("k.attr", "utf8mb4"),
            Some("k.attr COLLATE utf8mb4_nopad_bin".into())
        );
        for utf8mb3 in ["utf8mb3", "UTF8"] {
            assert_eq!(
                MariaDb.attribute_key_of_charset("k.attr", utf8mb3),
                Some("CAST(k.attr AS BINARY)".into())
            );
        }
        for other in ["latin1", "ucs2", "binary"] {
            assert_eq!(MariaDb.attribute_key_of_charset("k.attr", other), None);
        }
    }
}
