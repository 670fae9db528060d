//! SQL text per database: one unit struct per dialect implementing [`Dialect`].
//!
//! A dialect never touches a connection; a backend never builds SQL. That split is what makes
//! golden-SQL tests and `--dry-run` honest: the statements printed are the statements run.
//!
//! The default methods render the portable shape; a dialect overrides only what differs.
//! Everything that comes from the data (attribute names, values) reaches SQL only through
//! [`Dialect::quote_ident`] and [`Dialect::quote_literal`].

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
mod sqlite;
pub mod sudoku_join;
pub mod sudoku_sql;
mod typed;

pub use citus::{Citus, ScaleOut};
pub use ident_case::{entity_column_name, UnquotedCase};
pub use identity::Identity;
pub use mariadb::MariaDb;
pub use mssql::MsSql;
pub use oracle::Oracle;
pub use postgres::Postgres;
pub use session_sql::SessionSql;
pub use sqlite::Sqlite;
pub use typed::{ColumnKind, Typed};

pub mod merge;
mod names;
pub use names::{by_name, known_names, ALL};
pub mod portable;
pub mod preview;

use crate::config::{Aggregate, Job, JoinKind, TableRef};

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

/// One attribute → one column of the target.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PivotColumn {
    pub attribute: String,
    pub column: String,
    /// The column's own type where the job types its columns; else the table's
    /// [`TableShape::column_type`].
    #[serde(skip)]
    pub typed: Option<Typed>,
}

impl PivotColumn {
    /// A column of the table's shared type.
    pub fn text(attribute: &str, column: &str) -> PivotColumn {
        PivotColumn {
            attribute: attribute.to_string(),
            column: column.to_string(),
            typed: None,
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
    /// Honoured by [`Dialect::create_table`] only where [`Dialect::primary_key_problem`] finds
    /// none; companion tables of transforms set it false (their rows are not per entity).
    pub primary_key: bool,
}

/// Session control (lock timeouts, lock holders, cancel) is [`SessionSql`], kept apart; which
/// database a connection reaches and what a view reads is [`Identity`].
pub trait Dialect: SessionSql + Identity + Send + Sync {
    /// `sqlite`, `postgres`, `mariadb`, `mssql` or `oracle`: also the folder name under `sql/`.
    fn name(&self) -> &'static str;

    /// The engine that can spread this dialect's tables over several servers (Citus for
    /// PostgreSQL), if one may be installed; whether it is, is asked of the database.
    fn scale_out(&self) -> Option<&'static dyn ScaleOut> {
        None
    }

    /// Quote an identifier that may contain anything (it comes from the data).
    fn quote_ident(&self, name: &str) -> String {
        format!("\"{}\"", name.replace('"', "\"\""))
    }

    /// Quote a string literal that may contain anything (it comes from the data). A NUL is
    /// spliced in by expression ([`Dialect::nul_splice`]): inside the quotes it would end
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

    /// The type of `column_type: text`: the dialect's unbounded Unicode text type.
    fn text_type(&self) -> &'static str;

    fn ident_limit(&self) -> IdentLimit {
        IdentLimit::None
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
    /// consulted where [`Dialect::max_key_bytes`] is set, or to reject a type.
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

    /// Why the entity columns cannot be this table's primary key here, if they cannot:
    /// an unknown type (the column would be created untyped), a type the database will not
    /// index, or a key wider than the database allows.
    fn primary_key_problem(&self, entity: &[EntityColumn]) -> Option<String> {
        let mut total = 0usize;
        for e in entity {
            let Some(ty) = &e.sql_type else {
                return Some(format!("the type of entity column {} is unknown", e.name));
            };
            match self.key_bytes(ty) {
                Some(n) => total = total.saturating_add(n),
                None => {
                    return Some(format!(
                        "entity column {} has type {ty}, which {} cannot use in a primary key",
                        e.name,
                        self.name()
                    ))
                }
            }
        }
        match self.max_key_bytes() {
            Some(max) if total > max => Some(format!(
                "the entity key may take {total} bytes, more than the {max} a {} primary key allows",
                self.name()
            )),
            _ => None,
        }
    }

    /// What this database does with an identifier written without quotes: the rule every
    /// name the job writes follows ([`entity_column_name`]; table names are written as given).
    fn unquoted_case(&self) -> UnquotedCase {
        UnquotedCase::Kept
    }

    /// The catalog lists column names as they were created (not lower-cased, as Babelfish's
    /// `sys.columns` does): a merge then matches an attribute to an existing column by exact
    /// name, and by [`Dialect::ident_key`] otherwise.
    fn catalog_keeps_case(&self) -> bool {
        true
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

    /// The literal that [`Dialect::attribute_key`] yields for `name`.
    fn attribute_key_literal(&self, name: &str) -> String {
        self.quote_literal(name)
    }

    /// What [`Dialect::attribute_key`] yields for `name`, as a value read back (test peers and
    /// scripted backends answer discovery with it).
    fn encode_attribute_key(&self, name: &str) -> String {
        name.to_string()
    }

    /// Undo whatever [`Dialect::attribute_key`] added, on a value read back from discovery.
    fn decode_attribute_key(&self, raw: String) -> String {
        raw
    }

    fn begin(&self) -> String {
        "BEGIN".into()
    }

    fn commit(&self) -> String {
        "COMMIT".into()
    }

    fn rollback(&self) -> String {
        "ROLLBACK".into()
    }

    /// Whether CREATE/DROP/RENAME take part in a transaction (MariaDB's do not).
    fn transactional_ddl(&self) -> bool {
        true
    }

    /// The integer type of companion tables' count columns.
    fn integer_type(&self) -> &'static str {
        "BIGINT"
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

    /// The declared type of a typed column of `kind` (one [`Dialect::stores`]).
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
    /// against [`Dialect::declared_row_limit`]; None: the unbounded type.
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
        sql.push(self.rename_table(staging, target));
        sql
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

    /// Mark a staging table created outside a transaction with the run that made it (the
    /// text `mark`), where the database keeps such a mark.
    fn mark_created(&self, create_table: String, _mark: &str) -> String {
        create_table
    }

    /// The kind of a type as this database declares it (an entity key read for another
    /// database); None: no portable equivalent.
    fn portable_type(&self, declared: &str) -> Option<ColumnKind> {
        portable::parse(declared)
    }

    /// A query listing the column names of `table` in order (a merge reads what the
    /// existing target has).
    fn table_columns(&self, table: &TableRef) -> String;

    /// A query listing `(name, declared type)` of `table`'s columns in order, the type as
    /// [`Dialect::portable_type`] reads it: what a typed merge compares its values with.
    fn column_types(&self, table: &TableRef) -> String;

    /// The statement that changes `column` of `table` to `sql_type`, keeping every value (a
    /// typed merge widening a column); None where the database has no such statement.
    fn alter_column_type(&self, table: &TableRef, column: &str, sql_type: &str) -> Option<String> {
        let _ = (table, column, sql_type);
        None
    }

    /// The source rows the typed round-trip check converts, fenced so that its CASTs only
    /// ever see the rows the job selects (a planner may otherwise test them first).
    fn fenced_source_rows(&self, job: &Job) -> String {
        self.source_rows(job)
    }

    /// `ALTER TABLE … ADD` one column: a merge's new attribute.
    fn add_column(&self, table: &TableRef, column: &str, sql_type: &str) -> String {
        format!(
            "ALTER TABLE {table} ADD {} {sql_type}",
            self.quote_ident(column)
        )
    }

    /// `a` equals `b`, NULL equal to NULL.
    fn null_safe_eq(&self, a: &str, b: &str) -> String {
        format!("(({a} = {b}) OR ({a} IS NULL AND {b} IS NULL))")
    }

    /// How this database upserts a merge's staging rows into the target (same key).
    fn upsert_style(&self) -> merge::UpsertStyle {
        merge::UpsertStyle::UpdateThenInsert
    }

    /// Where a merge goes into a copy swapped in after commit (DDL not transactional): one row
    /// that changes whenever a row of `table` does (its rows and a hash of `columns`), to tell
    /// whether the replaced target is still what was copied. None: the database needs none.
    fn table_fingerprint(&self, _table: &TableRef, _columns: &[String]) -> Option<String> {
        None
    }

    /// Where DDL is not transactional: an empty copy of `old` (keys, types) named `new`, for
    /// a merge that must add columns without altering the live table before commit.
    fn create_table_like(&self, _new: &TableRef, _old: &TableRef) -> Option<String> {
        None
    }

    /// Which spelling of the in-database Sudoku solvers' SQL this database takes (None: it
    /// has none).
    fn sudoku_flavor(&self) -> Option<sudoku_sql::Flavor> {
        None
    }

    /// Where this database has a standalone script of its own kind (`eavpivot script`): the
    /// function that renders it. None: no dynamic SQL to discover the columns with.
    fn script_renderer(&self) -> Option<script::Renderer> {
        None
    }

    /// The standalone script `eavpivot script` prints for `job`, or why this database cannot
    /// have one. SQL Server overrides it for its FOR XML PATH variant.
    fn standalone_script(
        &self,
        job: &Job,
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
        render(job)
    }

    /// What every plan on this database says, whatever the job: behaviour of the database
    /// a user must not be surprised by (Oracle's empty string that is NULL).
    fn plan_notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// `strategy: auto` streams above this many columns. On SQLite, PostgreSQL and MariaDB
    /// the stream won at every measured width from 10 columns up (benches/pivot,
    /// BENCHMARKS.md): besides its CASE per column per row the pushdown needs a separate
    /// conflict-count scan, which the stream does in passing. 0 = always stream.
    fn stream_above_columns(&self) -> usize {
        0
    }

    /// `SELECT` of at most `n` rows of `query`.
    fn limit(&self, query: &str, n: u64) -> String {
        format!("{query} LIMIT {n}")
    }

    /// A query returning one row with one integer: 1 when the table exists, else 0.
    fn table_exists(&self, table: &TableRef) -> String;

    fn drop_table(&self, table: &TableRef) -> String {
        format!("DROP TABLE {table}")
    }

    /// Rename `from` to the last part of `to` (same schema).
    fn rename_table(&self, from: &TableRef, to: &TableRef) -> String {
        format!("ALTER TABLE {from} RENAME TO {}", to.last_part())
    }

    /// `FROM t AS a JOIN … WHERE …` of the job's source: its scope (`source.where`).
    fn source_from(&self, job: &Job) -> String {
        source_from_sql(job, job.source.filter.as_deref(), None)
    }

    /// The key–value rows as a derived table with columns `e0…eN, a, v`. With
    /// `source.changed` (a merge's delta) only the entities that have a row in the scope
    /// matching it, each with all its rows in the scope: every query of the run (discovery,
    /// both strategies, verification) sees the same rows.
    fn source_rows(&self, job: &Job) -> String {
        let rows = source_rows_sql(self, job, job.source.filter.as_deref());
        let Some(changed) = &job.source.changed else {
            return rows;
        };
        let keys: Vec<String> = job
            .entity
            .iter()
            .enumerate()
            .map(|(i, e)| format!("{} AS e{i}", e.expr))
            .collect();
        let delta = format!(
            "SELECT {}\n  {}",
            keys.join(", "),
            source_from_sql(job, job.source.filter.as_deref(), Some(changed))
        );
        let outer = format!("SELECT {}, r.a, r.v FROM ({rows}) r", entity_refs(job, "r"));
        if job.entity.len() == 1 {
            format!("{outer}\n  WHERE r.e0 IN (SELECT c.e0 FROM ({delta}) c)")
        } else {
            let matched: Vec<String> = (0..job.entity.len())
                .map(|i| format!("c.e{i} = r.e{i}"))
                .collect();
            format!(
                "{outer}\n  WHERE EXISTS (SELECT 1 FROM ({delta}) c WHERE {})",
                matched.join(" AND ")
            )
        }
    }

    /// The key–value rows of the job's joins with `filter` instead of the scope and no delta:
    /// what a merge's guard reads to find values outside `where`.
    fn source_rows_filtered(&self, job: &Job, filter: Option<&str>) -> String {
        source_rows_sql(self, job, filter)
    }

    /// Distinct attribute names with their row and non-null-value counts, the smallest and
    /// largest value in bytes (the capacity estimate's widths), and per entity column the rows
    /// where it is NULL (a primary key refuses them): all in the one scan discovery makes.
    /// Columns: `a, n_rows, n_values, min_bytes, max_bytes, null_e0, null_e1, …`.
    fn discover_attributes(&self, job: &Job) -> String {
        let width = self.value_bytes("s.v");
        let mut cols = vec![
            "s.a".to_string(),
            "COUNT(*) AS n_rows".into(),
            "COUNT(s.v) AS n_values".into(),
            format!("MIN({width}) AS min_bytes"),
            format!("MAX({width}) AS max_bytes"),
        ];
        cols.extend(
            (0..job.entity.len()).map(|i| format!("COUNT(*) - COUNT(s.e{i}) AS null_e{i}")),
        );
        format!(
            "SELECT {}\nFROM ({}) s\nGROUP BY s.a",
            cols.join(", "),
            self.source_rows(job)
        )
    }

    /// Whether this engine can only `GROUP BY` by sorting every row (no hash aggregate):
    /// discovery then aggregates [`Dialect::discovery_scan`] in eavpivot, which measured 3×
    /// faster on SQLite than its sorter over a million rows.
    fn groups_by_sorting(&self) -> bool {
        false
    }

    /// Discovery's input as one plain scan, one row per source row: `a`, the value's bytes
    /// (NULL for a NULL value), then 1 per NULL entity column: what
    /// [`Dialect::discover_attributes`] aggregates, for [`crate::execute`] to aggregate.
    fn discovery_scan(&self, job: &Job) -> String {
        discovery_scan_sql(self, job, false)
    }

    /// [`Dialect::discovery_scan`] with each row's value and entity key after it
    /// (`…, v, e0, e1, …`): when the job types its columns ([`crate::plan::types`]) discovery
    /// reads every value once, here, and decides the types in eavpivot.
    fn discovery_scan_values(&self, job: &Job) -> String {
        discovery_scan_sql(self, job, true)
    }

    /// One row, one integer: the most non-null cells any entity has among `attributes`,
    /// the fact that decides whether a row that could be too big certainly is. Run only when
    /// the plan's all-cells-filled estimate does not fit and `split` is off.
    fn max_cells_per_entity(&self, job: &Job, attributes: &[String]) -> String {
        let names: Vec<String> = attributes
            .iter()
            .map(|a| self.attribute_key_literal(a))
            .collect();
        format!(
            "SELECT MAX(n) FROM (SELECT COUNT(DISTINCT s.a) AS n FROM ({}) s WHERE s.v IS NOT NULL AND s.a IN ({}) GROUP BY {}) c",
            self.source_rows(job),
            names.join(", "),
            entity_refs(job, "s")
        )
    }

    /// A query with no rows selecting the entity keys, so the backend can report their types.
    /// The backend runs it as given through [`crate::backend::Backend::column_types`].
    fn describe_entity(&self, job: &Job) -> String {
        entity_probe_query(self, job)
    }

    /// Number of distinct entities: the row count every target table must end with.
    fn count_entities(&self, job: &Job) -> String {
        format!(
            "SELECT COUNT(*) FROM (SELECT DISTINCT {} FROM ({}) s) d",
            entity_refs(job, "s"),
            self.source_rows(job)
        )
    }

    /// Per attribute, the number of entities with a non-null value: each column's cell count.
    fn count_cells_per_attribute(&self, job: &Job) -> String {
        format!(
            "SELECT d.a, COUNT(*) FROM (SELECT DISTINCT {}, s.a FROM ({}) s WHERE s.v IS NOT NULL) d GROUP BY d.a",
            entity_refs(job, "s"),
            self.source_rows(job)
        )
    }

    /// Per attribute `a, pairs, conflicting`: the entities holding a non-null value (the
    /// column's expected cell count) and how many of them hold more than one distinct value.
    /// The pushdown's one survey of the source: conflicts are known before anything is written,
    /// and the cell counts check the target after, with no second scan.
    fn pairs_per_attribute(&self, job: &Job) -> String {
        let entity = entity_refs(job, "s");
        format!(
            "SELECT p.a, COUNT(*) AS pairs, SUM(CASE WHEN p.lo <> p.hi THEN 1 ELSE 0 END) AS conflicting\nFROM (SELECT {entity}, s.a, MIN(s.v) AS lo, MAX(s.v) AS hi FROM ({}) s WHERE s.v IS NOT NULL AND {} GROUP BY {entity}, s.a) p\nGROUP BY p.a",
            self.source_rows(job),
            named_attribute(self),
        )
    }

    /// The unique keys of `table` that the catalog vouches for, one row per key column:
    /// `key_name, column_name`. Only keys enforced for every row (no partial index, no
    /// expression part, not deferred). Where the job's entity and attribute columns cover
    /// one, no (entity, attribute) pair can repeat and the pushdown skips its survey
    /// ([`Dialect::pairs_per_attribute`]). None: this database's catalog is not read, the
    /// survey runs.
    fn unique_keys(&self, _table: &TableRef) -> Option<String> {
        None
    }

    /// Whether an `INSERT … SELECT`'s reported row count is the rows it inserted, so the
    /// pushdown's `GROUP BY` entity count can stand for a separate distinct-entity count.
    fn counts_inserted_rows(&self) -> bool {
        true
    }

    /// Entity/attribute pairs that carry more than one distinct value (the first ten are
    /// listed when `aggregate: error` refuses a job).
    fn conflicts(&self, job: &Job) -> String {
        format!(
            "SELECT {}, s.a, MIN(s.v) AS lo, MAX(s.v) AS hi FROM ({}) s WHERE s.v IS NOT NULL AND {} GROUP BY {}, s.a HAVING MIN(s.v) <> MAX(s.v)",
            entity_refs(job, "s"),
            self.source_rows(job),
            named_attribute(self),
            entity_refs(job, "s"),
        )
    }

    /// Every distinct value of every conflicting entity/attribute pair ([`Dialect::conflicts`]),
    /// one row each (`e0…, a, v`), ordered by pair: what `run --conflicts FILE` exports in full.
    fn conflicting_values(&self, job: &Job) -> String {
        let on: Vec<String> = (0..job.entity.len())
            .map(|i| format!("s.e{i} = c.e{i}"))
            .chain(std::iter::once("s.a = c.a".to_string()))
            .collect();
        format!(
            "SELECT DISTINCT {entity}, s.a, s.v FROM ({}) s\nJOIN ({}) c ON {}\nWHERE s.v IS NOT NULL ORDER BY {entity}, s.a, s.v",
            self.source_rows(job),
            self.conflicts(job),
            on.join(" AND "),
            entity = entity_refs(job, "s"),
        )
    }

    /// `CREATE TABLE`, with the entity key as `NOT NULL` primary key where the shape asks for
    /// one and the database can make it (else the plan has said why not).
    fn create_table(&self, shape: &TableShape) -> String {
        let keyed = shape.primary_key && self.primary_key_problem(&shape.entity).is_none();
        let mut cols: Vec<String> = shape
            .entity
            .iter()
            .map(|e| match &e.sql_type {
                Some(ty) if keyed => format!(
                    "{} {} NOT NULL",
                    self.quote_ident(&e.name),
                    self.key_column_type(ty)
                ),
                Some(ty) => format!("{} {ty}", self.quote_ident(&e.name)),
                None => self.quote_ident(&e.name),
            })
            .collect();
        cols.extend(
            shape
                .columns
                .iter()
                .map(|c| format!("{} {}", self.quote_ident(&c.column), c.sql_type(shape))),
        );
        if keyed && !shape.entity.is_empty() {
            cols.push(format!("PRIMARY KEY ({})", entity_order(self, shape)));
        }
        format!(
            "CREATE TABLE {} (\n  {}\n)",
            shape.table,
            cols.join(",\n  ")
        )
    }

    /// Column list `(e…, c…)` of an INSERT into `shape`.
    fn insert_columns(&self, shape: &TableShape) -> String {
        let names: Vec<String> = shape
            .entity
            .iter()
            .map(|e| self.quote_ident(&e.name))
            .chain(shape.columns.iter().map(|c| self.quote_ident(&c.column)))
            .collect();
        names.join(", ")
    }

    /// The pushdown: `INSERT … SELECT e…, MAX(CASE WHEN a = '…' THEN v END) AS "…" … GROUP BY e…`.
    fn insert_select(&self, shape: &TableShape, job: &Job, aggregate: Aggregate) -> String {
        let agg = match aggregate {
            Aggregate::Min => "MIN",
            Aggregate::Max | Aggregate::Error => "MAX",
        };
        let mut select: Vec<String> = (0..job.entity.len()).map(|i| format!("s.e{i}")).collect();
        select.extend(shape.columns.iter().map(|c| {
            let cell = format!(
                "{agg}(CASE WHEN s.a = {} THEN s.v END)",
                self.attribute_key_literal(&c.attribute)
            );
            // The aggregate picks among the source texts, then converts: the stream picks the
            // same value the same way (see execute::stream).
            let cell = match &c.typed {
                Some(t) => self.cast_to(&cell, t),
                None => cell,
            };
            format!("{cell} AS {}", self.quote_ident(&c.column))
        }));
        format!(
            "INSERT INTO {} ({})\nSELECT {}\nFROM ({}) s\nGROUP BY {}",
            shape.table,
            self.insert_columns(shape),
            select.join(",\n  "),
            self.source_rows(job),
            entity_refs(job, "s")
        )
    }

    /// One row: the table's row count, then the non-null count of each pivoted column.
    fn count_table_cells(&self, shape: &TableShape) -> String {
        let mut counts = vec!["COUNT(*)".to_string()];
        counts.extend(
            shape
                .columns
                .iter()
                .map(|c| format!("COUNT({})", self.quote_ident(&c.column))),
        );
        format!("SELECT {} FROM {}", counts.join(", "), shape.table)
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

    /// One row, one integer: the source values of `shape`'s typed columns that this database
    /// does not print back as written once converted to the column's type (so 0 proves the
    /// pushdown's CASTs exact and agrees with the ladder); None when the shape has no such
    /// column. One scan of the source with one `IN` test per distinct type, not a second
    /// pivot: at 1,000 columns a `MAX(CASE)` join back to the target costs minutes.
    fn typed_round_trip(&self, shape: &TableShape, job: &Job) -> Option<String> {
        typed::round_trip_query(self, shape, job)
    }

    /// A bind parameter; `index` counts from 1.
    fn placeholder(&self, _index: usize) -> String {
        "?".into()
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

    /// One row: the entity of a source row whose attribute key is exactly `key` (bytes that
    /// may not be UTF-8), so a refusal can name it.
    fn entity_of_attribute(&self, job: &Job, key: &[u8]) -> String {
        self.limit(
            &format!(
                "SELECT {} FROM ({}) s WHERE s.a = {}",
                entity_refs(job, "s"),
                self.source_rows(job),
                self.text_bytes_literal(key)
            ),
            1,
        )
    }

    /// The key–value rows ordered by entity: the streaming strategy's single scan.
    fn ordered_rows(&self, job: &Job) -> String {
        format!(
            "SELECT {}, s.a, s.v FROM ({}) s ORDER BY {}",
            entity_refs(job, "s"),
            self.source_rows(job),
            entity_refs(job, "s")
        )
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

/// The plain discovery scan, with the values and entity keys when `values`.
fn discovery_scan_sql<D: Dialect + ?Sized>(dialect: &D, job: &Job, values: bool) -> String {
    let mut cols = vec![
        "s.a".to_string(),
        format!("{} AS b", dialect.value_bytes("s.v")),
    ];
    cols.extend(
        (0..job.entity.len())
            .map(|i| format!("CASE WHEN s.e{i} IS NULL THEN 1 ELSE 0 END AS null_e{i}")),
    );
    if values {
        cols.push("s.v".into());
        cols.push(entity_refs(job, "s"));
    }
    format!(
        "SELECT {}\nFROM ({}) s",
        cols.join(", "),
        dialect.source_rows(job)
    )
}

/// The target's entity columns, quoted: its natural ORDER BY.
pub fn entity_order<D: Dialect + ?Sized>(dialect: &D, shape: &TableShape) -> String {
    shape
        .entity
        .iter()
        .map(|e| dialect.quote_ident(&e.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `SELECT` of the entity keys returning no rows: what a type probe describes.
pub fn entity_probe_query<D: Dialect + ?Sized>(dialect: &D, job: &Job) -> String {
    format!(
        "SELECT {} FROM ({}) s WHERE 1 = 0",
        entity_refs(job, "s"),
        dialect.source_rows(job)
    )
}

/// `s.a` names an attribute: rows with a NULL or empty name are skipped (`pivot.empty_names`),
/// so they are never a pair, a conflict or a cell.
fn named_attribute(dialect: &(impl Dialect + ?Sized)) -> String {
    format!(
        "s.a IS NOT NULL AND s.a <> {}",
        dialect.attribute_key_literal("")
    )
}

/// `s.e0, s.e1, …` for the job's entity keys.
pub fn entity_refs(job: &Job, alias: &str) -> String {
    (0..job.entity.len())
        .map(|i| format!("{alias}.e{i}"))
        .collect::<Vec<_>>()
        .join(", ")
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

/// `FROM t AS a JOIN … WHERE …` of the job's source with `filter` (the scope, or none), and
/// `and` besides it (the delta).
fn source_from_sql(job: &Job, filter: Option<&str>, and: Option<&str>) -> String {
    let mut sql = format!(
        "FROM {}",
        table_with_alias(&job.source.table, &job.source.alias)
    );
    for join in &job.source.joins {
        let kind = match join.kind {
            JoinKind::Inner => "JOIN",
            JoinKind::Left => "LEFT JOIN",
        };
        sql.push_str(&format!(
            "\n  {kind} {} ON {}",
            table_with_alias(&join.table, &join.alias),
            join.on
        ));
    }
    match (filter, and) {
        (Some(f), Some(a)) => sql.push_str(&format!("\n  WHERE ({f}) AND ({a})")),
        (Some(f), None) | (None, Some(f)) => sql.push_str(&format!("\n  WHERE {f}")),
        (None, None) => {}
    }
    sql
}

/// `SELECT e… AS e0…, a, v FROM …` of the job's source with `filter` instead of its scope.
fn source_rows_sql<D: Dialect + ?Sized>(dialect: &D, job: &Job, filter: Option<&str>) -> String {
    let mut cols: Vec<String> = job
        .entity
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{} AS e{i}", e.expr))
        .collect();
    cols.push(format!("{} AS a", dialect.attribute_key(&job.attribute)));
    cols.push(format!("{} AS v", job.value));
    format!(
        "SELECT {}\n  {}",
        cols.join(", "),
        source_from_sql(job, filter, None)
    )
}

fn table_with_alias(table: &TableRef, alias: &Option<String>) -> String {
    match alias {
        Some(a) => format!("{table} {a}"),
        None => table.to_string(),
    }
}

#[cfg(test)]
mod tests;
