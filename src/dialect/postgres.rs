//! PostgreSQL. Quoted identifiers keep their case and compare exactly, but anything longer than
//! 63 bytes is silently truncated (only a NOTICE), so the byte limit is enforced before any DDL.

use super::query;
use super::{Catalog, ColumnKind, IdentLimit, Query, Quoting, RowBudget, Schema, Script, Types};
use crate::table_ref::TableRef;

pub struct Postgres;

impl Postgres {
    /// Run on every new connection: the output formats every value is read in, whatever a
    /// legacy database or role set. `extra_float_digits = 3` prints a float8 exactly (shortest
    /// round trip since PostgreSQL 12; at 0 or below, the pre-12 default, 15 digits); `DateStyle
    /// = ISO` sets only the output (`2020-01-02`, not `02/01/2020`), keeping the field order
    /// the user's own literals are read in; `IntervalStyle` and `bytea_output` back to their
    /// defaults, which the stream reads.
    pub fn session_setup(&self) -> String {
        SESSION_SETTINGS
            .iter()
            .map(|(name, value)| format!("SET {name} = {value}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The settings of [`Postgres::session_setup`], as `(name, value)`: the standalone script sets
/// them for its own transaction.
pub const SESSION_SETTINGS: [(&str, &str); 4] = [
    ("extra_float_digits", "3"),
    ("DateStyle", "ISO"),
    ("IntervalStyle", "postgres"),
    ("bytea_output", "hex"),
];

/// A `real` (`single`) or `double precision` as PostgreSQL 12+ prints it at
/// `extra_float_digits > 0` (`float4out`/`float8out`, Ryu): the shortest digits strictly inside
/// the value's rounding interval, in fixed notation where the decimal exponent is in -4 ..< 6
/// (real) or -4 ..< 15 (double), else `d.ddde+XX` with at least two exponent digits; `NaN`,
/// `Infinity`, `-Infinity`, `-0`.
pub fn float_out(value: f64, single: bool) -> String {
    if value.is_nan() {
        return "NaN".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // A real may arrive as the double nearest its text (`1e-05`), not as itself; a value no
    // real holds (none does today) is printed as a double rather than as 0 or infinity.
    let real = f64::from(value.abs() as f32);
    let single = single && real.is_finite() && real != 0.0;
    let magnitude = if single { real } else { value.abs() };
    let (digits, exponent) = shortest_digits(magnitude, single);
    let sign = if value < 0.0 { "-" } else { "" };
    let fixed_below = if single { 6 } else { 15 };
    let body = if (-4..fixed_below).contains(&exponent) {
        let point = exponent + 1;
        match point {
            p if p <= 0 => format!("0.{}{digits}", "0".repeat(p.unsigned_abs() as usize)),
            p if p as usize >= digits.len() => {
                format!("{digits}{}", "0".repeat(p as usize - digits.len()))
            }
            p => format!("{}.{}", &digits[..p as usize], &digits[p as usize..]),
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let esign = if exponent < 0 { '-' } else { '+' };
        format!("{first}{point}{rest}e{esign}{:02}", exponent.unsigned_abs())
    };
    format!("{sign}{body}")
}

/// The digits (no trailing zeros) and decimal exponent of the first digit of PostgreSQL's
/// shortest text of a positive finite `value`. Rust's `{:e}` is the shortest decimal that
/// reads back as the value, but it may lie exactly halfway to a neighbouring float (read back
/// by round-half-even); PostgreSQL's Ryu accepts no such tie and takes the closest decimal
/// with more digits instead (`3.1722300588172752e+16`, not `3.172230058817275e+16`).
fn shortest_digits(value: f64, single: bool) -> (String, i32) {
    let text = |digits: Option<usize>| match (single, digits) {
        (true, None) => format!("{:e}", value as f32),
        (false, None) => format!("{value:e}"),
        (true, Some(d)) => format!("{:.*e}", d - 1, value as f32),
        (false, Some(d)) => format!("{value:.*e}", d - 1),
    };
    let max_digits = if single { 9 } else { 17 };
    // Rust's shortest reads back by construction; one correctly rounded to more digits only
    // from 17 (9) digits on, so each longer one is checked.
    let mut candidate = split_scientific(&text(None));
    let mut digits = candidate.0.len();
    let mut fits = !on_bound(&candidate, value, single);
    while digits < max_digits && !fits {
        digits += 1;
        candidate = split_scientific(&text(Some(digits)));
        fits = reads_back(&candidate, value, single) && !on_bound(&candidate, value, single);
    }
    // The value exactly halfway between two decimals of this length (2^-25 =
    // 2.98023223876953125e-08): Ryu keeps the even one, Rust rounds up.
    // 800 digits hold every float's exact decimal expansion (a double's has at most 767).
    let halfway = text(Some(digits + 1));
    let (mantissa, _) = halfway.split_once('e').unwrap_or((&halfway, ""));
    let exactly_halfway = mantissa.ends_with('5') && {
        let exact = text(Some(800));
        let beyond = exact
            .split_once('e')
            .map_or("", |(m, _)| m)
            .get(digits + 2..);
        beyond.is_some_and(|rest| rest.bytes().all(|b| b == b'0'))
    };
    if exactly_halfway {
        let (low, exponent) = split_scientific(&text(Some(digits + 1)));
        let low: String = format!("{low:0<width$}", width = digits + 1)[..digits].to_string();
        if let Ok(low) = low.parse::<u64>() {
            let even = low + low % 2;
            let carried = even.to_string().len() > digits;
            let pick = split_scientific(&format!("{even}e{}", 0));
            let pick = (pick.0, exponent + i32::from(carried));
            if reads_back(&pick, value, single) && !on_bound(&pick, value, single) {
                candidate = pick;
            }
        }
    }
    candidate
}

/// `d.ddde±x` as (the digits without trailing zeros, x).
fn split_scientific(text: &str) -> (String, i32) {
    let (mantissa, exponent) = text.split_once('e').unwrap_or((text, "0"));
    let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    (digits, exponent.parse().unwrap_or(0))
}

/// The float a decimal text reads as (correctly rounded, whatever its length), widened.
fn read_float(text: &str, single: bool) -> Option<f64> {
    match single {
        true => text.parse::<f32>().map(f64::from).ok(),
        false => text.parse::<f64>().ok(),
    }
}

/// Whether the decimal `digits`×10^(`exponent` − len + 1) reads back as `value`.
fn reads_back((digits, exponent): &(String, i32), value: f64, single: bool) -> bool {
    let last = exponent - (digits.len() as i32 - 1);
    read_float(&format!("{digits}e{last}"), single) == Some(value)
}

/// Whether that decimal, reading back as `value`, lies exactly on the bound halfway to a
/// neighbour (read back only by round-half-even): nudged by 10⁻⁴⁰ of its last digit either
/// way, it reads back as another float.
fn on_bound((digits, exponent): &(String, i32), value: f64, single: bool) -> bool {
    let last = exponent - (digits.len() as i32 - 1);
    let Ok(whole) = digits.parse::<u64>() else {
        return false;
    };
    // A bound is m·2^k with m odd and below 2^55 (2^26 for a real): whole·10^last can be one
    // only if 5^-last divides whole, or (last ≥ 0) the odd part of whole·5^last is that
    // small. Most decimals (0.1, 123.456) are ruled out here, without parsing.
    let limit: u64 = if single { 1 << 26 } else { 1 << 55 };
    let may_be_bound = match u32::try_from(-last) {
        Ok(fives) => 5u64.checked_pow(fives).is_some_and(|p| whole % p == 0),
        Err(_) => (0..last)
            .try_fold(whole >> whole.trailing_zeros(), |odd, _| {
                odd.checked_mul(5).filter(|&o| o < limit)
            })
            .is_some_and(|odd| odd < limit),
    };
    if !may_be_bound || whole == 0 {
        return false;
    }
    let up = format!("{whole}{}1e{}", "0".repeat(40), last - 41);
    let down = format!("{}{}e{}", whole - 1, "9".repeat(41), last - 41);
    [up, down]
        .iter()
        .any(|t| read_float(t, single) != Some(value))
}

/// `expr` as `text` compared and ordered by its bytes, whatever its type (`citext`, a domain)
/// or collation (a nondeterministic one counts `k` and `K` as one).
fn text_by_bytes(expr: &str) -> String {
    format!("CAST({expr} AS TEXT) COLLATE \"C\"")
}

impl Postgres {
    /// The bulk load: `COPY t (c…) FROM STDIN (FORMAT binary)`, fed by the backend.
    pub fn copy_in_binary(&self, table: &TableRef, columns: &[String]) -> String {
        let cols: Vec<String> = columns.iter().map(|c| self.quote_ident(c)).collect();
        format!(
            "COPY {table} ({}) FROM STDIN (FORMAT binary)",
            cols.join(", ")
        )
    }
}

impl Postgres {
    /// The name PostgreSQL gives `table`'s primary-key index when none is written:
    /// `<table>_pkey`, the table name folded as the parser folds it (unquoted: ASCII lower
    /// case) and cut to fit 63 bytes at a character boundary (`makeObjectName`).
    pub fn default_pkey_name(&self, table: &TableRef) -> String {
        let written = table.last_part();
        let mut name = if written.starts_with('"') {
            table.name()
        } else {
            self.unquoted_case().fold(written)
        };
        while name.len() + "_pkey".len() > 63 {
            name.pop();
        }
        format!("{name}_pkey")
    }
}

impl Quoting for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    /// A text with a backslash is an escape string (`E'back\\slash'`), read the same whatever
    /// `standard_conforming_strings` says: a server, database or role set to `off` (a legacy
    /// setting) read `'back\slash'` as an escape, so the pushdown's `CASE` for that attribute
    /// matched nothing (the run failed verification) and a merge's literals missed.
    fn quote_literal(&self, text: &str) -> String {
        if !text.contains('\\') {
            return super::splice_nul(format!("'{}'", text.replace('\'', "''")), self.nul_splice());
        }
        let escaped = text.replace('\\', "\\\\").replace('\'', "''");
        super::splice_nul(format!("E'{escaped}'"), "' || chr(0) || E'")
    }

    /// PostgreSQL text cannot hold a NUL at all, and one inside the statement text fails in
    /// the protocol with no hint of the value; `chr(0)` fails as one clear line instead
    /// (`null character not permitted`).
    fn nul_splice(&self) -> &'static str {
        "' || chr(0) || '"
    }

    fn ident_limit(&self) -> IdentLimit {
        IdentLimit::Bytes(63)
    }

    /// Unquoted identifiers fold to lower case (ASCII letters only in a UTF-8 database).
    fn unquoted_case(&self) -> super::UnquotedCase {
        super::UnquotedCase::Lower
    }

    /// Quoted identifiers are case-sensitive: only identical names collide.
    fn ident_key(&self, name: &str) -> String {
        name.to_string()
    }

    fn placeholder(&self, index: usize) -> String {
        format!("${index}")
    }

    fn null_safe_eq(&self, a: &str, b: &str) -> String {
        format!("{a} IS NOT DISTINCT FROM {b}")
    }

    /// A constant takes the column's type (an untyped literal) or the column is promoted
    /// exactly (integer to numeric); text never meets a number without an error, and every
    /// collation orders by the same equality it groups by.
    fn constant_comparisons_respect_equality(&self) -> bool {
        true
    }
}

/// The value types [`Types::unaggregated_value`] names, as the backend describes them.
const UNAGGREGATED: [&str; 25] = [
    "boolean",
    "bool",
    "bytea",
    "uuid",
    "json",
    "jsonb",
    "xml",
    "bit",
    "varbit",
    "bit varying",
    "point",
    "line",
    "lseg",
    "box",
    "path",
    "polygon",
    "circle",
    "tsvector",
    "tsquery",
    "macaddr",
    "macaddr8",
    "int4range",
    "int8range",
    "numrange",
    "daterange",
];

impl Types for Postgres {
    fn text_type(&self) -> &'static str {
        "text"
    }

    /// PostgreSQL defines no `max`/`min` for these (15; `uuid` fails first on the binary
    /// collation the comparison would take): `function min(boolean) does not exist`.
    /// A `character(n)` arrives padded to n; PostgreSQL's own text of it (the pushdown's,
    /// any cast) drops the trailing spaces, which its comparisons ignore anyway.
    fn read_value(&self, expr: &str, declared: &str) -> Option<String> {
        let base = super::portable::base_name(declared);
        ["char", "character", "bpchar"]
            .contains(&base.as_str())
            .then(|| format!("CAST({expr} AS text)"))
    }

    fn float_text(&self, declared: &str) -> Option<fn(f64) -> String> {
        match super::portable::base_name(declared).as_str() {
            "real" | "float4" => Some(|v| float_out(v, true)),
            "double precision" | "float8" | "float" => Some(|v| float_out(v, false)),
            _ => None,
        }
    }

    fn unaggregated_value(&self, declared: &str) -> Option<&'static str> {
        let base = super::portable::base_name(declared);
        UNAGGREGATED
            .contains(&base.as_str())
            .then_some("PostgreSQL has no MAX or MIN for them")
    }

    /// Compared by its bytes: a cast keeps the column's collation, and under a
    /// nondeterministic one the check's `=` would pass `TRUE` for `true` and its `LIKE`
    /// fails outright ("nondeterministic collations are not supported for LIKE").
    fn text_of(&self, expr: &str) -> String {
        text_by_bytes(expr)
    }

    /// PostgreSQL 15 plans no `INSERT … SELECT` on parallel workers, but does `CREATE TABLE
    /// … AS`: at 10,000 × 100 the pivot took 6.3 s that way against 11.1 s as an INSERT into
    /// the keyed table (by hand, loaded machine; issue 20); the key after it, one sort, 0.05–0.2 s.
    /// Only where the plan has workers: a small source, or a parallel-restricted function in
    /// the job's expressions, gets no gain from it.
    fn parallel_probe(&self, select: &str) -> Option<(String, &'static str)> {
        Some((
            format!("EXPLAIN (FORMAT JSON) {select}"),
            "\"Node Type\": \"Gather",
        ))
    }

    /// A declared text column gets the database's default collation, as in `CREATE TABLE`
    /// (a source column `COLLATE "C"` would otherwise pass "C" on through the CAST).
    fn created_as_column(&self, expr: &str, sql_type: &str) -> String {
        let ty = sql_type.trim_start().to_ascii_lowercase();
        let collatable = ["text", "varchar", "character", "char", "bpchar"]
            .iter()
            .any(|t| ty.starts_with(t));
        match collatable {
            true => format!("CAST({expr} AS {sql_type}) COLLATE pg_catalog.\"default\""),
            false => format!("CAST({expr} AS {sql_type})"),
        }
    }

    /// `CAST(true AS text)` is `'true'`: booleans print back as the ladder's text.
    fn stores(&self, _kind: &ColumnKind) -> bool {
        true
    }

    /// `tables can have at most 1600 columns`.
    fn max_columns(&self) -> Option<usize> {
        Some(1_600)
    }

    /// Measured on PostgreSQL 15: `row is too big: size …, maximum size 8160`; a 23-byte
    /// tuple header (plus alignment). TOAST moves a value off-row only when it is larger
    /// than its 18-byte pointer aligned to 24 (`toast_tuple_find_biggest_attribute`), so a
    /// short value costs its length plus a 1-byte header, a long one 18 bytes.
    fn row_budget(&self) -> Option<RowBudget> {
        Some(RowBudget {
            max_bytes: 8_160,
            overhead: 32,
            inline_max: 23,
            length_bytes: 1,
            pointer: 18,
            create_charge: None,
        })
    }

    /// The bytes of the text the value becomes in a `text` column.
    fn value_bytes(&self, v: &str) -> String {
        format!("octet_length(({v})::text)")
    }

    /// Any type with a B-tree operator class can be a key; those without one are refused
    /// rather than failing at CREATE TABLE (`data type json has no default operator class`).
    fn key_bytes(&self, ty: &str) -> Option<usize> {
        let (base, _) = super::type_parts(ty);
        let unkeyable = [
            "json", "xml", "point", "line", "lseg", "box", "path", "polygon", "circle",
        ];
        (!unkeyable.contains(&base.as_str())).then_some(0)
    }

    /// `format_type` spells timestamps `timestamp(0) without time zone`.
    fn portable_type(&self, declared: &str) -> Option<ColumnKind> {
        super::portable::parse(&declared.replace(" without time zone", ""))
    }
}

impl Schema for Postgres {
    fn stream_load(&self, table: &TableRef, columns: &[String]) -> (String, &'static str) {
        (
            self.copy_in_binary(table, columns),
            "stream: wide rows loaded in batches by binary COPY (by multi-row INSERT where a column's type has no binary encoder here)",
        )
    }

    /// Drop and rename as usual, then give the primary-key index the name a table created
    /// under the final name would have had: index names do not follow a table rename, and
    /// the next `replace` would otherwise create its staging table's index under the name
    /// the live table's index still holds (`relation "…__eavpivot_new_pkey" already exists`).
    /// `IF EXISTS`: a table without a key has no such index.
    fn swap_in(
        &self,
        staging: &TableRef,
        target: &TableRef,
        replaced: Option<&TableRef>,
    ) -> Vec<String> {
        let mut sql = Vec::new();
        if replaced.is_some() {
            sql.push(self.drop_table(target));
        }
        sql.push(self.rename_table(staging, target));
        // The schema exactly as written (`sales.` or `"Sales".`): it folds as the table does.
        let full = target.sql();
        let schema = &full[..full.len() - target.last_part().len()];
        sql.push(format!(
            "ALTER INDEX IF EXISTS {schema}{} RENAME TO {}",
            self.quote_ident(&self.default_pkey_name(staging)),
            self.quote_ident(&self.default_pkey_name(target))
        ));
        sql
    }

    /// `USING`: a change to text or between kinds may need the explicit conversion. `kept`
    /// is the column's own collation (without it the column takes the new type's default).
    fn alter_column_type(
        &self,
        table: &TableRef,
        column: &str,
        sql_type: &str,
        kept: Option<&str>,
    ) -> Option<String> {
        let c = self.quote_ident(column);
        Some(format!(
            "ALTER TABLE {table} ALTER COLUMN {c} TYPE {} USING CAST({c} AS {sql_type})",
            super::ddl::retyped(sql_type, kept)
        ))
    }

    fn upsert_style(&self) -> super::merge::UpsertStyle {
        super::merge::UpsertStyle::OnConflict
    }
}

impl Catalog for Postgres {
    fn scale_out(&self) -> Option<&'static dyn super::ScaleOut> {
        Some(&super::Citus)
    }

    fn table_columns(&self, table: &TableRef) -> String {
        format!(
            "SELECT attname::text FROM pg_attribute WHERE attrelid = to_regclass({}) AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
            self.quote_literal(&table.sql())
        )
    }

    /// Third: the column's collation where it is not its type's default (`ALTER … TYPE`
    /// would reset it); nullability, default and comment survive that statement.
    fn column_types(&self, table: &TableRef) -> String {
        format!(
            "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), \
             CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation THEN 'COLLATE ' || quote_ident(n.nspname) || '.' || quote_ident(co.collname) END \
             FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid \
             LEFT JOIN pg_collation co ON co.oid = a.attcollation LEFT JOIN pg_namespace n ON n.oid = co.collnamespace \
             WHERE a.attrelid = to_regclass({}) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
            self.quote_literal(&table.sql())
        )
    }

    /// The table's OID, resolved through the search_path as the statements will be.
    fn table_identity(&self, table: &TableRef) -> String {
        format!(
            "SELECT to_regclass({})::oid::bigint",
            self.quote_literal(&table.sql())
        )
    }

    /// Views and materialized views, resolved as the statements would resolve the name.
    fn view_exists(&self, table: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT COUNT(*) FROM pg_class WHERE oid = to_regclass({}) AND relkind IN ('v', 'm')",
            self.quote_literal(&table.sql())
        ))
    }

    /// Unique indexes (PRIMARY KEY and UNIQUE constraints have one each) that are valid,
    /// not partial, on plain columns only and checked immediately (a deferred constraint
    /// allows repeats inside a transaction).
    fn unique_keys(&self, table: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT i.indexrelid::regclass::text, a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) WHERE i.indrelid = to_regclass({}) AND i.indisunique AND i.indisvalid AND i.indimmediate AND i.indpred IS NULL AND i.indexprs IS NULL",
            self.quote_literal(&table.sql())
        ))
    }

    /// `ON CONFLICT (key)` takes a unique index on exactly those columns that is not partial,
    /// not on expressions and not deferrable: the keys [`Catalog::unique_keys`] vouches for.
    fn upsert_keys(&self, table: &TableRef) -> Option<String> {
        self.unique_keys(table)
    }

    /// Views (and materialized views) over the table, other tables' foreign keys to it, its
    /// own indexes but the primary key, triggers, CHECK, EXCLUDE and foreign-key constraints,
    /// and privileges granted to roles other than its owner.
    fn replace_leaves(&self, table: &TableRef) -> Option<String> {
        let t = format!("to_regclass({})", self.quote_literal(&table.sql()));
        Some(format!(
            "SELECT DISTINCT 'view ' || r.ev_class::regclass::text, 1 FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid \
             WHERE d.classid = 'pg_rewrite'::regclass AND d.refobjid = {t} AND r.ev_class <> {t} \
             UNION ALL SELECT 'foreign key ' || c.conname || ' of ' || c.conrelid::regclass::text, 1 FROM pg_constraint c \
             WHERE c.confrelid = {t} AND c.conrelid <> {t} AND c.contype = 'f' \
             UNION ALL SELECT 'index ' || i.indexrelid::regclass::text, 0 FROM pg_index i \
             WHERE i.indrelid = {t} AND NOT i.indisprimary \
             AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.contype IN ('u', 'x')) \
             UNION ALL SELECT 'trigger ' || g.tgname, 0 FROM pg_trigger g WHERE g.tgrelid = {t} AND NOT g.tgisinternal \
             UNION ALL SELECT 'constraint ' || c.conname, 0 FROM pg_constraint c WHERE c.conrelid = {t} AND c.contype IN ('c', 'f', 'u', 'x') \
             UNION ALL SELECT 'grant ' || a.privilege_type || ' to ' || COALESCE(o.rolname, 'PUBLIC'), 0 \
             FROM pg_class k CROSS JOIN LATERAL aclexplode(k.relacl) a LEFT JOIN pg_roles o ON o.oid = a.grantee \
             WHERE k.oid = {t} AND a.grantee <> k.relowner \
             ORDER BY 2 DESC, 1"
        ))
    }

    fn filled_columns(&self, table: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT a.attname::text, CASE WHEN a.attgenerated <> '' OR a.attidentity = 'a' THEN 1 ELSE 0 END FROM pg_attribute a WHERE a.attrelid = to_regclass({}) AND a.attnum > 0 AND NOT a.attisdropped AND (a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '') ORDER BY a.attnum",
            self.quote_literal(&table.sql())
        ))
    }

    /// ANALYZE's correlation of each column of a plain table (not the partitioned parent's
    /// inherited rows), the table's and its indexes' bytes, `effective_cache_size`, and the
    /// rows written since that ANALYZE per live row.
    fn stored_order(&self, table: &TableRef) -> Option<String> {
        // The view filtered by constants (the subquery): joined to pg_class instead, it was
        // planned as a scan of every statistic, 14-22 ms against 3-5 ms on a new connection.
        let t = format!("to_regclass({})", self.quote_literal(&table.sql()));
        Some(format!(
            "SELECT s.attname::text, s.correlation::float8, (pg_relation_size({t}) + pg_indexes_size({t}))::int8, pg_size_bytes(current_setting('effective_cache_size'))::int8, (SELECT u.n_mod_since_analyze::float8 / GREATEST(u.n_live_tup, 1) FROM pg_stat_all_tables u WHERE u.relid = {t}) FROM pg_stats s WHERE NOT s.inherited AND (s.schemaname, s.tablename) = (SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = {t} AND c.relkind IN ('r', 'm'))"
        ))
    }

    fn table_exists(&self, table: &TableRef) -> String {
        // to_regclass parses the name exactly as the statements will (unquoted parts fold).
        format!(
            "SELECT CASE WHEN to_regclass({}) IS NULL THEN 0 ELSE 1 END",
            self.quote_literal(&table.sql())
        )
    }
}

impl Query for Postgres {
    /// Equality is by bytes under every deterministic collation, the only kind PostgreSQL
    /// makes unless told otherwise; a nondeterministic one (ICU, `deterministic = false`)
    /// or `citext` counts `k` and `K` as one.
    fn text_equality(&self) -> super::TextEquality {
        super::TextEquality::BytesUnlessDeclared(
            "SELECT (SELECT COUNT(*) FROM pg_collation WHERE NOT collisdeterministic) \
             + (SELECT COUNT(*) FROM pg_type WHERE typname = 'citext')",
        )
    }

    /// Any text-like type (`citext`, a domain) as `text`, compared by bytes. The `|| ''`
    /// makes the `text` a function's result, not a relabelled `varchar` or `citext`: Citus
    /// plans a `GROUP BY` over a relabelled column with the column's own type and fails
    /// ("attribute 1 of type record has wrong type": discovery on Citus wherever the key was
    /// exact, and every PostgreSQL script there).
    fn exact_text_key(&self, expr: &str) -> Option<String> {
        Some(format!("(CAST({expr} AS TEXT) || '') COLLATE \"C\""))
    }

    /// A text value under the database's collation may order linguistically (en_US puts
    /// `a` before `B`); `"C"` orders by bytes. `citext` compares `Red` and `red` as one under
    /// any collation (so the pushdown saw no conflict where the stream saw one): as `text`.
    fn value_in_byte_order(&self, v: &str, declared: Option<&str>) -> Option<String> {
        if declared.is_some_and(|t| t.eq_ignore_ascii_case("citext")) {
            return Some(text_by_bytes(v));
        }
        super::declared_text(declared).then(|| format!("{v} COLLATE \"C\""))
    }

    /// `OFFSET 0` keeps the planner from flattening the subquery and testing the outer
    /// conditions (the check's CASTs) on rows the job's `where` leaves out.
    fn fenced_source_rows(&self, source: &super::SourceQuery) -> String {
        format!(
            "SELECT * FROM ({}) f OFFSET 0",
            query::source_rows(self, source)
        )
    }

    /// No JIT: an `INSERT … SELECT` runs without parallel workers, so one with many
    /// `MAX(CASE …)` columns costs past `jit_optimize_above_cost` and
    /// `jit_inline_above_cost`, and compiling its expressions took longer than running
    /// them (EXPLAIN ANALYZE at 10,000 × 100: JIT 13.0 s of a 23.2 s INSERT, 13.6 s
    /// without JIT; BENCHMARKS.md "Pushdown at the cost of its SQL").
    fn pushdown_settings(&self) -> Vec<String> {
        vec!["SET jit = off".into()]
    }

    /// Past `effective_cache_size` the planner prices every heap page an index scan fetches
    /// as a random read, however the heap is ordered (and a two-column key's correlation at
    /// ¾ of its first column's), so at 100M rows it sorts or hash-aggregates the whole
    /// table to temp files instead of walking the primary key. Where the heap is in entity
    /// order that walk reads each page once, in order: the cache it assumes is then the
    /// table itself. Only a cost assumption: no result can change.
    fn stored_order_settings(&self, bytes: u64) -> (Vec<String>, Vec<String>) {
        // In MB: the setting counts 8 kB pages in an int, so this never overflows it (16 TB).
        let mib = bytes.div_ceil(1 << 20).min(16 << 20);
        (
            vec![format!("SET effective_cache_size = '{mib}MB'")],
            vec!["RESET effective_cache_size".into()],
        )
    }

    /// From benches/pivot on loopback, quiet machine (BENCHMARKS.md "Remote links", 1M
    /// source rows, n = 3): pushdown 0.91 s at 10 columns and 2.48 s at 100, so 1.57 s per
    /// 90M more CASE arms (17.4 ns each); the rest of the 10-column run less ~0.3 s of work
    /// both strategies do (start, connect, discovery, catalog, verification) is the row
    /// cost. The stream took 0.97 s (10 columns) and 0.83 s (100): 0.67 µs a row, the higher
    /// one, since on loopback at 10 columns the pushdown measured faster. A DataRow of three
    /// fields carries 7 bytes of header and 4 of length per field; binary `COPY` a 4-byte
    /// length per field.
    fn pivot_costs(&self) -> Option<super::PivotCosts> {
        Some(super::PivotCosts {
            case_cell_ns: 17.4,
            pushdown_row_ns: 436.0,
            stream_row_ns: 670.0,
            row_overhead_bytes: 19,
            field_overhead_bytes: 4,
            filler: "SELECT repeat('x', {bytes})",
        })
    }
}

impl Script for Postgres {
    fn spelling(&self) -> Option<&'static super::Spelling> {
        use super::spelling::*;
        Some(&Spelling {
            concat: Concat::Operator("||"),
            substring: "substr",
            position: Position::HaystackFirst("strpos"),
            integer_division: IntegerDivision::Slash,
            modulo_function: false,
            constant_from: "",
            cast_integer: "INTEGER",
            ordered_concat: OrderedConcat::SeparatorArgument("string_agg"),
            with_recursive: "WITH RECURSIVE",
            with_before_insert: false,
            recursive_text_converted: false,
            inline_constants: false,
            // No limit: explicit CROSS JOINs past join_collapse_limit (8) are planned in the
            // order written, so GEQO never starts; planning 256 of them took 141 ms on
            // PostgreSQL 15 here. The search itself is what grows (BENCHMARKS.md).
            max_join_tables: None,
            lift_recursion_limit: "",
        })
    }

    fn script_renderer(&self) -> Option<super::script::Renderer> {
        Some(super::postgres_script::render)
    }
}

#[cfg(test)]
mod tests {
    use super::float_out;

    /// What PostgreSQL 15 printed for each (`SELECT v::text` at `extra_float_digits = 3`); the
    /// live test `postgres_floats_are_written_as_postgres_prints_them_by_both_strategies`
    /// compares thousands more with the server itself.
    #[test]
    fn floats_print_as_postgresql_prints_them() {
        let double = [
            (1e20, "1e+20"),
            (2f64.powi(-25), "2.9802322387695312e-08"),
            (31722300588172752.0, "3.1722300588172752e+16"),
            (-0.0, "-0"),
            (0.0001, "0.0001"),
            (5e-324, "5e-324"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
        ];
        for (value, text) in double {
            assert_eq!(float_out(value, false), text, "double {value:e}");
        }
        let real = [
            (16777216.0, "1.6777216e+07"),
            (1e-5, "1e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (1e-45, "1e-45"),
        ];
        for (value, text) in real {
            assert_eq!(float_out(value, true), text, "real {value:e}");
        }
    }
}
