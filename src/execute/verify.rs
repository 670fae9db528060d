//! What the streaming pivot's own counts prove, so verification before commit can skip the
//! expensive `SELECT DISTINCT entity, attribute` over the source (13.7 s of a 20 s MariaDB run
//! at 100,000 × 10) without becoming less independent of the code it checks.
//!
//! Verification must show, before commit, that every target table has one row per distinct
//! source entity and that each column has one non-null cell per entity with a non-null value
//! for its attribute. The target side is always counted by the database (`COUNT(*)`,
//! `COUNT(col)` on the table as written). The expected side comes from here when the argument
//! below holds, and from the DISTINCT queries otherwise.
//!
//! **Why the stream's counts are enough.** Discovery, a separate query, counted for every
//! attribute `n_values` (its non-null source rows) and, summed, every source row.
//!
//! 1. *The stream read every row.* The pivoter counts, per planned attribute, the non-null
//!    rows it was handed (`values_read`), and all rows (`source_rows`). If both equal
//!    discovery's numbers, no row was lost between the database and the pivot: a lost row
//!    lowers a count, and only a row delivered twice could hide it (see the limits below).
//! 2. *Each entity was one contiguous run.* The pivoter starts a new wide row whenever the key
//!    changes, so if the read order ever returned to a key (a collation that interleaves
//!    keys, a broken ORDER BY), it would emit two rows for one entity and count both. That is
//!    excluded either by the keys themselves — all integers, each strictly greater than the
//!    one before ([`StreamStats::keys_ascending`]), so no key can come back — or, for other
//!    keys, by the database's own `COUNT(DISTINCT entity)` (cheap: one index scan where the
//!    source is keyed by entity) having to equal the number of runs: runs ≥ distinct keys,
//!    with equality only if every key is one run.
//! 3. *Then the cells follow.* Within one run every non-null row either fills its empty cell
//!    or lands on a filled one (`repeats`). So the non-null cells of a column are exactly
//!    `values_read − repeats` = the entities with a non-null value for that attribute, which
//!    by 1 and 2 is the number the DISTINCT query would return. The target's `COUNT(col)` must
//!    equal it, and its `COUNT(*)` must equal the runs.
//!
//! When 1 fails (the source changed between discovery and the read, or rows were lost), the
//! DISTINCT queries run as before and the target is checked against them.
//!
//! **Limits, stated plainly.** Counts cannot see a row lost and another of the same attribute
//! delivered twice within the same entity's run; the DISTINCT scheme could not see a lost
//! duplicate either, which this one does (1). Neither checks values, only their presence.
//! Pushdown is untouched: it has no pivoter of its own to count with.

use crate::dialect::{ddl, query};
use std::collections::HashMap;

use crate::config::Job;
use crate::dialect::{Dialect, SourceQuery, TableShape};
use crate::error::{Error, Result};
use crate::plan::Discovery;
use crate::value::{first_int, row_counts, Value};

use super::session::Session;
use super::stream::StreamStats;
use super::write::Table;

/// The note on the verification queries (`--json`, `--verbose`).
pub(super) const VERIFY_NOTE: &str =
    "verify: rows and non-null cells written (must match the source)";

/// The expected side of verification, from the stream where its counts prove it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamProof {
    /// Non-null cells per table per column: known when the stream read every non-null row
    /// discovery counted (step 1).
    pub cells: Option<Vec<Vec<u64>>>,
    /// Distinct entities: known when, besides, the keys were integers in strictly ascending
    /// order (step 2). Otherwise the database counts them and they must equal `runs`.
    pub entities: Option<u64>,
    /// Wide rows the stream started (one per run of equal keys).
    pub runs: u64,
}

/// What `stats` proves against `discovery` for the planned `tables`.
pub fn stream_proof(
    stats: &StreamStats,
    tables: &[TableShape],
    discovery: &Discovery,
) -> StreamProof {
    let values: HashMap<&str, u64> = discovery
        .attributes
        .iter()
        .map(|d| (d.name.as_str(), d.values))
        .collect();
    let source_rows =
        discovery.attributes.iter().map(|d| d.rows).sum::<u64>() + discovery.empty_name_rows;
    let mut all_read = stats.source_rows == source_rows;
    let mut cells = Vec::with_capacity(tables.len());
    for (t, shape) in tables.iter().enumerate() {
        let mut table = Vec::with_capacity(shape.columns.len());
        for (c, col) in shape.columns.iter().enumerate() {
            let read = at(&stats.values_read, t, c);
            let repeats = at(&stats.repeats, t, c);
            let want = values.get(col.attribute.as_str()).copied().unwrap_or(0);
            // The identity of step 3 is checked, not assumed: a pivoter that broke it would
            // otherwise vouch for itself.
            all_read &= read == want && read >= repeats && read - repeats == at(&stats.cells, t, c);
            table.push(read.saturating_sub(repeats));
        }
        cells.push(table);
    }
    StreamProof {
        entities: (all_read && stats.keys_ascending).then_some(stats.entities),
        cells: all_read.then_some(cells),
        runs: stats.entities,
    }
}

/// Step 2 for keys that are not ascending integers: the database's distinct count must equal
/// the runs the stream made, or the cells it counted are not per entity.
pub fn check_runs(proof: &StreamProof, distinct_entities: u64) -> Result<()> {
    if proof.runs == distinct_entities {
        return Ok(());
    }
    Err(Error::Job(format!(
        "verification failed: the stream read {} entities but the source has {distinct_entities} distinct entities (rows were lost, the ordered read returned an entity's rows in more than one run, or keys that differ in bytes are one key to the source's collation: case, accents, trailing spaces)",
        proof.runs
    )))
}

fn at(counts: &[Vec<u64>], t: usize, c: usize) -> u64 {
    counts
        .get(t)
        .and_then(|row| row.get(c))
        .copied()
        .unwrap_or(0)
}

// Verification queries of a load: the expected side (from the stream's proof or the source)
// and the target side (always counted by the database).

/// The expected rows and cells of every target, where they come from the source: from
/// the stream's own counts where they prove them ([`verify`]), else from the database.
/// None in a dry run (the queries are recorded only).
pub(super) async fn expected_from_source(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    source_query: &SourceQuery,
    targets: &[Table],
    proof: Option<StreamProof>,
    streamed: bool,
    pushdown: PushdownCounts,
) -> Result<Option<(u64, Vec<Vec<u64>>)>> {
    let (entities_note, cells_note) = if streamed {
        (
            "verify: distinct entities in the source (sent unless the stream's integer keys came in ascending order and its counts match discovery)",
            "verify: non-null (entity, attribute) pairs in the source (sent only if the stream's per-attribute counts differ from discovery's)",
        )
    } else {
        (
            "verify: distinct entities in the source",
            "verify: non-null (entity, attribute) pairs in the source",
        )
    };
    let rows = match proof
        .as_ref()
        .and_then(|p| p.entities)
        .or(pushdown.entities)
    {
        Some(n) => Some(n),
        None => session
            .query_source_in_load(&query::count_entities(dialect, source_query), entities_note)
            .await?
            .map(|r| first_int(&r)),
    };
    if let (Some(proof), Some(rows)) = (&proof, rows) {
        check_runs(proof, rows)?;
    }
    let cells = match proof.and_then(|p| p.cells).or(pushdown.cells) {
        Some(cells) => Some(cells),
        None => session
            .query_source_in_load(
                &query::count_cells_per_attribute(dialect, source_query),
                cells_note,
            )
            .await?
            .map(|rows| cells_per_column(dialect, targets, &rows)),
    };
    Ok(rows.zip(cells))
}

/// Where the pushdown's expected cells come from, known before it loads.
pub enum PairCounts {
    /// Its survey's `(a, pairs, conflicting)` rows ([`crate::dialect::query::pairs_per_attribute`]).
    Surveyed(Vec<Vec<Value>>),
    /// The catalog proves (entity, attribute) unique ([`super::discover::unique_pairs`]):
    /// every non-null row is its own pair, so discovery's per-attribute value counts are the
    /// cells.
    Unique,
}

/// What the pushdown knows of the expected side without asking the source again.
#[derive(Default)]
pub struct PushdownCounts {
    /// Expected cells per table and column.
    pub cells: Option<Vec<Vec<u64>>>,
    /// Distinct entities: the rows its `INSERT … SELECT … GROUP BY` entity reported, one per
    /// group, when the database reports them and every table got the same number.
    pub entities: Option<u64>,
}

impl PushdownCounts {
    pub fn new(
        dialect: &dyn Dialect,
        targets: &[Table],
        discovery: &Discovery,
        pairs: PairCounts,
        inserted: &[u64],
    ) -> PushdownCounts {
        let cells = match pairs {
            PairCounts::Surveyed(rows) => cells_per_column(dialect, targets, &rows),
            PairCounts::Unique => {
                let values: HashMap<&str, u64> = discovery
                    .attributes
                    .iter()
                    .map(|d| (d.name.as_str(), d.values))
                    .collect();
                columns_of(targets, |attribute| values.get(attribute).copied())
            }
        };
        let entities = match inserted.split_first() {
            Some((n, rest)) if rest.iter().all(|m| m == n) => Some(*n),
            _ => None,
        };
        PushdownCounts {
            cells: Some(cells),
            entities,
        }
    }
}

/// Per target and column, the count `per_attribute` gives its attribute (0 when none).
fn columns_of(targets: &[Table], per_attribute: impl Fn(&str) -> Option<u64>) -> Vec<Vec<u64>> {
    targets
        .iter()
        .map(|o| {
            o.shape
                .columns
                .iter()
                .map(|c| per_attribute(&c.attribute).unwrap_or(0))
                .collect()
        })
        .collect()
}

/// `(attribute, count)` rows of the DISTINCT query, laid out per target and column.
fn cells_per_column(
    dialect: &dyn Dialect,
    targets: &[Table],
    rows: &[Vec<Value>],
) -> Vec<Vec<u64>> {
    let per_attr: HashMap<String, u64> = rows
        .iter()
        .filter_map(|r| {
            let name = match r.first()? {
                Value::Bytes(b) => String::from_utf8(b.clone()).ok()?,
                v => v.as_text()?,
            };
            Some((
                dialect.decode_attribute_key(name),
                r.get(1)?.as_i64()? as u64,
            ))
        })
        .collect();
    columns_of(targets, |attribute| per_attr.get(attribute).copied())
}

/// Count what every target holds and compare with what it must hold.
pub(super) async fn verify(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    targets: &[Table],
    before: &[Vec<u64>],
    expected_rows: u64,
    expected_cells: &[Vec<u64>],
) -> Result<(u64, u64)> {
    let mut written_cells = 0;
    for (i, out) in targets.iter().enumerate() {
        let Some(rows) = session
            .query_in_load(
                &ddl::count_table_cells(dialect, &out.build_shape()),
                VERIFY_NOTE,
            )
            .await?
        else {
            return Ok((0, 0));
        };
        let mut got = row_counts(&rows);
        if let Some(b) = before.get(i).filter(|b| !b.is_empty()) {
            got.iter_mut().zip(b).for_each(|(g, b)| *g -= (*b).min(*g));
        }
        let empty = Vec::new();
        check_counts(
            out,
            expected_rows,
            expected_cells.get(i).unwrap_or(&empty),
            &got,
        )?;
        written_cells += got.iter().skip(1).sum::<u64>();
    }
    Ok((expected_rows, written_cells))
}

/// Dry run: the verification queries a real run would send, recorded only.
pub(super) async fn record_target_counts(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    targets: &[Table],
) -> Result<(u64, u64)> {
    for out in targets {
        session
            .query_in_load(
                &ddl::count_table_cells(dialect, &out.build_shape()),
                VERIFY_NOTE,
            )
            .await?;
    }
    Ok((0, 0))
}

/// Typed columns: every source value of a typed column prints back as written once the
/// database converts it ([`crate::dialect::query::typed_round_trip`]); one that does not rolls the load
/// back. Not with transforms, whose values are not the source's. Across two databases the
/// source's rows are not on the target's connection: the target's typed cells, printed back,
/// must then be the texts the stream chose ([`verify_printed`]).
pub(super) async fn verify_typed(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    (job, source_query): (&Job, &SourceQuery),
    targets: &[Table],
    stream: Option<&StreamStats>,
) -> Result<()> {
    if !job.transforms.is_empty() {
        return Ok(());
    }
    // The pushdown loaded a typed cell only where it prints back (query::pivot_select): a
    // misprint is a missing cell, which `verify` has refused already (see `name_misprints`).
    let Some(stream) = stream else {
        return Ok(());
    };
    // Integer cells: the pivot checked them as it converted them (Typed::converted_by_stream).
    let mut misprinted = stream.integers_misprinted;
    // The rest: the stream's read carried the database's check (query::ordered_rows_checked),
    // covering every row the load was made of, so a second scan would prove nothing more.
    if let Some(read) = stream.misprinted {
        return misprints(targets, misprinted + read);
    }
    if session.across_databases() {
        misprints(targets, misprinted)?;
        return verify_printed(session, dialect, targets, stream).await;
    }
    let streamed = true;
    misprinted += count_misprints(session, dialect, source_query, targets, streamed)
        .await?
        .unwrap_or(0);
    misprints(targets, misprinted)
}

/// The pushdown's counts fell short (`failed`): where source values of typed columns do not
/// print back, that is why (the pivot left those cells out), and the refusal says so instead
/// of naming only the short column. Asked only after a failure: a successful load never
/// scans the source for it.
pub(super) async fn name_misprints(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    source_query: &SourceQuery,
    targets: &[Table],
    failed: Error,
) -> Error {
    match count_misprints(session, dialect, source_query, targets, false).await {
        Ok(Some(misprinted)) if misprinted > 0 => match misprints(targets, misprinted) {
            Err(named) => named,
            Ok(()) => failed,
        },
        _ => failed,
    }
}

/// Source values of the typed columns of `targets` that do not print back as written (with
/// `streamed`, of the columns the database converts: see
/// [`crate::dialect::Typed::converted_by_stream`]): one scan for every table of a split.
/// None without such columns, or in a dry run.
async fn count_misprints(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    source_query: &SourceQuery,
    targets: &[Table],
    streamed: bool,
) -> Result<Option<u64>> {
    let shapes: Vec<TableShape> = targets.iter().map(Table::build_shape).collect();
    let Some(sql) = query::typed_round_trip(dialect, &shapes, source_query, streamed) else {
        return Ok(None);
    };
    let rows = session.query_in_load(&sql, VERIFY_NOTE).await?;
    Ok(rows.map(|rows| first_int(&rows)))
}

/// The refusal when `misprinted` source values of the typed columns of `targets` do not
/// print back as written.
fn misprints(targets: &[Table], misprinted: u64) -> Result<()> {
    if misprinted == 0 {
        return Ok(());
    }
    let names: Vec<String> = targets.iter().map(|t| t.shape.table.to_string()).collect();
    Err(Error::Job(format!(
        "verification failed for {}: {misprinted} source values of its typed columns do not print back as written",
        names.join(", ")
    )))
}

/// An order-independent fingerprint of one printed cell (FNV-1a, then mixed so that sums of
/// many stay spread): a column's cells sum to the same value whatever the row order.
/// `by_value` ([`crate::dialect::Typed::by_value`]): without trailing fractional zeros, as
/// the single-database check compares ([`crate::dialect::Types::trim_fraction`]): `12.5`
/// read and `12.50` printed by a DECIMAL(4,2) are the same value.
pub fn print_hash(value: &Value, by_value: bool) -> Option<u64> {
    let owned;
    let mut bytes = match value {
        Value::Null => return None,
        Value::Text(_) | Value::Bytes(_) => value.text_bytes()?,
        other => {
            owned = other.as_text()?;
            owned.as_bytes()
        }
    };
    if by_value {
        bytes = trim_fraction(bytes);
    }
    let mut h = crate::plan::naming::fnv1a(bytes);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    Some(h)
}

/// `text` without trailing fractional zeros and then a bare point (`12.50` → `12.5`, `5.0` →
/// `5`, `10` unchanged): [`crate::dialect::Types::trim_fraction`] on the client.
fn trim_fraction(text: &[u8]) -> &[u8] {
    if !text.contains(&b'.') {
        return text;
    }
    let end = text.iter().rposition(|&b| b != b'0').map_or(0, |i| i + 1);
    let text = &text[..end];
    let end = text.iter().rposition(|&b| b != b'.').map_or(0, |i| i + 1);
    &text[..end]
}

/// Sums of the print hashes per column of a scanned table.
struct PrintSums {
    sums: Vec<u64>,
    cells: Vec<u64>,
    by_value: Vec<bool>,
}

impl PrintSums {
    fn add(&mut self, row: &[Value]) {
        for (i, v) in row.iter().enumerate() {
            let by_value = self.by_value.get(i).copied().unwrap_or(false);
            if let (Some(h), Some(sum)) = (print_hash(v, by_value), self.sums.get_mut(i)) {
                *sum = sum.wrapping_add(h);
                self.cells[i] += 1;
            }
        }
    }
}

/// Across two databases: one scan of each target's typed columns printed back as text on
/// the target must give, column by column, the texts the stream chose from the source (the
/// same count, the same sum of hashes).
async fn verify_printed(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    targets: &[Table],
    stats: &StreamStats,
) -> Result<()> {
    for (t, out) in targets.iter().enumerate() {
        let checked: Vec<(usize, &crate::dialect::PivotColumn)> = out
            .shape
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.typed.as_ref().is_some_and(crate::dialect::Typed::checked))
            .collect();
        if checked.is_empty() {
            continue;
        }
        let list: Vec<String> = checked
            .iter()
            .map(|(_, c)| dialect.text_of(&dialect.quote_ident(&c.column)))
            .collect();
        let sql = format!("SELECT {} FROM {}", list.join(", "), out.build);
        // One buffered read: a scan on the target's connection sees the uncommitted table.
        let note = "verify: the typed cells print back as the source texts the stream read";
        let Some(rows) = session.query_in_load(&sql, note).await? else {
            continue;
        };
        let mut sums = PrintSums {
            sums: vec![0; checked.len()],
            cells: vec![0; checked.len()],
            by_value: checked
                .iter()
                .map(|(_, c)| c.typed.as_ref().is_some_and(|t| t.by_value))
                .collect(),
        };
        rows.iter().for_each(|row| sums.add(row));
        for (i, (c, col)) in checked.iter().enumerate() {
            let read = at(&stats.cells, t, *c);
            let want = at(&stats.printed, t, *c);
            if sums.cells[i] != read || sums.sums[i] != want {
                return Err(Error::Job(format!(
                    "verification failed for {}: column {} (attribute {}) holds {} typed cells that do not print back as the {read} source values the stream read",
                    out.shape.table,
                    crate::error::shown(&col.column),
                    crate::error::shown(&col.attribute),
                    sums.cells[i]
                )));
            }
        }
    }
    Ok(())
}

fn check_counts(out: &Table, rows: u64, cells: &[u64], got: &[u64]) -> Result<()> {
    let table = &out.shape.table;
    let got_rows = got.first().copied().unwrap_or(0);
    if got_rows != rows {
        return Err(Error::Job(format!(
            "verification failed: {table} would have {got_rows} rows but the source has {rows} distinct entities"
        )));
    }
    for (c, col) in out.shape.columns.iter().enumerate() {
        let want = cells.get(c).copied().unwrap_or(0);
        let have = got.get(c + 1).copied().unwrap_or(0);
        if want != have {
            return Err(Error::Job(format!(
                "verification failed: column {} of {table} (attribute {}) holds {have} values, the source has {want} entities with a value",
                crate::error::shown(&col.column),
                crate::error::shown(&col.attribute)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn trailing_fractional_zeros_are_trimmed_as_in_sql() {
        for (text, want) in [
            ("12.50", "12.5"),
            ("5.0", "5"),
            ("10", "10"),
            ("100", "100"),
            ("-0.500", "-0.5"),
            ("2024-01-02 10:30:00.500000", "2024-01-02 10:30:00.5"),
        ] {
            assert_eq!(trim_fraction(text.as_bytes()), want.as_bytes(), "{text}");
        }
        let text = |s: &str| Value::Text(s.into());
        assert_eq!(
            print_hash(&text("12.50"), true),
            print_hash(&text("12.5"), true)
        );
        assert_ne!(
            print_hash(&text("12.50"), false),
            print_hash(&text("12.5"), false)
        );
    }

    use super::*;
    use crate::backend::RowPipeline;
    use crate::config::Aggregate;
    use crate::dialect::Sqlite;
    use crate::execute::stream::Pivoter;
    use crate::plan::Discovered;
    use crate::value::Value;

    fn shape(attributes: &[&str]) -> TableShape {
        crate::execute::stream::tests::shape("w", attributes)
    }

    type Row = (Value, &'static str, Option<&'static str>);

    /// Discovery as the database would compute it over `rows`.
    fn discover(rows: &[Row]) -> Discovery {
        let mut d = Discovery::default();
        for (_, a, v) in rows {
            match d.attributes.iter_mut().find(|x| x.name == *a) {
                Some(x) => {
                    x.rows += 1;
                    x.values += u64::from(v.is_some());
                }
                None => d.attributes.push(Discovered {
                    name: a.to_string(),
                    rows: 1,
                    values: u64::from(v.is_some()),
                    widths: None,
                }),
            }
        }
        d
    }

    fn stream(tables: &[TableShape], rows: &[Row]) -> StreamStats {
        let mut p = Pivoter::new(&Sqlite, 1, tables, Aggregate::Max, Vec::new());
        for (e, a, v) in rows {
            let value = v.map_or(Value::Null, |s| Value::Text(s.into()));
            p.push(vec![e.clone(), Value::Text(a.to_string()), value])
                .expect("push");
        }
        p.finish().expect("finish");
        p.stats.clone()
    }

    fn rows() -> Vec<Row> {
        vec![
            (Value::Int(1), "a", Some("x")),
            (Value::Int(1), "a", Some("y")), // a repeat: one cell
            (Value::Int(1), "b", None),
            (Value::Int(2), "b", Some("z")),
            (Value::Int(3), "excluded", Some("q")),
        ]
    }

    #[test]
    fn a_complete_ordered_stream_proves_cells_and_entities() {
        let tables = [shape(&["a", "b"])];
        let rows = rows();
        let proof = stream_proof(&stream(&tables, &rows), &tables, &discover(&rows));
        assert_eq!(proof.cells, Some(vec![vec![1, 1]]));
        assert_eq!(proof.entities, Some(3));
    }

    #[test]
    fn a_lost_row_falls_back_to_the_database() {
        let tables = [shape(&["a", "b"])];
        let rows = rows();
        let discovery = discover(&rows);
        for lost in 0..rows.len() {
            let mut read = rows.clone();
            read.remove(lost);
            let proof = stream_proof(&stream(&tables, &read), &tables, &discovery);
            assert_eq!(proof.cells, None, "row {lost} lost");
            assert_eq!(proof.entities, None, "row {lost} lost");
        }
    }

    #[test]
    fn interleaved_or_text_keys_need_the_database_count() {
        let tables = [shape(&["a"])];
        let interleaved = vec![
            (Value::Int(1), "a", Some("x")),
            (Value::Int(2), "a", Some("y")),
            (Value::Int(1), "a", Some("z")),
        ];
        let proof = stream_proof(
            &stream(&tables, &interleaved),
            &tables,
            &discover(&interleaved),
        );
        assert_eq!(proof.entities, None);
        assert_eq!(proof.runs, 3);
        // Three runs for two entities: the cells (3) are not per entity, and this says so.
        let err = check_runs(&proof, 2).expect_err("runs != distinct");
        assert!(err.to_string().contains("more than one run"), "{err}");
        let text = vec![
            (Value::Text("a".into()), "a", Some("x")),
            (Value::Text("b".into()), "a", Some("y")),
        ];
        let proof = stream_proof(&stream(&tables, &text), &tables, &discover(&text));
        assert_eq!(proof.entities, None);
        assert_eq!(proof.cells, Some(vec![vec![2]]));
        check_runs(&proof, 2).expect("two runs, two entities");
    }
}
