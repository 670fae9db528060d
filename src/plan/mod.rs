//! From a validated job and what discovery found, decide everything about the target before
//! any DDL: which attributes become columns, in what order, under what names and type, in
//! which table, with which strategy. Pure: no I/O happens here, so every refusal (limits,
//! collisions, zero attributes) comes before anything is written.

pub mod capacity;
pub mod delta;
pub mod distribute;
pub mod inspect;
pub mod naming;
pub mod order;
pub mod remote;
pub mod source;
pub mod split_target;

pub use source::{script_plan, source_query};
pub mod types;

use crate::dialect::ddl;
use std::collections::HashMap;

use crate::config::{ColumnSelection, ColumnType, EmptyNames, Job, Order, StrategyName};
use crate::dialect::{
    ColumnKind, Dialect, EntityColumn, PivotColumn, SourceQuery, TableShape, Typed,
};
use crate::error::{Error, Result};
use crate::table_ref::TableRef;

pub use naming::Renamed;

/// One distinct attribute name found in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    pub name: String,
    /// Source rows carrying this name.
    pub rows: u64,
    /// Of those, rows with a non-null value.
    pub values: u64,
    /// The shortest and longest non-null value in bytes, where discovery measured them
    /// (the capacity estimate's widths; a transform's own attributes have none).
    pub widths: capacity::Widths,
}

/// What the discovery query returned, decoded.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    pub attributes: Vec<Discovered>,
    /// Rows whose attribute name is NULL or empty.
    pub empty_name_rows: u64,
    /// Per entity column, source rows where it is NULL (empty when not measured): a
    /// primary key refuses them, so a load into a keyed table stops before DDL.
    pub null_keys: Vec<u64>,
    /// The most non-null cells any entity has among the planned columns: counted by a
    /// separate query only when a row could otherwise not fit (see [`capacity`]).
    pub max_cells_per_entity: Option<u64>,
    /// Per attribute name, what its values say about a type ([`types`]): filled by the
    /// discovery scan when the job types its columns ([`types_wanted`]), else empty.
    pub surveys: HashMap<String, types::Survey>,
}

/// Whether discovery must read every value for [`types`]: `column_type: infer` or
/// `pivot.types` overrides.
pub fn types_wanted(job: &Job) -> bool {
    job.pivot.column_type == ColumnType::Infer || !job.pivot.types.is_empty()
}

/// The kinds `pivot.types` declares, by attribute: what the discovery scan checks every value
/// against.
pub fn declared_kinds(job: &Job) -> HashMap<String, ColumnKind> {
    job.pivot
        .types
        .iter()
        .map(|(a, ty)| (a.clone(), types::parse_declared(ty)))
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// One `INSERT … SELECT … MAX(CASE …)` per table, computed by the database.
    Pushdown,
    /// One ordered scan, pivoted in Rust, loaded in batches.
    Stream,
}

impl Strategy {
    pub fn as_str(&self) -> &'static str {
        match self {
            Strategy::Pushdown => "pushdown",
            Strategy::Stream => "stream",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Plan {
    /// The target tables: one, or several with `split`.
    pub tables: Vec<TableShape>,
    /// Discovered attributes that were left out by `exclude` (or absent from a `columns` list).
    pub excluded: Vec<String>,
    pub renamed: Vec<Renamed>,
    pub empty_name_rows: u64,
    pub strategy: Strategy,
    pub strategy_reason: String,
    /// What the plan could not do as asked and why (a primary key it cannot create).
    pub notes: Vec<String>,
    /// Source rows discovery counted (all attributes, empty names included): the stream's
    /// progress total and `auto`'s size estimate.
    pub source_rows: u64,
    /// The job's source as one value (tables and joins, entity/attribute/value expressions,
    /// scope, delta), built here once: every statement after planning that reads the source
    /// renders it from this.
    pub source: SourceQuery,
}

impl Plan {
    pub fn columns(&self) -> impl Iterator<Item = (&TableShape, &PivotColumn)> {
        self.tables
            .iter()
            .flat_map(|t| t.columns.iter().map(move |c| (t, c)))
    }

    pub fn column_count(&self) -> usize {
        self.tables.iter().map(|t| t.columns.len()).sum()
    }
}

/// Options that come from the command line rather than the job file.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    pub strategy: Option<StrategyName>,
    /// The source is read from another database than the target (`target.connection`):
    /// only the stream can move rows between two databases.
    pub across_databases: bool,
    /// A transform does the work inside the database (`crate::transform::InDatabase`): its
    /// strategy reason. Such a plan is the pushdown.
    pub in_database: Option<&'static str>,
    /// The link to the server, measured before planning (execute does; the plan only weighs
    /// the numbers): `auto` weighs it against the engine's costs ([`remote`]). None for an
    /// embedded database, or when nothing was measured.
    pub link: Option<Link>,
    /// Column names as the target database compares identifiers, where its rule is not the
    /// dialect's key ([`crate::dialect::Catalog::identifier_classes`]): names with one class
    /// are one identifier there. Read by execute before planning.
    pub identifier_classes: Option<std::sync::Arc<HashMap<String, u64>>>,
}

/// The link to a database server as measured at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// The fastest round trip of a trivial one-row query.
    pub round_trip: std::time::Duration,
    /// Bytes per second of a reply, where measured: only when it can turn `auto`'s choice
    /// ([`remote::throughput_matters`]) and the dialect has a probe.
    pub throughput: Option<u64>,
}

/// `auto` with a server whose engine has no calibrated costs, or whose link's throughput
/// could not be measured where it decides ([`remote`]): the stream moves every source row
/// to eavpivot and every wide row back over the link, the pushdown moves nothing but does
/// one CASE per column per source row. benches/pivot ("Remote links" in BENCHMARKS.md, 1M
/// source rows, PostgreSQL and MariaDB, since the pushdown skips its survey on a unique
/// key): at 10 columns the pushdown won on loopback and on the 1 ms / 1 Gbit/s and 20 ms /
/// 100 Mbit/s links (1.4-2.7x), at 100 columns the stream won on all three (1.3-3.9x)
/// except PostgreSQL at 20 ms / 100 Mbit/s, which the costs decide; one width between the
/// two (as SQL Server's width rule).
pub const REMOTE_PUSHDOWN_COLUMNS: usize = 32;

/// Build the plan. `entity_types` are the source types of the entity keys, where known.
pub fn build_plan(
    job: &Job,
    dialect: &dyn Dialect,
    discovery: &Discovery,
    entity_types: &[Option<String>],
    options: PlanOptions,
) -> Result<Plan> {
    if discovery.empty_name_rows > 0 && job.pivot.empty_names == EmptyNames::Error {
        return Err(Error::Job(format!(
            "{} source rows have a NULL or empty attribute name (pivot.empty_names: error)",
            discovery.empty_name_rows
        )));
    }
    let (attributes, excluded) = select_attributes(job, discovery);
    // A merge's delta may leave no column: it names no entity (nothing to do), or only
    // entities whose rows have no name or an excluded one (re-pivoted to no cell, as a whole
    // merge would). Neither is an error; a whole run with no column is.
    let delta = job.source.changed.is_some();
    if attributes.is_empty() && !delta {
        return Err(Error::Job(format!(
            "no attributes to pivot: discovery found {} distinct names in {}{}",
            discovery.attributes.len(),
            job.source.table,
            if excluded.is_empty() {
                String::new()
            } else {
                format!(", all of them excluded ({})", excluded.len())
            }
        )));
    }
    let (mut columns, renamed) = naming::name_columns_in(
        job,
        dialect,
        &attributes,
        options.identifier_classes.as_deref(),
    )?;
    let mut notes = dialect.plan_notes();
    notes.extend(type_columns(job, dialect, discovery, &mut columns)?);
    let (entity, column_type) = target_layout(job, dialect, entity_types);
    let widths = column_widths(discovery, &columns);
    if job.transforms.is_empty() {
        for (column, width) in columns.iter_mut().zip(&widths) {
            column.longest = width.map(|(_, longest)| longest);
        }
    }
    let tables = split_tables(
        job,
        dialect,
        entity,
        columns,
        column_type,
        &widths,
        discovery,
    )?;
    if let Some(problem) = tables
        .first()
        .and_then(|t| ddl::primary_key_problem(dialect, &t.entity))
    {
        let names: Vec<String> = tables.iter().map(|t| t.table.to_string()).collect();
        notes.push(format!(
            "no primary key on {}: {problem}; one row per entity is still verified before commit",
            names.join(", ")
        ));
    }
    let source_rows = discovered_rows(discovery);
    let (strategy, strategy_reason) = choose_strategy(job, dialect, options, &tables, discovery);
    Ok(Plan {
        tables,
        excluded,
        renamed,
        empty_name_rows: discovery.empty_name_rows,
        strategy,
        strategy_reason,
        notes,
        source_rows,
        source: source_query(job),
    })
}

/// Source rows discovery counted: all attributes, empty names included.
fn discovered_rows(discovery: &Discovery) -> u64 {
    discovery.attributes.iter().map(|d| d.rows).sum::<u64>() + discovery.empty_name_rows
}

/// Give each column its own type where the job asks: `pivot.types` (every value checked by
/// discovery, a misfit refused here, before any DDL; stored as text where the database would
/// change values, with a note), else with `column_type: infer` the ladder's decision
/// (`pivot.infer`), kept as text where the dialect could not store the kind. The notes are
/// the plan's.
fn type_columns(
    job: &Job,
    dialect: &dyn Dialect,
    discovery: &Discovery,
    columns: &mut [PivotColumn],
) -> Result<Vec<String>> {
    let infer = job.pivot.column_type == ColumnType::Infer;
    let mut declared_bytes = 0usize;
    let mut notes = Vec::new();
    for column in columns.iter_mut() {
        let survey = discovery.surveys.get(&column.attribute);
        if let Some(ty) = job.pivot.types.get(&column.attribute) {
            column.typed = Some(declared_type(
                dialect,
                &column.attribute,
                ty,
                survey,
                &mut notes,
            )?);
            continue;
        }
        if !infer {
            continue;
        }
        let options = job.pivot.infer;
        let (mut kind, mut why) = survey.map_or_else(
            || {
                (
                    ColumnKind::UnboundedText,
                    "text: a transform's column, not surveyed".to_string(),
                )
            },
            |s| s.decide_with(options),
        );
        if !kind.is_text() && !dialect.stores(&kind) {
            why = format!(
                "{why}; kept as text: {} would not print it back as written",
                dialect.name()
            );
            kind = survey.map_or(ColumnKind::UnboundedText, |s| s.text_kind_with(options));
        }
        if let Some(limit) = dialect.declared_row_limit() {
            let declared = |kind: &ColumnKind| match kind {
                ColumnKind::Text {
                    chars,
                    utf16,
                    bytes,
                } => dialect
                    .bounded_text_type(*chars, *utf16, *bytes)
                    .map_or(0, |(_, n)| n),
                _ => 0,
            };
            // Headroom gives way to the exact width before the column goes unbounded.
            let exact = survey.map(|s| s.text_kind());
            if kind.is_text() && declared_bytes + declared(&kind) > limit {
                if let Some(exact) = exact.filter(|e| declared_bytes + declared(e) <= limit) {
                    why = format!(
                        "{why}; exact width: the row's declared widths would pass {limit} bytes"
                    );
                    kind = exact;
                } else if declared(&kind) > 0 {
                    why = format!(
                        "{why}; unbounded: the row's declared widths would pass {limit} bytes"
                    );
                    kind = ColumnKind::UnboundedText;
                }
            }
            declared_bytes += declared(&kind);
        }
        if let (Some(exact), ColumnKind::Text { .. }) = (survey.map(|s| s.text_kind()), &kind) {
            why = text_headroom_reason(dialect, why, &kind, &exact);
        }
        let by_value = options.numbers == crate::config::InferNumbers::Value
            && matches!(
                kind,
                ColumnKind::Decimal { .. } | ColumnKind::Timestamp { .. }
            );
        column.typed = Some(Typed {
            sql_type: dialect.column_sql_type(&kind),
            kind,
            why,
            round_trips: true,
            by_value,
        });
    }
    Ok(notes)
}

/// `text: …; VARCHAR(32), headroom (exact: VARCHAR(5))` where the dialect bounds text and
/// headroom made the bound longer than the longest value.
fn text_headroom_reason(
    dialect: &dyn Dialect,
    why: String,
    kind: &ColumnKind,
    exact: &ColumnKind,
) -> String {
    let bounded = |k: &ColumnKind| match k {
        ColumnKind::Text {
            chars,
            utf16,
            bytes,
        } => dialect
            .bounded_text_type(*chars, *utf16, *bytes)
            .map(|(ty, _)| ty),
        _ => None,
    };
    match (bounded(kind), bounded(exact)) {
        (Some(ty), Some(narrow)) if ty != narrow => {
            format!("{why}; {ty}, headroom (exact: {narrow})")
        }
        _ => why,
    }
}

/// A `pivot.types` column: refused when a value does not convert; TEXT (with a note) where
/// the database would store the declared type otherwise than as written.
fn declared_type(
    dialect: &dyn Dialect,
    attribute: &str,
    ty: &str,
    survey: Option<&types::Survey>,
    notes: &mut Vec<String>,
) -> Result<Typed> {
    if let Some(misfit) = survey.and_then(|s| s.misfit.as_ref()) {
        return Err(Error::Job(format!(
            "pivot.types: attribute '{}' is declared {ty}, but {misfit} does not convert to it exactly; nothing was written",
            attribute.escape_debug()
        )));
    }
    let changes = survey
        .filter(|s| s.values > 0)
        .and_then(|s| dialect.declared_changes_values(ty, s.integers_only(), s.floats_only()));
    if let (Some(why), Some(survey)) = (changes, survey) {
        let kind = survey.text_kind();
        let sample = survey
            .changed_sample()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        let note = format!(
            "pivot.types: attribute '{}' is declared {ty} but stored as {}: {why}{sample}",
            attribute.escape_debug(),
            dialect.column_sql_type(&kind)
        );
        notes.push(note.clone());
        return Ok(Typed {
            sql_type: dialect.column_sql_type(&kind),
            kind,
            why: note,
            round_trips: true,
            by_value: false,
        });
    }
    Ok(Typed {
        kind: types::parse_declared(ty),
        sql_type: ty.to_string(),
        why: "pivot.types".into(),
        round_trips: false,
        by_value: false,
    })
}

/// One planned table's row size against the database's limit, from what discovery measured.
pub fn table_row_estimate(
    dialect: &dyn Dialect,
    discovery: &Discovery,
    shape: &TableShape,
) -> Option<capacity::RowEstimate> {
    let widths = column_widths(discovery, &shape.columns);
    let fixed = fixed_sizes(&shape.columns);
    let facts = capacity::DataFacts {
        widths: &widths,
        fixed: &fixed,
        max_cells_per_entity: discovery.max_cells_per_entity,
    };
    capacity::row_estimate(dialect, &shape.entity, &shape.column_type, &facts)
}

/// Per column, its fixed in-row size where its type has one.
fn fixed_sizes(columns: &[PivotColumn]) -> Vec<Option<usize>> {
    columns
        .iter()
        .map(|c| {
            c.typed
                .as_ref()
                .and_then(|t| capacity::fixed_bytes(&t.kind))
        })
        .collect()
}

/// Per planned column, its attribute's measured widths.
fn column_widths(discovery: &Discovery, columns: &[PivotColumn]) -> Vec<capacity::Widths> {
    let by_name: HashMap<&str, capacity::Widths> = discovery
        .attributes
        .iter()
        .map(|d| (d.name.as_str(), d.widths))
        .collect();
    columns
        .iter()
        .map(|c| by_name.get(c.attribute.as_str()).copied().flatten())
        .collect()
}

/// The entity columns and column type the plan gives `job`'s target tables.
fn target_layout(
    job: &Job,
    dialect: &dyn Dialect,
    entity_types: &[Option<String>],
) -> (Vec<EntityColumn>, String) {
    let entity = job
        .entity
        .iter()
        .enumerate()
        .map(|(i, e)| EntityColumn {
            name: crate::dialect::entity_column_name(dialect, e),
            sql_type: entity_types.get(i).cloned().flatten(),
        })
        .collect();
    let column_type = match &job.pivot.column_type {
        ColumnType::Text | ColumnType::Infer => dialect.text_type().to_string(),
        ColumnType::Sql(ty) => ty.clone(),
    };
    (entity, column_type)
}

/// With `split` off, the attributes whose fullest entity must be counted before the plan can
/// tell a row that certainly cannot fit from one that only might not; None when the answer
/// does not matter. The caller runs [`crate::dialect::query::max_cells_per_entity`] over them and puts the
/// result in [`Discovery::max_cells_per_entity`].
pub fn attributes_to_count(
    job: &Job,
    dialect: &dyn Dialect,
    discovery: &Discovery,
    entity_types: &[Option<String>],
) -> Option<Vec<String>> {
    if job.target.split != crate::config::Split::Off || discovery.max_cells_per_entity.is_some() {
        return None;
    }
    let (attributes, _) = select_attributes(job, discovery);
    let (entity, column_type) = target_layout(job, dialect, entity_types);
    let mut columns: Vec<PivotColumn> =
        attributes.iter().map(|a| PivotColumn::text(a, a)).collect();
    // A misfit in pivot.types is refused by build_plan; here it only means "not typed".
    let _ = type_columns(job, dialect, discovery, &mut columns);
    let widths = column_widths(discovery, &columns);
    let fixed = fixed_sizes(&columns);
    capacity::needs_entity_count(dialect, &entity, &column_type, &widths, &fixed)
        .then_some(attributes)
}

/// The attribute names that become columns, in the job's order; and those left out.
fn select_attributes(job: &Job, discovery: &Discovery) -> (Vec<String>, Vec<String>) {
    let mut excluded = Vec::new();
    let chosen: Vec<String> = match &job.pivot.columns {
        ColumnSelection::List(list) => {
            excluded.extend(
                discovery
                    .attributes
                    .iter()
                    .filter(|d| !list.contains(&d.name))
                    .map(|d| d.name.clone()),
            );
            list.iter()
                .filter(|name| !job.pivot.exclude.contains(*name))
                .cloned()
                .collect()
        }
        ColumnSelection::Discover => {
            let mut found: Vec<&Discovered> = discovery.attributes.iter().collect();
            match job.pivot.order {
                Order::Natural => found.sort_by(|a, b| order::natural_cmp(&a.name, &b.name)),
                Order::Alphabetical => found.sort_by(|a, b| a.name.cmp(&b.name)),
                Order::Frequency => found.sort_by(|a, b| {
                    b.rows
                        .cmp(&a.rows)
                        .then_with(|| order::natural_cmp(&a.name, &b.name))
                }),
            }
            found.into_iter().map(|d| d.name.clone()).collect()
        }
    };
    let (kept, dropped): (Vec<String>, Vec<String>) = chosen
        .into_iter()
        .partition(|name| !job.pivot.exclude.contains(name));
    excluded.extend(dropped);
    (kept, excluded)
}

/// The `index`-th (from 0) table of a split target: `<t>`, then `<t>_2`, `<t>_3`, …
pub fn split_table_name(target: &TableRef, index: usize) -> TableRef {
    match index {
        0 => target.clone(),
        i => target.with_suffix(&format!("_{}", i + 1)),
    }
}

/// One table, or with `split` several with the same entity key, in column order. The
/// capacity check ([`capacity::tables_for`]) refuses, before any DDL, what cannot fit.
fn split_tables(
    job: &Job,
    dialect: &dyn Dialect,
    entity: Vec<EntityColumn>,
    columns: Vec<PivotColumn>,
    column_type: String,
    widths: &[capacity::Widths],
    discovery: &Discovery,
) -> Result<Vec<TableShape>> {
    let fixed = fixed_sizes(&columns);
    let facts = capacity::DataFacts {
        widths,
        fixed: &fixed,
        max_cells_per_entity: discovery.max_cells_per_entity,
    };
    let ranges = capacity::tables_for(dialect, job.target.split, &entity, &column_type, &facts)?;
    Ok(ranges
        .into_iter()
        .enumerate()
        .map(|(i, range)| TableShape {
            table: split_table_name(&job.target.table, i),
            entity: entity.clone(),
            columns: columns[range].to_vec(),
            column_type: column_type.clone(),
            primary_key: true,
        })
        .collect())
}

/// `auto`: stream when the pushdown's `MAX(CASE)` would cost more than one ordered scan
/// loaded in batches. The pushdown evaluates one CASE per column per source row, so its cost
/// is rows × columns; the stream's is rows plus the load. Where the two cross depends on how
/// fast the engine evaluates CASE and how fast it takes bulk rows, so the width threshold is
/// per backend (measured in `benches/pivot`, see BENCHMARKS.md). Below [`SMALL_SOURCE_ROWS`]
/// either is instant and the pushdown's single statement wins on round trips. With a
/// measured link to a server, [`remote::choose_on_link`] decides instead.
fn choose_strategy(
    job: &Job,
    dialect: &dyn Dialect,
    options: PlanOptions,
    tables: &[TableShape],
    discovery: &Discovery,
) -> (Strategy, String) {
    if let Some(reason) = options.in_database {
        return (Strategy::Pushdown, reason.to_string());
    }
    let wanted = options.strategy.unwrap_or(job.strategy);
    let columns: usize = tables.iter().map(|t| t.columns.len()).sum();
    let source_rows = discovered_rows(discovery);
    if options.across_databases {
        return (
            Strategy::Stream,
            "source and target are two databases: eavpivot reads one and loads the other".into(),
        );
    }
    match wanted {
        StrategyName::Pushdown => (Strategy::Pushdown, "strategy: pushdown was asked for".into()),
        StrategyName::Stream => (Strategy::Stream, "strategy: stream was asked for".into()),
        StrategyName::Auto if !job.transforms.is_empty() => (
            Strategy::Stream,
            "auto: transforms run in the streaming path".into(),
        ),
        StrategyName::Auto if source_rows < SMALL_SOURCE_ROWS => (
            Strategy::Pushdown,
            format!(
                "auto: {source_rows} source rows < {SMALL_SOURCE_ROWS}; one statement in the database is quickest"
            ),
        ),
        StrategyName::Auto => {
            let by_width =
                choose_by_width(source_rows, columns, dialect.stream_above_columns(), dialect.name());
            let Some(link) = options.link else {
                return by_width;
            };
            let attributes: Vec<&str> = tables
                .iter()
                .flat_map(|t| t.columns.iter().map(|c| c.attribute.as_str()))
                .collect();
            let estimate = dialect
                .pivot_costs()
                .map(|costs| remote::estimate(&costs, discovery, &attributes, source_rows));
            remote::choose_on_link(dialect, link, estimate, by_width, (source_rows, columns))
        }
    }
}

/// `auto` without a measured link: by width, as benches/pivot measured on this machine.
fn choose_by_width(
    source_rows: u64,
    columns: usize,
    above: usize,
    name: &str,
) -> (Strategy, String) {
    if columns <= above {
        return (
            Strategy::Pushdown,
            format!(
                "auto: {columns} columns <= {above} on {name}; the database pivots {source_rows} source rows in one statement"
            ),
        );
    }
    (
        Strategy::Stream,
        if above == 0 {
            format!(
                "auto: on {name} the stream measured faster at every width (benches/pivot): one lookup per source row ({source_rows}) instead of {columns} CASE comparisons each, and no separate conflict scan"
            )
        } else {
            format!(
                "auto: {columns} columns > {above} on {name}; MAX(CASE) would make ~{} comparisons over {source_rows} source rows, the stream one lookup per row",
                (source_rows as u128) * (columns as u128)
            )
        },
    )
}

/// Below this many source rows `auto` keeps the pushdown whatever the width: both take
/// milliseconds and one statement has the fewest round trips (measured: 2,000 × 10 on SQLite,
/// 0.06 s pushdown vs 0.11 s stream).
pub const SMALL_SOURCE_ROWS: u64 = 10_000;

/// An attribute name as discovery returned it, decoded (None for NULL).
pub fn attribute_name(dialect: &dyn Dialect, raw: crate::value::Value) -> Result<Option<String>> {
    Ok(raw
        .into_attribute_name()
        .map_err(|bytes| naming::not_text(&bytes, None))?
        .map(|raw| dialect.decode_attribute_key(raw)))
}

/// Decode discovery rows `(a, n_rows, n_values[, min_bytes, max_bytes, null_e0, …])` into a
/// [`Discovery`]. The three-column form (older scripts and test peers) leaves the widths and
/// NULL-key counts unmeasured.
pub fn decode_discovery(
    dialect: &dyn Dialect,
    rows: Vec<Vec<crate::value::Value>>,
) -> Result<Discovery> {
    use crate::value::Value;
    let mut discovery = Discovery::default();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for row in rows {
        if row.len() < 3 || row.len() == 4 {
            return Err(Error::Job(format!(
                "discovery returned rows of {} columns; expected a, n_rows, n_values[, min_bytes, max_bytes, null counts]",
                row.len()
            )));
        }
        let count = |v: &Value| v.as_i64().unwrap_or(0).max(0) as u64;
        let n_rows = count(&row[1]);
        let n_values = count(&row[2]);
        let widths = match (
            row.get(3).and_then(Value::as_i64),
            row.get(4).and_then(Value::as_i64),
        ) {
            (Some(lo), Some(hi)) => Some((lo.max(0) as u64, hi.max(0) as u64)),
            _ => None,
        };
        let nulls: Vec<u64> = row.iter().skip(5).map(count).collect();
        if discovery.null_keys.len() < nulls.len() {
            discovery.null_keys.resize(nulls.len(), 0);
        }
        discovery
            .null_keys
            .iter_mut()
            .zip(&nulls)
            .for_each(|(t, n)| *t += n);
        let name = attribute_name(dialect, row.into_iter().next().unwrap_or(Value::Null))?;
        match name {
            None => discovery.empty_name_rows += n_rows,
            Some(n) if n.is_empty() => discovery.empty_name_rows += n_rows,
            Some(n) => {
                // A database that merged names we keep apart would show up here as a repeat.
                if let Some(&i) = seen.get(&n) {
                    let d = &mut discovery.attributes[i];
                    d.rows += n_rows;
                    d.values += n_values;
                    d.widths = match (d.widths, widths) {
                        (Some((a, b)), Some((c, e))) => Some((a.min(c), b.max(e))),
                        (one, other) => one.or(other),
                    };
                } else {
                    seen.insert(n.clone(), discovery.attributes.len());
                    discovery.attributes.push(Discovered {
                        name: n,
                        rows: n_rows,
                        values: n_values,
                        widths,
                    });
                }
            }
        }
    }
    Ok(discovery)
}

#[cfg(test)]
mod strategy_tests;
