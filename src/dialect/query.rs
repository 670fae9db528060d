//! The queries over the job's source rows, rendered from the dialect's narrow traits: the
//! derived table of key–value rows, discovery, the survey of pairs and conflicts, the
//! pushdown's `INSERT … SELECT`, the stream's ordered scan, the counts verification compares.
//! No dialect overrides them (they were template methods of `Dialect`); where a dialect needs
//! another shape it overrides the hook they call ([`super::Query`], [`super::Types`]).

use super::{typed, Query, Quoting, TableShape, Types};
use crate::terms::Aggregate;

/// The job's source as SQL pieces, built once from the job by the plan
/// ([`crate::plan::source_query`]): every query over the source rows is rendered from this
/// value, so a dialect reads SQL, not the job file's joins, aliases and expressions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceQuery {
    /// `FROM t a\n  JOIN u b ON …`: the tables and joins, without a WHERE.
    pub from: String,
    /// The entity key expressions, in key order (they become `e0`, `e1`, …).
    pub entity: Vec<String>,
    /// The attribute name expression (becomes `a`, through [`Quoting::attribute_key`]).
    pub attribute: String,
    /// The value expression (becomes `v`).
    pub value: String,
    /// The scope (`source.where`).
    pub filter: Option<String>,
    /// A merge's delta (`source.changed`): only entities with a row matching it.
    pub changed: Option<String>,
    /// The delta tests nothing but the entity key against constants
    /// ([`crate::plan::delta`]): every row of an entity answers it alike.
    pub changed_by_key: bool,
    /// The attribute key expression when the catalog showed a cheaper one exact for the
    /// attribute column ([`super::Query::attribute_key_of_charset`]); None: the dialect's
    /// [`Quoting::attribute_key`] of `attribute`.
    pub attribute_key: Option<String>,
    /// What the pushdown's `MAX`/`MIN` and its conflict survey compare in place of `s.v`,
    /// where the engine's own order of the value is not the byte order the stream keeps
    /// ([`super::Query::value_in_byte_order`]); None: `s.v`.
    pub value_order: Option<String>,
    /// The value's type as the source describes it (None: not asked): the stream compares
    /// values of a decimal type, which it reads as their text, by value as the pushdown's
    /// MAX/MIN does.
    pub value_type: Option<String>,
}

impl SourceQuery {
    /// How `d` spells a float of the value's described type in text
    /// ([`super::Types::float_text`]); None: not a float it spells its own way, or not described.
    pub fn float_text<D: Types + ?Sized>(&self, d: &D) -> Option<fn(f64) -> String> {
        self.value_type.as_deref().and_then(|t| d.float_text(t))
    }

    /// The value as the aggregates compare it: `s.v`, or [`SourceQuery::value_order`].
    fn compared_value(&self) -> &str {
        self.value_order.as_deref().unwrap_or("s.v")
    }
}

/// [`SourceQuery::value_order`] for a value whose type the engine described as `described`
/// ([`super::Query::describe_value`]): how MAX/MIN, the conflict checks and `--conflicts`
/// compare it, by its bytes where its own order is not that.
pub fn value_order<D: Query + ?Sized>(d: &D, described: Option<&str>) -> Option<String> {
    d.value_in_byte_order("s.v", described)
}

/// `FROM t AS a JOIN … WHERE …` of the job's source: its scope (`source.where`).
pub fn source_from(source: &SourceQuery) -> String {
    source_from_sql(source, source.filter.as_deref(), None)
}

/// The key–value rows as a derived table with columns `e0…eN, a, v`. With
/// `source.changed` (a merge's delta) only the entities that have a row in the scope
/// matching it, each with all its rows in the scope: every query of the run (discovery,
/// both strategies, verification) sees the same rows.
///
/// Where the delta tests only the entity key and the engine compares constants by its own
/// equality ([`Quoting::constant_comparisons_respect_equality`]), the rows it matches are
/// those entities' rows already: the source is filtered by it directly, which a planner can
/// turn into a range read of the key's index (the `IN` read all of a PostgreSQL source per
/// merge). NULL keys stay out, as the `IN` and `EXISTS` leave them out.
pub fn source_rows<D: Quoting + ?Sized>(d: &D, source: &SourceQuery) -> String {
    let filter = source.filter.as_deref();
    let rows = source_rows_sql(d, source, filter, None);
    let Some(changed) = &source.changed else {
        return rows;
    };
    if delta_read_directly(d, source) {
        let keyed: Vec<String> = std::iter::once(format!("({changed})"))
            .chain(source.entity.iter().map(|e| format!("{e} IS NOT NULL")))
            .collect();
        return source_rows_sql(d, source, filter, Some(&keyed.join(" AND ")));
    }
    let keys: Vec<String> = source
        .entity
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{e} AS e{i}"))
        .collect();
    let delta = format!(
        "SELECT {}\n  {}",
        keys.join(", "),
        source_from_sql(source, source.filter.as_deref(), Some(changed))
    );
    let outer = format!(
        "SELECT {}, r.a, r.v FROM ({rows}) r",
        entity_refs(source, "r")
    );
    if source.entity.len() == 1 {
        format!("{outer}\n  WHERE r.e0 IN (SELECT c.e0 FROM ({delta}) c)")
    } else {
        let matched: Vec<String> = (0..source.entity.len())
            .map(|i| format!("c.e{i} = r.e{i}"))
            .collect();
        format!(
            "{outer}\n  WHERE EXISTS (SELECT 1 FROM ({delta}) c WHERE {})",
            matched.join(" AND ")
        )
    }
}

/// Whether [`source_rows`] filters the source by the delta itself (a delta on the entity key,
/// on an engine that compares constants by its own equality) rather than through `IN`.
pub fn delta_read_directly<D: Quoting + ?Sized>(d: &D, source: &SourceQuery) -> bool {
    source.changed.is_some() && source.changed_by_key && d.constant_comparisons_respect_equality()
}

/// The key–value rows of the job's joins with `filter` instead of the scope and no delta:
/// what a merge's guard reads to find values outside `where`.
pub fn source_rows_filtered<D: Quoting + ?Sized>(
    d: &D,
    source: &SourceQuery,
    filter: Option<&str>,
) -> String {
    source_rows_sql(d, source, filter, None)
}

/// Distinct attribute names with their row and non-null-value counts, the smallest and
/// largest value in bytes (the capacity estimate's widths), and per entity column the rows
/// where it is NULL (a primary key refuses them): all in the one scan discovery makes.
/// Columns: `a, n_rows, n_values, min_bytes, max_bytes, null_e0, null_e1, …`.
pub fn discover_attributes<D: Types + ?Sized>(d: &D, source: &SourceQuery) -> String {
    let width = d.value_bytes("s.v");
    let mut cols = vec![
        "s.a".to_string(),
        "COUNT(*) AS n_rows".into(),
        "COUNT(s.v) AS n_values".into(),
        format!("MIN({width}) AS min_bytes"),
        format!("MAX({width}) AS max_bytes"),
    ];
    cols.extend((0..source.entity.len()).map(|i| format!("COUNT(*) - COUNT(s.e{i}) AS null_e{i}")));
    format!(
        "SELECT {}\nFROM ({}) s\nGROUP BY s.a",
        cols.join(", "),
        source_rows(d, source)
    )
}

/// Discovery's input as one plain scan, one row per source row: `a`, the value's bytes
/// (NULL for a NULL value), then 1 per NULL entity column: what
/// [`crate::dialect::query::discover_attributes`] aggregates, for [`crate::execute`] to aggregate.
pub fn discovery_scan<D: Types + ?Sized>(d: &D, source: &SourceQuery) -> String {
    discovery_scan_sql(d, source, false)
}

/// [`crate::dialect::query::discovery_scan`] with each row's value and entity key instead of
/// the NULL-key flags (`a, bytes, v, e0, e1, …`; a NULL key part is seen in the key itself):
/// when the job types its columns ([`crate::plan::types`]) discovery reads every value
/// once, here, and decides the types in eavpivot.
pub fn discovery_scan_values<D: Types + ?Sized>(d: &D, source: &SourceQuery) -> String {
    discovery_scan_sql(d, source, true)
}

/// One row, one integer: the most non-null cells any entity has among `attributes`,
/// the fact that decides whether a row that could be too big certainly is. Run only when
/// the plan's all-cells-filled estimate does not fit and `split` is off.
pub fn max_cells_per_entity<D: Quoting + ?Sized>(
    d: &D,
    source: &SourceQuery,
    attributes: &[String],
) -> String {
    let names: Vec<String> = attributes
        .iter()
        .map(|a| d.attribute_key_literal(a))
        .collect();
    format!(
        "SELECT MAX(n) FROM (SELECT COUNT(DISTINCT s.a) AS n FROM ({}) s WHERE s.v IS NOT NULL AND s.a IN ({}) GROUP BY {}) c",
        source_rows(d, source),
        names.join(", "),
        entity_refs(source, "s")
    )
}

/// Number of distinct entities: the row count every target table must end with.
pub fn count_entities<D: Quoting + ?Sized>(d: &D, source: &SourceQuery) -> String {
    format!(
        "SELECT COUNT(*) FROM (SELECT DISTINCT {} FROM ({}) s) d",
        entity_refs(source, "s"),
        source_rows(d, source)
    )
}

/// Per attribute, the number of entities with a non-null value: each column's cell count.
pub fn count_cells_per_attribute<D: Quoting + ?Sized>(d: &D, source: &SourceQuery) -> String {
    format!(
        "SELECT d.a, COUNT(*) FROM (SELECT DISTINCT {}, s.a FROM ({}) s WHERE s.v IS NOT NULL) d GROUP BY d.a",
        entity_refs(source, "s"),
        source_rows(d, source)
    )
}

/// Per attribute `a, pairs, conflicting`: the entities holding a non-null value (the
/// column's expected cell count) and how many of them hold more than one distinct value.
/// The pushdown's one survey of the source: conflicts are known before anything is written,
/// and the cell counts check the target after, with no second scan.
pub fn pairs_per_attribute<D: Quoting + ?Sized>(d: &D, source: &SourceQuery) -> String {
    let entity = entity_refs(source, "s");
    format!(
        "SELECT p.a, COUNT(*) AS pairs, SUM(CASE WHEN p.lo <> p.hi THEN 1 ELSE 0 END) AS conflicting\nFROM (SELECT {entity}, s.a, MIN({v}) AS lo, MAX({v}) AS hi FROM ({}) s WHERE s.v IS NOT NULL AND {} GROUP BY {entity}, s.a) p\nGROUP BY p.a",
        source_rows(d, source),
        named_attribute(d),
        v = source.compared_value(),
    )
}

/// Groups of entity keys the engine counts as one key ([`super::Query::text_equality`])
/// although their bytes differ (`k`, `K`, `k `): for each entity column, the smallest and
/// largest spelling in the group by its exact key in `exact` (an expression over `s.e0`…; the
/// general [`Quoting::attribute_key`] where `exact` has none), or the group's own key where
/// `exact` says the column needs none (None: not text). Only groups with more than one
/// spelling, so no row means the pushdown's `GROUP BY` makes one row per distinct key.
pub fn keys_one_under_collation<D: Quoting + ?Sized>(
    d: &D,
    source: &SourceQuery,
    exact: &[Option<String>],
) -> String {
    let key = |i: usize| match exact.get(i) {
        Some(Some(k)) => Some(k.clone()),
        Some(None) => None,
        None => Some(d.attribute_key(&format!("s.e{i}"))),
    };
    let spellings: Vec<String> = (0..source.entity.len())
        .map(|i| match key(i) {
            Some(k) => format!("MIN({k}), MAX({k})"),
            None => format!("s.e{i}, s.e{i}"),
        })
        .collect();
    let differ: Vec<String> = (0..source.entity.len())
        .filter_map(|i| key(i).map(|k| format!("MIN({k}) <> MAX({k})")))
        .collect();
    format!(
        "SELECT {}\nFROM ({}) s\nGROUP BY {}\nHAVING {}",
        spellings.join(", "),
        source_rows(d, source),
        entity_refs(source, "s"),
        differ.join(" OR ")
    )
}

/// Entity/attribute pairs that carry more than one distinct value (the first ten are
/// listed when `aggregate: error` refuses a job).
pub fn conflicts<D: Quoting + ?Sized>(d: &D, source: &SourceQuery) -> String {
    format!(
        "SELECT {}, s.a, MIN({v}) AS lo, MAX({v}) AS hi FROM ({}) s WHERE s.v IS NOT NULL AND {} GROUP BY {}, s.a HAVING MIN({v}) <> MAX({v})",
        entity_refs(source, "s"),
        source_rows(d, source),
        named_attribute(d),
        entity_refs(source, "s"),
        v = source.compared_value(),
    )
}

/// Every distinct value of every conflicting entity/attribute pair ([`crate::dialect::query::conflicts`]),
/// one row each (`e0…, a, v`, then the value as compared), ordered by pair, then value as the
/// pivot compares values ([`SourceQuery::value_order`]: `b` and `B` are two values even
/// under a case-insensitive collation): what `run --conflicts FILE` exports in full.
pub fn conflicting_values<D: Quoting + ?Sized>(d: &D, source: &SourceQuery) -> String {
    let on: Vec<String> = (0..source.entity.len())
        .map(|i| format!("s.e{i} = c.e{i}"))
        .chain(std::iter::once("s.a = c.a".to_string()))
        .collect();
    format!(
        "SELECT DISTINCT {entity}, s.a, s.v, {v} AS o FROM ({}) s\nJOIN ({}) c ON {}\nWHERE s.v IS NOT NULL ORDER BY {entity}, s.a, o",
        source_rows(d, source),
        conflicts(d, source),
        on.join(" AND "),
        entity = entity_refs(source, "s"),
        v = source.compared_value(),
    )
}

/// The pushdown: `INSERT … SELECT e…, MAX(CASE WHEN a = '…' THEN v END) AS "…" … GROUP BY e…`.
pub fn insert_select<D: Types + ?Sized>(
    d: &D,
    shape: &TableShape,
    source: &SourceQuery,
    aggregate: Aggregate,
) -> String {
    format!(
        "INSERT INTO {} ({})\n{}",
        shape.table,
        super::ddl::insert_columns(d, shape),
        pivot_select(d, shape, source, aggregate, false)
    )
}

/// The pushdown's table made by the pivot itself: `CREATE TABLE t (e…, c…) AS SELECT …`,
/// which PostgreSQL may run on parallel workers (an `INSERT … SELECT` never is). Every
/// column is cast to its declared type and collation ([`super::Types::created_as_column`]),
/// so the table has the columns `CREATE TABLE` would have given it. None where a cast could
/// not give exactly what the INSERT's assignment would (see
/// [`super::ddl::created_as_exactly`]). The key is added after ([`super::ddl::add_primary_key`]).
pub fn create_select<D: Types + ?Sized>(
    d: &D,
    shape: &TableShape,
    source: &SourceQuery,
    aggregate: Aggregate,
) -> Option<String> {
    super::ddl::created_as_exactly(d, shape).then(|| {
        format!(
            "CREATE TABLE {} ({}) AS\n{}",
            shape.table,
            super::ddl::insert_columns(d, shape),
            pivot_select(d, shape, source, aggregate, true)
        )
    })
}

/// The statement that shows whether [`create_select`] would run on parallel workers, and
/// what its plan then contains ([`super::Types::parallel_probe`]).
pub fn create_select_probe<D: Types + ?Sized>(
    d: &D,
    shape: &TableShape,
    source: &SourceQuery,
    aggregate: Aggregate,
) -> Option<(String, &'static str)> {
    d.parallel_probe(&pivot_select(d, shape, source, aggregate, true))
}

/// `SELECT e…, MAX(CASE …) … GROUP BY e…`: one row per entity; with `declared`, every
/// pivoted cell cast to its column's declared type.
///
/// A typed column the round-trip check covers names its aggregate four times (both sides of
/// the test, the cast): where the shape has one, the aggregates are computed once in a
/// derived table `p` and tested and converted outside it (MariaDB evaluates every
/// repetition: its INSERT took twice as long written flat).
fn pivot_select<D: Types + ?Sized>(
    d: &D,
    shape: &TableShape,
    source: &SourceQuery,
    aggregate: Aggregate,
    declared: bool,
) -> String {
    let agg = match aggregate {
        Aggregate::Min => "MIN",
        Aggregate::Max | Aggregate::Error => "MAX",
    };
    let picked = |c: &super::PivotColumn| {
        format!(
            "{agg}(CASE WHEN s.a = {} THEN {} END)",
            d.attribute_key_literal(&c.attribute),
            source.compared_value()
        )
    };
    let derived = shape
        .columns
        .iter()
        .any(|c| c.typed.as_ref().is_some_and(typed::Typed::checked));
    let alias = if derived { "p" } else { "s" };
    let mut select: Vec<String> = (0..source.entity.len())
        .map(|i| {
            let plain = format!("{alias}.e{i}");
            // Made by `CREATE TABLE … AS`: the entity columns as `create_table` declares them.
            let entity = shape.entity.get(i);
            match entity.and_then(|e| Some((e, super::ddl::entity_type(d, shape, e)?))) {
                Some((e, ty)) if declared => format!(
                    "{} AS {}",
                    d.created_as_column(&plain, &ty),
                    d.quote_ident(&e.name)
                ),
                _ => plain,
            }
        })
        .collect();
    select.extend(shape.columns.iter().enumerate().map(|(j, c)| {
        let cell = match derived {
            true => format!("p.c{j}"),
            false => picked(c),
        };
        // The aggregate picks among the source texts, then converts: the stream picks the
        // same value the same way (see execute::stream).
        let cell = match &c.typed {
            // Loaded only where it prints back as written: a value this database would
            // change becomes a missing cell, which verification's counts refuse (and name,
            // `execute::verify::name_misprints`). The round-trip check rides on the pivot.
            Some(t) if t.checked() => format!(
                "CASE WHEN {} THEN {} END",
                typed::prints_back(d, &cell, t),
                d.cast_to(&cell, t)
            ),
            Some(t) if !t.kind.is_text() => d.cast_to(&cell, t),
            // Only an unbounded text type gets here (`created_as_exactly`): this CAST keeps
            // every value, as the INSERT's assignment would.
            _ if declared => d.created_as_column(&cell, c.sql_type(shape)),
            Some(t) => d.cast_to(&cell, t),
            None => d.text_cell(&cell, source.value_type.as_deref()),
        };
        format!("{cell} AS {}", d.quote_ident(&c.column))
    }));
    let grouped = |cols: &[String]| {
        format!(
            "SELECT {}\nFROM ({}) s\nGROUP BY {}",
            cols.join(",\n  "),
            source_rows(d, source),
            entity_refs(source, "s")
        )
    };
    if !derived {
        return grouped(&select);
    }
    let mut inner: Vec<String> = (0..source.entity.len())
        .map(|i| format!("s.e{i}"))
        .collect();
    inner.extend(
        shape
            .columns
            .iter()
            .enumerate()
            .map(|(j, c)| format!("{} AS c{j}", picked(c))),
    );
    format!(
        "SELECT {}\nFROM ({}) p",
        select.join(",\n  "),
        grouped(&inner)
    )
}

/// One row, one integer: the source values of the typed columns of `shapes` (every table
/// of a split) that this database does not print back as written once converted to the
/// column's type (so 0 proves the pushdown's CASTs exact and agrees with the ladder); None
/// when no shape has such a column. One scan of the source with one `IN` test per distinct
/// type, not a second pivot: at 1,000 columns a `MAX(CASE)` join back to the target costs
/// minutes. `streamed`: only the columns the database converts, not the integers the
/// stream binds and checks itself ([`super::Typed::converted_by_stream`]).
pub fn typed_round_trip<D: Query + ?Sized>(
    d: &D,
    shapes: &[TableShape],
    source: &SourceQuery,
    streamed: bool,
) -> Option<String> {
    typed::round_trip_query(d, shapes, source, streamed)
}

/// One row: the entity of a source row whose attribute key is exactly `key` (bytes that
/// may not be UTF-8), so a refusal can name it.
pub fn entity_of_attribute<D: Quoting + ?Sized>(d: &D, source: &SourceQuery, key: &[u8]) -> String {
    d.limit(
        &format!(
            "SELECT {} FROM ({}) s WHERE s.a = {}",
            entity_refs(source, "s"),
            source_rows(d, source),
            d.text_bytes_literal(key)
        ),
        1,
    )
}

/// The key–value rows ordered by entity: the streaming strategy's single scan.
pub fn ordered_rows<D: Quoting + ?Sized>(d: &D, source: &SourceQuery) -> String {
    ordered_rows_with(d, source, "")
}

/// [`ordered_rows`] with a last column `misprinted`: 1 for a value of a typed column of
/// `shapes` that does not print back as written once the database converts it (what
/// [`typed_round_trip`] counts when `streamed`), so the stream's read proves the types
/// without a second scan of the source. None when `shapes` have no such column.
pub fn ordered_rows_checked<D: Query + ?Sized>(
    d: &D,
    source: &SourceQuery,
    shapes: &[TableShape],
) -> Option<String> {
    let column = typed::misprinted_column(d, shapes)?;
    Some(ordered_rows_with(d, source, &format!(", {column}")))
}

fn ordered_rows_with<D: Quoting + ?Sized>(d: &D, source: &SourceQuery, extra: &str) -> String {
    format!(
        "SELECT {}, s.a, s.v{extra} FROM ({}) s ORDER BY {}",
        entity_refs(source, "s"),
        source_rows(d, source),
        entity_refs(source, "s")
    )
}

/// The plain discovery scan, with the values and entity keys when `values`.
fn discovery_scan_sql<D: Types + ?Sized>(
    dialect: &D,
    source: &SourceQuery,
    values: bool,
) -> String {
    let mut cols = vec![
        "s.a".to_string(),
        format!("{} AS b", dialect.value_bytes("s.v")),
    ];
    if values {
        cols.push("s.v".into());
        cols.push(entity_refs(source, "s"));
    } else {
        cols.extend(
            (0..source.entity.len())
                .map(|i| format!("CASE WHEN s.e{i} IS NULL THEN 1 ELSE 0 END AS null_e{i}")),
        );
    }
    format!(
        "SELECT {}\nFROM ({}) s",
        cols.join(", "),
        source_rows(dialect, source)
    )
}

/// `SELECT` of the entity keys returning no rows: what a type probe describes.
pub fn entity_probe_query<D: Quoting + ?Sized>(dialect: &D, source: &SourceQuery) -> String {
    format!(
        "SELECT {} FROM ({}) s WHERE 1 = 0",
        entity_refs(source, "s"),
        source_rows(dialect, source)
    )
}

/// A query with no rows selecting the value, so the backend can report its type.
pub fn value_probe_query<D: Quoting + ?Sized>(dialect: &D, source: &SourceQuery) -> String {
    format!(
        "SELECT s.v FROM ({}) s WHERE 1 = 0",
        source_rows(dialect, source)
    )
}

/// `s.a` names an attribute: rows with a NULL or empty name are skipped (`pivot.empty_names`),
/// so they are never a pair, a conflict or a cell.
fn named_attribute(dialect: &(impl Quoting + ?Sized)) -> String {
    format!(
        "s.a IS NOT NULL AND s.a <> {}",
        dialect.attribute_key_literal("")
    )
}

/// `expr` compared by its bytes, whatever its type or collation: `k` and `K` (or `k ` under
/// PAD SPACE) differ. A number's key is its text, equal exactly when the numbers are.
pub fn exact_key<D: Query + Quoting + ?Sized>(d: &D, expr: &str) -> String {
    d.exact_text_key(expr)
        .unwrap_or_else(|| d.attribute_key(expr))
}

/// `a` and `b` have the same bytes ([`exact_key`]), NULL equal to NULL.
pub fn same_bytes<D: Query + Quoting + ?Sized>(d: &D, a: &str, b: &str) -> String {
    d.null_safe_eq(&exact_key(d, a), &exact_key(d, b))
}

/// `s.e0, s.e1, …` for the job's entity keys.
pub fn entity_refs(source: &SourceQuery, alias: &str) -> String {
    (0..source.entity.len())
        .map(|i| format!("{alias}.e{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `FROM t AS a JOIN … WHERE …` of the job's source with `filter` (the scope, or none), and
/// `and` besides it (the delta).
fn source_from_sql(source: &SourceQuery, filter: Option<&str>, and: Option<&str>) -> String {
    let mut sql = source.from.clone();
    match (filter, and) {
        (Some(f), Some(a)) => sql.push_str(&format!("\n  WHERE ({f}) AND ({a})")),
        (Some(f), None) | (None, Some(f)) => sql.push_str(&format!("\n  WHERE {f}")),
        (None, None) => {}
    }
    sql
}

/// `SELECT e… AS e0…, a, v FROM …` of the job's source with `filter` instead of its scope,
/// and `and` besides it.
fn source_rows_sql<D: Quoting + ?Sized>(
    dialect: &D,
    source: &SourceQuery,
    filter: Option<&str>,
    and: Option<&str>,
) -> String {
    let mut cols: Vec<String> = source
        .entity
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{e} AS e{i}"))
        .collect();
    let key = match &source.attribute_key {
        Some(key) => key.clone(),
        None => dialect.attribute_key(&source.attribute),
    };
    cols.push(format!("{key} AS a"));
    cols.push(format!("{} AS v", source.value));
    format!(
        "SELECT {}\n  {}",
        cols.join(", "),
        source_from_sql(source, filter, and)
    )
}
