//! SQL text per database: one unit struct per dialect implementing [`Dialect`].
//!
//! A dialect never touches a connection; a backend never builds SQL. That split is what makes
//! golden-SQL tests and `--dry-run` honest: the statements printed are the statements run.
//!
//! The default methods render the portable shape; a dialect overrides only what differs.
//! Everything that comes from the data (attribute names, values) reaches SQL only through
//! [`Quoting::quote_ident`] and [`Quoting::quote_literal`].

pub mod citus;
mod ident_case;
mod identity;
mod mariadb;
pub mod mariadb_script;
mod mssql;
pub mod mssql_script;
mod oracle;
pub mod oracle_script;
mod postgres;
pub mod postgres_script;
pub mod script;
mod session_sql;
pub mod spelling;
mod sqlite;
mod typed;

pub use citus::{Citus, ScaleOut};
pub use ident_case::{entity_column_name, UnquotedCase};
pub use identity::Identity;
pub use mariadb::MariaDb;
pub use mssql::{Cell as MsSqlCell, MsSql};
pub use oracle::Oracle;
pub use postgres::Postgres;
pub use session_sql::SessionSql;
pub use spelling::Spelling;
pub use sqlite::{exact_real_text, Sqlite, REAL_TEXT};
pub use typed::{ColumnKind, Typed};

pub mod ddl;
pub mod merge;
mod names;
pub use names::{by_name, known_names, ALL};
pub mod portable;
pub mod preview;
pub mod query;

pub use ddl::entity_order;
pub use query::{entity_probe_query, entity_refs, SourceQuery};

/// The dialect traits, for code that calls their methods on a concrete dialect
/// (`Postgres.quote_ident(…)`): `use crate::dialect::prelude::*;`.
pub mod prelude {
    pub use super::{
        Catalog, Dialect, Identity, Query, Quoting, Schema, Script, SessionSql, Types,
    };
}

use crate::table_ref::TableRef;

/// How a dialect limits identifier length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentLimit {
    None,
    /// Counted in characters (MariaDB 64, SQL Server 128).
    Chars(usize),
    /// Counted in UTF-16 code units (SQL Server's sysname is NVARCHAR(128)).
    Utf16(usize),
    /// Counted in UTF-8 bytes (PostgreSQL 63: longer names are truncated with only a NOTICE).
    Bytes(usize),
}

impl IdentLimit {
    pub fn fits(&self, name: &str) -> bool {
        match *self {
            IdentLimit::None => true,
            IdentLimit::Chars(n) => name.chars().count() <= n,
            IdentLimit::Utf16(n) => name.encode_utf16().count() <= n,
            IdentLimit::Bytes(n) => name.len() <= n,
        }
    }

    /// The longest prefix of `stem` that still fits with `tag` after it. One pass over the
    /// stem: dropping a character at a time and re-measuring was quadratic, and a 10 MB
    /// attribute name spun for minutes.
    pub fn cut_to_fit<'a>(&self, stem: &'a str, tag: &str) -> &'a str {
        let (budget, cost): (usize, fn(char) -> usize) = match *self {
            IdentLimit::None => return stem,
            IdentLimit::Chars(n) => (n.saturating_sub(tag.chars().count()), |_| 1),
            IdentLimit::Utf16(n) => (
                n.saturating_sub(tag.encode_utf16().count()),
                char::len_utf16,
            ),
            IdentLimit::Bytes(n) => (n.saturating_sub(tag.len()), char::len_utf8),
        };
        let mut used = 0;
        for (at, c) in stem.char_indices() {
            used += cost(c);
            if used > budget {
                return &stem[..at];
            }
        }
        stem
    }

    /// `table` with its name cut so that `room_for` (a suffix eavpivot adds) still fits after
    /// it: the names of eavpivot's own tables (staging, replaced, a script's probe).
    pub fn cut_table(&self, table: &TableRef, room_for: &str) -> TableRef {
        let name = table.name();
        table.with_name_cut(self.cut_to_fit(&name, room_for).chars().count())
    }
}

/// What one row may occupy in its page, and what a variable-length cell costs there: the
/// model [`crate::plan::capacity`] prices columns with, from the widths discovery measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowBudget {
    /// In-page bytes one row may take (PostgreSQL 8160, InnoDB 8126, SQL Server 8060).
    pub max_bytes: usize,
    /// Per-row header and system columns; the null bitmap (one bit per column) is added.
    pub overhead: usize,
    /// Values of at most this many bytes always stay in the row: moving them off-row would
    /// save nothing (PostgreSQL 23: with its 1-byte header no bigger than a TOAST pointer's
    /// aligned 24; InnoDB DYNAMIC 40; SQL Server 24, its row-overflow pointer).
    pub inline_max: usize,
    /// Length or offset bytes an in-row variable-length value adds (PostgreSQL's short
    /// header 1, InnoDB 1, SQL Server's offset-array entry 2).
    pub length_bytes: usize,
    /// In-row bytes of a value moved off-row: PostgreSQL's TOAST pointer (18), InnoDB's
    /// external-field reference (20 + 2 length bytes), SQL Server's pointer (24 + 2 offset).
    pub pointer: usize,
    /// CREATE TABLE itself charges this for every long column (InnoDB in strict mode): going
    /// over is certain, not data-dependent.
    pub create_charge: Option<usize>,
}

impl RowBudget {
    pub const SQL_SERVER: RowBudget = RowBudget {
        max_bytes: 8_060,
        overhead: 8,
        inline_max: 24,
        length_bytes: 2,
        pointer: 26,
        create_charge: None,
    };
}

/// An entity column of a target table: its name and, where the backend could tell, its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityColumn {
    pub name: String,
    pub sql_type: Option<String>,
}

/// A declared type that holds text (None: the engine did not say, so not known to).
fn declared_text(declared: Option<&str>) -> bool {
    declared
        .and_then(portable::parse)
        .is_some_and(|kind| kind.is_text())
}

/// How an engine compares text keys ([`Query::text_equality`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEquality {
    /// Equal only when the bytes are: PostgreSQL's deterministic collations (the only kind
    /// it makes unless told otherwise).
    Bytes,
    /// By the column's collation, which may count different bytes as one: MariaDB's `_ci`
    /// and PAD SPACE collations, SQL Server's (every one ignores trailing spaces).
    Collation,
    /// By bytes unless the schema says otherwise: the query's one number counts what could
    /// (SQLite: BINARY unless a column or view declares NOCASE or RTRIM; PostgreSQL: a
    /// nondeterministic collation, or the `citext` type, in the database).
    BytesUnlessDeclared(&'static str),
}

/// One attribute → one column of the target.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PivotColumn {
    pub attribute: String,
    pub column: String,
    /// The column's own type where the job types its columns; else the table's
    /// [`TableShape::column_type`].
    #[serde(skip)]
    pub typed: Option<Typed>,
    /// The longest value the source has for this attribute, in bytes as discovery measured it
    /// (never fewer than its characters or UTF-16 units), where the pivot writes the source's
    /// values as they are (no transform): a merge keeps a user's bounded text column that
    /// holds it without reading the staged values ([`crate::execute`]'s widening).
    #[serde(skip)]
    pub longest: Option<u64>,
}

impl PivotColumn {
    /// A column of the table's shared type.
    pub fn text(attribute: &str, column: &str) -> PivotColumn {
        PivotColumn {
            attribute: attribute.to_string(),
            column: column.to_string(),
            typed: None,
            longest: None,
        }
    }

    /// The type this column is declared with in `shape`.
    pub fn sql_type<'a>(&'a self, shape: &'a TableShape) -> &'a str {
        self.typed
            .as_ref()
            .map_or(shape.column_type.as_str(), |t| t.sql_type.as_str())
    }
}

/// Everything needed to create and fill one target table.
#[derive(Debug, Clone)]
pub struct TableShape {
    pub table: TableRef,
    pub entity: Vec<EntityColumn>,
    pub columns: Vec<PivotColumn>,
    /// The SQL type of every pivoted column.
    pub column_type: String,
    /// The entity key should be the table's primary key (target tables: one row per entity).
    /// Honoured by [`crate::dialect::ddl::create_table`] only where [`crate::dialect::ddl::primary_key_problem`] finds
    /// none; companion tables of transforms set it false (their rows are not per entity).
    pub primary_key: bool,
}

/// A whole dialect: the narrow traits composed (as sea-query composes `QueryBuilder +
/// SchemaBuilder + QuotedBuilder`), so call sites keep `&dyn Dialect`. It has no methods of its
/// own; a type implementing every part is a `Dialect`. Session control (lock timeouts, lock
/// holders, cancel) is [`SessionSql`]; which database a connection reaches and what a view reads
/// is [`Identity`]. The queries built from those parts, which no dialect overrides, are free
/// functions in [`query`] and [`ddl`].
pub trait Dialect:
    Quoting + Types + Schema + Catalog + Query + Script + SessionSql + Identity + Send + Sync
{
}

impl<T> Dialect for T where
    T: Quoting + Types + Schema + Catalog + Query + Script + SessionSql + Identity + Send + Sync
{
}

/// How names and text reach SQL: identifier and literal quoting, name limits and case, the
/// attribute key, bind parameters. Every other dialect trait builds on it.
pub trait Quoting: Send + Sync {
    /// `sqlite`, `postgres`, `mariadb`, `mssql` or `oracle`: also the folder name under `sql/`.
    fn name(&self) -> &'static str;

    /// Quote an identifier that may contain anything (it comes from the data).
    fn quote_ident(&self, name: &str) -> String {
        format!("\"{}\"", name.replace('"', "\"\""))
    }

    /// Quote a string literal that may contain anything (it comes from the data). A NUL is
    /// spliced in by expression ([`Quoting::nul_splice`]): inside the quotes it would end
    /// SQLite's statement text early (`unrecognized token`).
    fn quote_literal(&self, text: &str) -> String {
        splice_nul(format!("'{}'", text.replace('\'', "''")), self.nul_splice())
    }

    /// What stands for a NUL inside a quoted literal: close the quote, append the character
    /// by expression, reopen the quote.
    fn nul_splice(&self) -> &'static str {
        "' || char(0) || '"
    }

    /// A text literal of `bytes` that need not be UTF-8 (what a database that stores any
    /// bytes as text can hold): a hex string, as MariaDB compares binary attribute keys.
    fn text_bytes_literal(&self, bytes: &[u8]) -> String {
        format!("X'{}'", crate::value::hex(bytes))
    }

    fn ident_limit(&self) -> IdentLimit {
        IdentLimit::None
    }

    /// The limit of the names eavpivot makes for its own tables (staging, a replaced
    /// target): the identifier limit, or less where a server handles longer names worse.
    fn own_name_limit(&self) -> IdentLimit {
        self.ident_limit()
    }

    /// What this database does with an identifier written without quotes: the rule every
    /// name the job writes follows ([`entity_column_name`]; table names are written as given).
    fn unquoted_case(&self) -> UnquotedCase {
        UnquotedCase::Kept
    }

    /// Two column names with the same key are the same identifier to this database.
    fn ident_key(&self, name: &str) -> String {
        name.to_ascii_lowercase()
    }

    /// Why `name` cannot be used as a column name as it is, if it cannot.
    fn column_name_problem(&self, name: &str) -> Option<&'static str> {
        if name.contains('\0') {
            Some("contains a NUL character")
        } else {
            None
        }
    }

    /// The expression the engine groups and compares attribute names by. It must keep apart
    /// names that differ in case or trailing spaces, even where `=` would not.
    fn attribute_key(&self, attribute_expr: &str) -> String {
        attribute_expr.to_string()
    }

    /// The literal that [`Quoting::attribute_key`] yields for `name`.
    fn attribute_key_literal(&self, name: &str) -> String {
        self.quote_literal(name)
    }

    /// What [`Quoting::attribute_key`] yields for `name`, as a value read back (test peers and
    /// scripted backends answer discovery with it).
    fn encode_attribute_key(&self, name: &str) -> String {
        name.to_string()
    }

    /// Undo whatever [`Quoting::attribute_key`] added, on a value read back from discovery.
    fn decode_attribute_key(&self, raw: String) -> String {
        raw
    }

    /// Whether comparing a column with a constant gives one answer for all the values this
    /// engine counts as equal (`=`, `GROUP BY`): only the constant is ever converted. Then a
    /// merge's delta that tests only the entity key against constants ([`crate::plan::delta`])
    /// selects whole entities by itself ([`query::source_rows`]). False by default: MariaDB
    /// and SQL Server convert each text value to compare it with a number, and under a `_ci`
    /// collation `'１'` equals `'1'` but converts to 0, not 1.
    fn constant_comparisons_respect_equality(&self) -> bool {
        false
    }

    /// `a` equals `b`, NULL equal to NULL.
    fn null_safe_eq(&self, a: &str, b: &str) -> String {
        format!("(({a} = {b}) OR ({a} IS NULL AND {b} IS NULL))")
    }

    /// `SELECT` of at most `n` rows of `query`.
    fn limit(&self, query: &str, n: u64) -> String {
        format!("{query} LIMIT {n}")
    }

    /// A bind parameter; `index` counts from 1.
    fn placeholder(&self, _index: usize) -> String {
        "?".into()
    }
}

/// Column types: the text type, typed columns ([`ColumnKind`] → SQL type, CAST), the page and
/// key limits the plan's capacity check reads.
pub trait Types: Quoting {
    /// The type of `column_type: text`: the dialect's unbounded Unicode text type.
    fn text_type(&self) -> &'static str;

    /// Where the engine may run `CREATE TABLE … AS` on parallel workers but never an
    /// `INSERT … SELECT`: the statement that shows whether it would run the pushdown's pivot
    /// `select` so, and the text its plan then contains. None: the pushdown always INSERTs
    /// ([`ddl::created_as_exactly`]).
    fn parallel_probe(&self, _select: &str) -> Option<(String, &'static str)> {
        None
    }

    /// `expr` as the column `CREATE TABLE … AS` makes of it, exactly as [`ddl::create_table`]
    /// declares `sql_type`: a table made so takes each column's type *and collation* from the
    /// SELECT, so a source column's own collation would otherwise reach the target.
    fn created_as_column(&self, expr: &str, sql_type: &str) -> String {
        format!("CAST({expr} AS {sql_type})")
    }

    /// The most columns one table may have (entity keys included), where the database has a
    /// limit; the plan refuses (or splits) wider targets before any DDL.
    fn max_columns(&self) -> Option<usize> {
        None
    }

    /// How one row must fit its page, where the database limits it; the plan's capacity
    /// check ([`crate::plan::capacity`]) refuses or splits targets that cannot fit.
    fn row_budget(&self) -> Option<RowBudget> {
        None
    }

    /// The expression for the stored size in bytes of value `v` as a text column would hold
    /// it: discovery's per-attribute widths, which the capacity estimate uses.
    fn value_bytes(&self, v: &str) -> String {
        format!("LENGTH(CAST({v} AS BLOB))")
    }

    /// Bytes a value of SQL type `ty` takes in a primary-key index entry at most, or None if
    /// this database cannot make a column of that type (part of) a primary key. Only
    /// consulted where [`Types::max_key_bytes`] is set, or to reject a type.
    fn key_bytes(&self, _ty: &str) -> Option<usize> {
        Some(0)
    }

    /// How an entity column of type `ty` is declared when it is part of the primary key.
    fn key_column_type(&self, ty: &str) -> String {
        ty.to_string()
    }

    /// The most bytes a primary key may span, where the database limits it.
    fn max_key_bytes(&self) -> Option<usize> {
        None
    }

    /// The integer type of companion tables' count columns.
    fn integer_type(&self) -> &'static str {
        "BIGINT"
    }

    /// Why changing a column declared `declared` to text in place would rewrite the values it
    /// holds (the database's own conversion is not exact), or None where it keeps them.
    fn text_conversion_loss(&self, _declared: &str) -> Option<&'static str> {
        None
    }

    /// The value `expr`, of the source's type `declared`, as both strategies read it where
    /// it would otherwise reach the stream unlike the database's own text of it: rounded
    /// (SQL Server sends a MONEY as a float, MariaDB prints a FLOAT with 6 digits) or padded
    /// (PostgreSQL's `character(n)`, whose text drops the padding); None: as it is.
    fn read_value(&self, _expr: &str, _declared: &str) -> Option<String> {
        None
    }

    /// An entity key `expr` of the source's type `declared` as both strategies read it: as a
    /// value is ([`Types::read_value`]) unless that read is only the value's text, which a
    /// key, written back into a column of its own type, does not need.
    fn read_key(&self, expr: &str, declared: &str) -> Option<String> {
        self.read_value(expr, declared)
    }

    /// How this database's own cast to text spells a float of the source's type `declared`,
    /// where that differs from eavpivot's (Rust's shortest round trip, fixed notation): the
    /// stream writes a float into a text cell so, to hold what the pushdown's `CAST` writes
    /// (PostgreSQL: `1e+20`, not `100000000000000000000`). None: eavpivot's spelling.
    fn float_text(&self, _declared: &str) -> Option<fn(f64) -> String> {
        None
    }

    /// Why the pushdown's `MAX`/`MIN` cannot pick among values of the source's type
    /// `declared` (the database has no such aggregate for them), or None where it can: `auto`
    /// then streams, which picks among their texts itself, and an asked-for pushdown is
    /// refused before any write.
    fn unaggregated_value(&self, _declared: &str) -> Option<&'static str> {
        None
    }

    /// Whether a column of `kind` stores its values so that they print back as the source
    /// text; where not, the plan keeps the attribute as text and says why.
    fn stores(&self, kind: &ColumnKind) -> bool {
        !matches!(kind, ColumnKind::Boolean)
    }

    /// Why a column declared `declared` (a `pivot.types` type) would store some value
    /// otherwise than as written, or None when it keeps them all: `integers_only` (every value
    /// a canonical 64-bit integer) and `floats_only` (every value already floating point) say
    /// what the values are. A server converts exactly or refuses (checked before any DDL);
    /// SQLite's type affinity converts silently.
    fn declared_changes_values(
        &self,
        _declared: &str,
        _integers_only: bool,
        _floats_only: bool,
    ) -> Option<String> {
        None
    }

    /// The declared type of a typed column of `kind` (one [`Types::stores`]).
    fn column_sql_type(&self, kind: &ColumnKind) -> String {
        match kind {
            ColumnKind::Text {
                chars,
                utf16,
                bytes,
            } => self
                .bounded_text_type(*chars, *utf16, *bytes)
                .map_or_else(|| self.text_type().to_string(), |(ty, _)| ty),
            other => self
                .type_name_of(other)
                .unwrap_or_else(|| self.text_type().to_string()),
        }
    }

    /// The dialect's name for a non-text kind (`INT`, `DATETIME2(3)`); None: text.
    fn type_name_of(&self, kind: &ColumnKind) -> Option<String> {
        kind.standard_sql()
    }

    /// A text type bounded to values of these lengths, where the dialect has one worth
    /// declaring (SQL Server `NVARCHAR(n)`, MariaDB `VARCHAR(n)`), with the bytes it declares
    /// against [`Types::declared_row_limit`]; None: the unbounded type.
    fn bounded_text_type(&self, _chars: u64, _utf16: u64, _bytes: u64) -> Option<(String, usize)> {
        None
    }

    /// A limit on the declared (maximum) widths of a row's columns, checked at CREATE TABLE
    /// whatever the data (MariaDB: 65,535 bytes): bounded text columns past it stay unbounded.
    fn declared_row_limit(&self) -> Option<usize> {
        None
    }

    /// The pushdown's conversion of the source text `expr` to `typed`: a CAST for exactly the
    /// forms the ladder accepts, nothing for text.
    fn cast_to(&self, expr: &str, typed: &Typed) -> String {
        if typed.kind.is_text() {
            expr.to_string()
        } else {
            format!("CAST({expr} AS {})", typed.sql_type)
        }
    }

    /// The pushdown's cell `expr` (the aggregate's pick) for an untyped, text column, where
    /// the database's own conversion of some value of the source's type `declared` (None:
    /// not known) to text is not exact.
    fn text_cell(&self, expr: &str, _declared: Option<&str>) -> String {
        expr.to_string()
    }

    /// The kind of a type as this database declares it (an entity key read for another
    /// database); None: no portable equivalent.
    fn portable_type(&self, declared: &str) -> Option<ColumnKind> {
        portable::parse(declared)
    }

    /// A typed value printed back as text, for the round-trip check.
    fn text_of(&self, expr: &str) -> String {
        format!("CAST({expr} AS {})", self.text_type())
    }

    /// `expr`'s text without trailing fractional zeros and then a bare point (`12.50` →
    /// `12.5`, `5.0` → `5`, `10` unchanged): how the typed check compares by value.
    fn trim_fraction(&self, expr: &str) -> String {
        format!(
            "CASE WHEN {expr} LIKE '%.%' THEN TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM {expr})) ELSE {expr} END"
        )
    }
}

/// Statements that change tables: transactions, CREATE/DROP/RENAME and the swap, ALTER, the
/// streaming load's statement, how a merge upserts.
pub trait Schema: Quoting {
    fn begin(&self) -> String {
        "BEGIN".into()
    }

    fn commit(&self) -> String {
        "COMMIT".into()
    }

    fn rollback(&self) -> String {
        "ROLLBACK".into()
    }

    /// A query giving one row, one column `table_options`: what a `CREATE TABLE` of `table`
    /// adds after its columns where the database's defaults would not hold every value (a
    /// MariaDB schema whose default character set is `latin1`: `☃` would fail, or be stored as
    /// `?` or as its UTF-8 bytes read as Latin-1 characters), NULL where they do. None: a
    /// created table's text holds every value whatever the defaults.
    fn created_table_options(&self, _table: &TableRef) -> Option<String> {
        None
    }

    /// Whether CREATE/DROP/RENAME take part in a transaction (MariaDB's do not).
    fn transactional_ddl(&self) -> bool {
        true
    }

    /// Make a verified staging table visible under its final name, replacing the old table
    /// if there is one (`replaced`: the name the old table may be moved to first, unique to
    /// the run). Default: drop and rename, inside the load's transaction. Where DDL is not
    /// transactional, the first statement must be the one atomic swap; any after it only
    /// clean up.
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
        sql.extend(self.swap_rename(staging, target));
        sql
    }

    /// The statements of [`Schema::swap_in`]'s rename of the staging table to the target's
    /// name, once the replaced table is gone.
    fn swap_rename(&self, staging: &TableRef, target: &TableRef) -> Vec<String> {
        vec![self.rename_table(staging, target)]
    }

    /// Mark a staging table created outside a transaction with the run that made it (the
    /// text `mark`), where the database keeps such a mark.
    fn mark_created(&self, create_table: String, _mark: &str) -> String {
        create_table
    }

    /// The statement that changes `column` of `table` to `sql_type`, keeping every value (a
    /// typed merge widening a column); None where the database has no such statement.
    /// `kept`: the rest of the column's definition as [`Catalog::column_types`] restates it
    /// (its collation, nullability, default), which the statement would otherwise reset.
    fn alter_column_type(
        &self,
        table: &TableRef,
        column: &str,
        sql_type: &str,
        kept: Option<&str>,
    ) -> Option<String> {
        let _ = (table, column, sql_type, kept);
        None
    }

    /// `ALTER TABLE … ADD` one column: a merge's new attribute.
    fn add_column(&self, table: &TableRef, column: &str, sql_type: &str) -> String {
        format!(
            "ALTER TABLE {table} ADD {} {sql_type}",
            self.quote_ident(column)
        )
    }

    /// How this database upserts a merge's staging rows into the target (same key).
    fn upsert_style(&self) -> merge::UpsertStyle {
        merge::UpsertStyle::UpdateThenInsert
    }

    /// Where DDL is not transactional: an empty copy of `old` (keys, types) named `new`, for
    /// a merge that must add columns without altering the live table before commit.
    fn create_table_like(&self, _new: &TableRef, _old: &TableRef) -> Option<String> {
        None
    }

    fn drop_table(&self, table: &TableRef) -> String {
        format!("DROP TABLE {table}")
    }

    /// Rename `from` to the last part of `to` (same schema).
    fn rename_table(&self, from: &TableRef, to: &TableRef) -> String {
        format!("ALTER TABLE {from} RENAME TO {}", to.last_part())
    }

    /// A multi-row `INSERT … VALUES (…), (…)` with bind parameters: the streaming load.
    fn insert_values(&self, table: &TableRef, columns: &[String], rows: usize) -> String {
        let cols: Vec<String> = columns.iter().map(|c| self.quote_ident(c)).collect();
        let mut index = 0;
        let tuples: Vec<String> = (0..rows)
            .map(|_| {
                let params: Vec<String> = columns
                    .iter()
                    .map(|_| {
                        index += 1;
                        self.placeholder(index)
                    })
                    .collect();
                format!("({})", params.join(", "))
            })
            .collect();
        format!(
            "INSERT INTO {table} ({}) VALUES {}",
            cols.join(", "),
            tuples.join(", ")
        )
    }

    /// How the streaming strategy loads wide rows into `table`, as `--dry-run` shows it: the
    /// statement the backend sends per batch, and a note on when it uses another.
    fn stream_load(&self, table: &TableRef, columns: &[String]) -> (String, &'static str) {
        (
            self.insert_values(table, columns, 1),
            "stream: wide rows loaded in batches of multi-row INSERTs (statement shape for one row)",
        )
    }
}

/// Queries of the catalog: whether a table or view exists, what it is, its columns and types,
/// locks and leftovers of crashed runs.
pub trait Catalog: Quoting {
    /// The engine that can spread this dialect's tables over several servers (Citus for
    /// PostgreSQL), if one may be installed; whether it is, is asked of the database.
    fn scale_out(&self) -> Option<&'static dyn ScaleOut> {
        None
    }

    /// A query returning one value that identifies `table` as the database resolves the
    /// name (case folding, default schema), or NULL when there is no such table or view.
    fn table_identity(&self, table: &TableRef) -> String;

    /// A query returning one number, above 0 when `table` names a view (which a `replace` or
    /// `merge` must not rename away or drop); None where the database has no views.
    fn view_exists(&self, _table: &TableRef) -> Option<String> {
        None
    }

    /// Where DDL is not transactional, a query taking a lock on writing `table` that the
    /// connection holds until it ends (so a killed run releases it): one row, `1` when taken,
    /// else `0` and, where known, the holder's connection id.
    fn write_lock(&self, _table: &TableRef) -> Option<String> {
        None
    }

    /// Where staging tables can outlive a crashed run: a query listing `(name, comment)` of
    /// the tables beside `table` whose names start with `prefix`.
    fn leftover_tables(&self, _table: &TableRef, _prefix: &str) -> Option<String> {
        None
    }

    /// A query listing the column names of `table` in order (a merge reads what the
    /// existing target has).
    fn table_columns(&self, table: &TableRef) -> String;

    /// A query listing `(name, declared type)` of `table`'s columns in order, the type as
    /// [`Types::portable_type`] reads it: what a typed merge compares its values with.
    fn column_types(&self, table: &TableRef) -> String;

    /// Where a merge goes into a copy swapped in after commit (DDL not transactional): a query
    /// listing, as rows `(what, name)`, what belongs to `table` that the copy would not carry
    /// and the swap would drop or leave pointing at the replaced table (triggers, foreign
    /// keys). Any row refuses the merge before a write. None: nothing is lost.
    fn lost_by_copy(&self, _table: &TableRef) -> Option<String> {
        None
    }

    /// Where a merge goes into a copy whose run mark replaced `table`'s comment: a query giving
    /// one row, the statement that gives `table` its comment back (run once the swap's cleanup
    /// is done and the mark is no longer needed). None: the comment is not touched.
    fn restore_comment(&self, _table: &TableRef) -> Option<String> {
        None
    }

    /// Where a merge goes into a copy swapped in after commit (DDL not transactional): one row
    /// that changes whenever a row of `table` does (its rows and a hash of `columns`), to tell
    /// whether the replaced target is still what was copied. None: the database needs none.
    fn table_fingerprint(&self, _table: &TableRef, _columns: &[String]) -> Option<String> {
        None
    }

    /// A query returning one row with one integer: 1 when the table exists, else 0.
    fn table_exists(&self, table: &TableRef) -> String;

    /// Where a merge's upsert finds an entity's row by a unique key of the target: a query of
    /// `key_name, column_name`, one row per column of each PRIMARY KEY and UNIQUE index of
    /// `table` the upsert can use. A target with none on exactly its entity columns is refused
    /// before a write: an entity could be in such a table twice (MariaDB's `UPDATE … JOIN`
    /// would write both rows and the count check refuse the merge only after it), and `ON
    /// CONFLICT (key)` fails with the database's own message naming neither table nor fix.
    /// None where the upsert needs no key (SQL Server's `UPDATE … FROM`).
    fn upsert_keys(&self, _table: &TableRef) -> Option<String> {
        None
    }

    /// A query listing, as rows `(what, blocks)`, what the existing `table` has that an
    /// `if_exists: replace` does not carry over to the table it swaps in, each named as
    /// `kind name` (`index kv_wide_color`, `grant SELECT to reader`): `blocks` 1 where the
    /// database would refuse to drop or rename the replaced table after the whole load
    /// (another table's foreign key to it, a view bound to it), 0 where it would silently go
    /// with it (a grant, an index other than the primary key, a trigger, a constraint).
    /// None: not read here.
    fn replace_leaves(&self, _table: &TableRef) -> Option<String> {
        None
    }

    /// A query listing, as rows `(name, generated)`, the columns of `table` the database fills
    /// itself: a DEFAULT, an identity or auto-increment, a generated (computed) column —
    /// `generated` 1 where no value can be written to it. eavpivot creates none such, so in a
    /// merge's target one that is not an attribute's column is the user's own: the merge
    /// leaves it as it is (a new entity gets the database's value), where setting it to NULL
    /// failed (generated, identity) or left new and updated rows disagreeing (a DEFAULT).
    /// None: every column that is not an attribute's is set to NULL.
    fn filled_columns(&self, _table: &TableRef) -> Option<String> {
        None
    }

    /// Why eavpivot cannot write the table `table` as named, if it cannot.
    fn target_name_problem(&self, _table: &TableRef) -> Option<String> {
        None
    }

    /// A query whose rows are `(i, class)` for each of `names` (`i` its index): names of one
    /// class are one identifier to this database. None where [`Quoting::ident_key`] is the
    /// database's rule; SQL Server compares column names by the database's collation.
    fn identifier_classes(&self, _names: &[String]) -> Option<String> {
        None
    }

    /// The unique keys of `table` that the catalog vouches for, one row per key column:
    /// `key_name, column_name`. Only keys enforced for every row (no partial index, no
    /// expression part, not deferred). Where the job's entity and attribute columns cover
    /// one, no (entity, attribute) pair can repeat and the pushdown skips its survey
    /// ([`query::pairs_per_attribute`]). None: this database's catalog is not read, the
    /// survey runs.
    fn unique_keys(&self, _table: &TableRef) -> Option<String> {
        None
    }

    /// Where rows are stored in whatever order they arrived (a heap) and the planner prices
    /// a read in key order by how the table's physical order follows the key: a query giving
    /// one row per column of `table`, `(column, correlation, table and index bytes, bytes the
    /// planner assumes cached, rows changed since the statistics were taken per row)`, the
    /// correlation from the engine's own statistics (1: stored exactly in that column's
    /// order). None: rows live in key order (a clustered key), or the engine plans such
    /// reads well without it ([`Query::stored_order_settings`]).
    fn stored_order(&self, _table: &TableRef) -> Option<String> {
        None
    }
}

/// The hooks of the queries over the source rows ([`query`] renders those queries): where a
/// dialect fences, describes or groups them differently.
pub trait Query: Types {
    /// Whether the stream's ordered read carries the typed round-trip check
    /// ([`query::ordered_rows_checked`]) instead of a second scan of the source after the
    /// load: a server evaluates it in its own process, beside eavpivot's pivot (at 1M rows,
    /// PostgreSQL's read grew ~0.5 s where its separate check took ~0.8 s).
    fn checks_types_in_read(&self) -> bool {
        true
    }

    /// The source rows the typed round-trip check converts, fenced so that its CASTs only
    /// ever see the rows the job selects (a planner may otherwise test them first).
    fn fenced_source_rows(&self, source: &SourceQuery) -> String {
        query::source_rows(self, source)
    }

    /// `strategy: auto` streams above this many columns when no link to a server was
    /// measured (SQLite, or a probe that failed); with one, the plan's
    /// `REMOTE_PUSHDOWN_COLUMNS` decides instead (session 6: since the survey is skipped
    /// where a key proves it, PostgreSQL and MariaDB push down faster at 10 columns even on
    /// loopback). On SQLite the stream won at every measured width (benches/pivot,
    /// BENCHMARKS.md). 0 = always stream.
    fn stream_above_columns(&self) -> usize {
        0
    }

    /// Whether this engine can only `GROUP BY` by sorting every row (no hash aggregate):
    /// discovery then aggregates [`crate::dialect::query::discovery_scan`] in eavpivot, which measured 3×
    /// faster on SQLite than its sorter over a million rows.
    fn groups_by_sorting(&self) -> bool {
        false
    }

    /// Whether `GROUP BY` and `=` on text keys here can count keys that differ in bytes as
    /// one (case, accents, trailing spaces): the pushdown, which groups by the entity, would
    /// then make them one row ([`crate::dialect::query::keys_one_under_collation`]).
    fn text_equality(&self) -> TextEquality {
        TextEquality::Bytes
    }

    /// Where [`Quoting::attribute_key`] keeps texts apart only because the engine's own
    /// equality is by bytes (PostgreSQL's deterministic collations), a key over `expr` that
    /// does so under any collation or type: discovery and the pivot use it for the attribute,
    /// the key check for the entity, when the source [`may collate`](TextEquality). None:
    /// the attribute key is exact already.
    fn exact_text_key(&self, _expr: &str) -> Option<String> {
        None
    }

    /// Whether `MAX`/`MIN` order text by the same equality `=` uses, so that a source that
    /// cannot collate needs no byte order for its values (SQLite: BINARY unless declared).
    /// False: the engine's order is its collation's, never assumed to be the bytes'.
    fn orders_text_as_it_compares(&self) -> bool {
        false
    }

    /// A query with no rows selecting the entity keys, so the backend can report their types.
    /// The backend runs it as given through [`crate::backend::Backend::column_types`].
    fn describe_entity(&self, source: &SourceQuery) -> String {
        entity_probe_query(self, source)
    }

    /// The same for the value ([`crate::dialect::query::value_probe_query`]).
    fn describe_value(&self, source: &SourceQuery) -> String {
        query::value_probe_query(self, source)
    }

    /// `v`, a value of declared type `declared` (None: the engine did not say), as an
    /// expression whose `MAX`/`MIN` order texts by their bytes (UTF-8 bytes, which is code
    /// point order): the order the stream keeps (`execute::stream`), so that both strategies
    /// keep the same value of a conflicting pair. None where the engine's own order of this
    /// value already is that, or where it is not text (numbers compare by value on both).
    fn value_in_byte_order(&self, _v: &str, _declared: Option<&str>) -> Option<String> {
        None
    }

    /// Whether an `INSERT … SELECT`'s reported row count is the rows it inserted, so the
    /// pushdown's `GROUP BY` entity count can stand for a separate distinct-entity count.
    fn counts_inserted_rows(&self) -> bool {
        true
    }

    /// Session settings sent before the pushdown's `INSERT … SELECT`s: what keeps the
    /// engine from spending more on planning one wide statement than on running it.
    fn pushdown_settings(&self) -> Vec<String> {
        Vec::new()
    }

    /// Settings, for the statements that read a source in entity order, that tell the
    /// planner what [`Catalog::stored_order`] found: the table (`bytes`, with its indexes)
    /// is stored in entity order, so reading it along the entity's index touches each page
    /// once, in order. Then the reset that ends them on a connection that goes on.
    fn stored_order_settings(&self, _bytes: u64) -> (Vec<String>, Vec<String>) {
        (Vec::new(), Vec::new())
    }

    /// One row, one text: the character set of `table`'s column `column`, where knowing it
    /// can make the attribute key cheaper ([`Query::attribute_key_of_charset`]). None: the
    /// general [`Quoting::attribute_key`] is already as cheap as it gets here.
    fn column_charset_query(&self, _table: &TableRef, _column: &str) -> Option<String> {
        None
    }

    /// An attribute key for a plain column stored in `charset` that yields exactly the
    /// bytes [`Quoting::attribute_key`] yields, at less cost per row; None where there is
    /// none for that character set.
    fn attribute_key_of_charset(&self, _attribute_expr: &str, _charset: &str) -> Option<String> {
        None
    }

    /// What `strategy: auto` weighs on a server behind a measured link
    /// ([`crate::plan::remote`]): this engine's cost of each strategy's work, and how to ask
    /// it for a reply of known size to time the link's throughput. None: not calibrated here,
    /// so `auto` keeps its width rule on this engine.
    fn pivot_costs(&self) -> Option<PivotCosts> {
        None
    }
}

/// One engine's costs as `auto` models them on a server ([`Query::pivot_costs`]): the
/// pushdown costs `rows × (pushdown_row_ns + columns × case_cell_ns)`; the stream costs
/// `rows × stream_row_ns` of its own work, overlapped with moving its bytes over the link.
/// Calibrated on this project's machine (benches/pivot, BENCHMARKS.md "Remote links"); each
/// dialect's impl says where its numbers come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PivotCosts {
    /// Nanoseconds per source row and pivoted column: one `MAX(CASE …)` arm.
    pub case_cell_ns: f64,
    /// Nanoseconds per source row of the pushdown besides its CASEs: scan, grouping, insert.
    pub pushdown_row_ns: f64,
    /// Nanoseconds per source row of the stream's own work (read, pivot, bulk load), the link
    /// aside.
    pub stream_row_ns: f64,
    /// Bytes the wire protocol adds to each source row the server sends (message header and
    /// the length of each of its three fields).
    pub row_overhead_bytes: u64,
    /// Bytes the stream's bulk load adds to each field it writes (a length or a separator).
    pub field_overhead_bytes: u64,
    /// A query of one row, one text column of exactly `{bytes}` bytes (the placeholder is
    /// replaced by a number): the throughput probe's reply.
    pub filler: &'static str,
}

impl PivotCosts {
    /// The probe query for a reply of `bytes` bytes.
    pub fn filler_query(&self, bytes: usize) -> String {
        self.filler.replace("{bytes}", &bytes.to_string())
    }
}

/// Standalone scripts (`eavpivot script`) and the spelling of hand-built SQL.
pub trait Script: Quoting {
    /// How this database spells the string, arithmetic and recursive-query pieces of
    /// hand-built SQL (an in-database transform's), as data. None: not described, so no such
    /// SQL is built for it.
    fn spelling(&self) -> Option<&'static Spelling> {
        None
    }

    /// Where this database has a standalone script of its own kind (`eavpivot script`): the
    /// function that renders it. None: no dynamic SQL to discover the columns with.
    fn script_renderer(&self) -> Option<script::Renderer> {
        None
    }

    /// The standalone script `eavpivot script` prints for `plan`, or why this database cannot
    /// have one. SQL Server overrides it for its FOR XML PATH variant.
    fn standalone_script(
        &self,
        plan: &script::ScriptPlan,
        options: script::ScriptOptions,
    ) -> crate::error::Result<String> {
        let Some(render) = self.script_renderer() else {
            return Err(crate::error::Error::Usage(format!(
                "script --dialect {0}: {0} cannot run dynamic SQL (no EXECUTE, no procedures), so no standalone script can discover the columns; use eavpivot run --dry-run to see the exact statements instead",
                self.name()
            )));
        };
        if options.for_xml_path {
            return Err(crate::error::Error::Usage(format!(
                "script --for-xml-path is for --dialect mssql (SQL Server before 2017), not {}",
                self.name()
            )));
        }
        render(plan)
    }

    /// What every plan on this database says, whatever the job: behaviour of the database
    /// a user must not be surprised by (Oracle's empty string that is NULL).
    fn plan_notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// `quoted` with every NUL replaced by `splice`, parenthesised so it stays one operand.
pub fn splice_nul(quoted: String, splice: &str) -> String {
    if quoted.contains('\0') {
        format!("({})", quoted.replace('\0', splice))
    } else {
        quoted
    }
}

/// A declared type split into its lower-cased base name and first length argument:
/// `VARCHAR(50)` → (`varchar`, Some(50)), `NVARCHAR(MAX)` → (`nvarchar`, None), `INT UNSIGNED`
/// → (`int unsigned`, None). What the key-size hooks reason about.
pub(crate) fn type_parts(ty: &str) -> (String, Option<usize>) {
    let lower = ty.trim().to_ascii_lowercase();
    let Some(open) = lower.find('(') else {
        return (lower, None);
    };
    let base = lower[..open].trim().to_string();
    let arg = lower[open + 1..]
        .split([',', ')'])
        .next()
        .and_then(|n| n.trim().parse().ok());
    (base, arg)
}

#[cfg(test)]
mod tests;
