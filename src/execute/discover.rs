//! Discovery: the distinct attributes of the joined source, with the counts and widths the plan
//! needs, in one read-only scan.
//!
//! Most engines aggregate it themselves ([`crate::dialect::query::discover_attributes`], a `GROUP BY`). Where
//! an engine can only group by sorting every row ([`Query::groups_by_sorting`]: SQLite),
//! [`DiscoveryScan`] aggregates a plain scan here instead, one hash lookup per row, and hands
//! the plan rows of exactly the same shape.

use crate::dialect::query;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::backend::RowPipeline;
use crate::config::{Job, TableRef};
use crate::dialect::{ColumnKind, Dialect, UnquotedCase};
use crate::error::{Error, Result};
use crate::plan::{self, naming, types::Survey};
use crate::transform::Transform;
use crate::value::Value;

use super::session::Session;
use super::stream::FxHasher;

/// Discovery: one read-only query over the joined source, decoded and passed through the
/// transforms (which may declare the attributes they will produce).
pub(super) async fn discover(
    session: &mut Session<'_>,
    dialect: &'static dyn Dialect,
    (job, source_query): (&Job, &query::SourceQuery),
    transforms: &[Box<dyn Transform>],
) -> Result<plan::Discovery> {
    let context = format!("discovering attributes in {}", job.source.table);
    let mut surveys = HashMap::new();
    let rows = if plan::types_wanted(job) {
        // Typing reads every value: one plain scan, aggregated and surveyed here.
        let mut scan =
            DiscoveryScan::new(job.entity.len()).with_surveys(plan::declared_kinds(job), dialect);
        scan.float_text = session.float_text(source_query);
        session
            .inspect_scan(
                &query::discovery_scan_values(dialect, source_query),
                &mut scan,
            )
            .await
            .map_err(|e| e.with_context(&context))?;
        let (rows, found) = scan.into_parts(dialect)?;
        surveys = found;
        rows
    } else if dialect.groups_by_sorting() {
        let mut scan = DiscoveryScan::new(job.entity.len());
        session
            .inspect_scan(&query::discovery_scan(dialect, source_query), &mut scan)
            .await
            .map_err(|e| e.with_context(&context))?;
        scan.into_rows()
    } else {
        session
            .inspect(&query::discover_attributes(dialect, source_query))
            .await
            .map_err(|e| e.with_context(&context))?
    };
    if let Some(bytes) = rows.iter().find_map(|r| r.first()?.invalid_utf8()) {
        // Refused by name and entity; the look-up is best effort, the refusal is not.
        let bytes = bytes.to_vec();
        let entity = session
            .inspect(&query::entity_of_attribute(dialect, source_query, &bytes))
            .await
            .ok()
            .and_then(|rows| rows.into_iter().next());
        return Err(naming::not_text(&bytes, entity.as_deref()).with_context(&context));
    }
    let mut discovery = plan::decode_discovery(dialect, rows)?;
    discovery.surveys = surveys;
    for t in transforms {
        discovery = t.attributes(discovery)?;
    }
    Ok(discovery)
}

/// The source's unique key that proves every (entity, attribute) pair occurs at most once, by
/// name; None when nothing proves it (then the pushdown surveys the pairs).
///
/// The proof: the job reads one table (a join could repeat its rows), its entity and
/// attribute are plain columns of it, no entity value is NULL (a unique key lets NULLs
/// repeat; discovery counted them), and some unique key's columns are all among them. Two
/// rows of one pair would then be equal on that key. The pivot groups the entity with the
/// key's own equality and the attribute key is at least as strict as the column's (byte-wise),
/// so its pairs are no coarser. Verification still counts every column's cells against
/// discovery's: were the proof ever wrong, a repeated pair would show as a missing cell and
/// roll the load back.
pub(super) async fn unique_pairs(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    job: &Job,
    discovery: &plan::Discovery,
) -> Option<String> {
    let no_null_keys = discovery.null_keys.len() == job.entity.len()
        && discovery.null_keys.iter().all(|&n| n == 0);
    if !job.source.joins.is_empty() || !no_null_keys {
        return None;
    }
    let mut columns: Vec<String> = Vec::with_capacity(job.entity.len() + 1);
    for expr in job.entity.iter().map(|e| &e.expr).chain([&job.attribute]) {
        columns.push(TableRef::parse(expr).ok()?.last_part().to_string());
    }
    let rows = session
        .inspect(&dialect.unique_keys(&job.source.table)?)
        .await
        .ok()?;
    proven_key(dialect, &columns, &rows)
}

/// The source query of `job` with the cheapest exact attribute key the catalog allows
/// ([`crate::dialect::Query::attribute_key_of_charset`]): for the pushdown's `INSERT …
/// SELECT`, which tests the key once per column per row. The same bytes as the general
/// key, so the pairs, cells and columns are the same; any doubt (a join, an expression, a
/// failed catalog read, another character set) keeps the general key.
pub(super) async fn keyed_source(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    job: &Job,
    planned: &query::SourceQuery,
) -> query::SourceQuery {
    let mut source = planned.clone();
    if job.source.joins.is_empty() {
        // Never back to the general key: the plan's may be the one any collation needs.
        if let Some(key) =
            cheaper_exact_key(session, dialect, job, &job.attribute, &job.attribute).await
        {
            source.attribute_key = Some(key);
        }
    }
    source
}

/// How closely the table's physical order must follow the entity's (ANALYZE's correlation,
/// 1 exactly) to count a read along the entity's index as reading each page once, in order.
const STORED_IN_ENTITY_ORDER: f64 = 0.95;
/// How much of the table may have been written since its statistics were taken for their
/// correlation to still stand (autovacuum's own default for analyzing again).
const STATISTICS_STILL_CURRENT: f64 = 0.1;

/// What [`stored_order`] found: settings for the statements that read the source in entity
/// order, the reset that ends them, and what the plan says about it.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StoredOrder {
    pub set: Vec<String>,
    pub reset: Vec<String>,
    pub note: Option<String>,
}

/// The settings under which the engine plans reading the source in entity order as the walk
/// of its index it is, where the catalog shows the table stored in entity order and larger
/// than the planner assumes cached ([`crate::dialect::Query::stored_order_settings`]). None
/// on any doubt: no statistics, or statistics older than a tenth of the table's rows (a
/// table rewritten in another order since), a join, a scope or delta (`source.where`,
/// `source.changed`) that tests anything but the first entity column against constants
/// ([`crate::plan::delta`]: the planner might then reach for another index, which the claim
/// says nothing about; a range of the entity, as a merge by ranges reads, is read along the
/// same index), an entity that is not a plain column, or a failed catalog read. Only
/// planner costs change, never a result.
pub(super) async fn stored_order(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    job: &Job,
) -> StoredOrder {
    let Some(sql) = dialect.stored_order(&job.source.table) else {
        return StoredOrder::default();
    };
    let source = &job.source;
    let first_expr: Vec<String> = job.entity.iter().take(1).map(|e| e.expr.clone()).collect();
    let on_first_key = |test: &Option<String>| {
        test.as_deref()
            .is_none_or(|t| crate::plan::delta::tests_only_entity_keys(t, &first_expr))
    };
    let along_key =
        source.joins.is_empty() && on_first_key(&source.filter) && on_first_key(&source.changed);
    let first_key = job.entity.first().map(|e| TableRef::parse(&e.expr));
    let (Some(Ok(column)), true) = (first_key, along_key) else {
        return StoredOrder::default();
    };
    let Ok(rows) = session.inspect(&sql).await else {
        return StoredOrder::default();
    };
    stored_order_of(dialect, &job.source.table, column.last_part(), &rows)
}

/// [`stored_order`]'s decision from the catalog's `(column, correlation, bytes, cached bytes,
/// changed since ANALYZE per row)` rows for the entity column `written` (as the job spells
/// it).
fn stored_order_of(
    dialect: &dyn Dialect,
    table: &TableRef,
    written: &str,
    rows: &[Vec<Value>],
) -> StoredOrder {
    let float = |v: &Value| match v {
        Value::Float(f) => Some(*f),
        other => other.as_text()?.trim().parse::<f64>().ok(),
    };
    let found = rows.iter().find_map(|row| {
        let name = row.first()?.as_text()?;
        let correlation = float(row.get(1)?)?;
        let bytes = u64::try_from(row.get(2)?.as_i64()?).ok()?;
        let cached = u64::try_from(row.get(3)?.as_i64()?).ok()?;
        let changed = float(row.get(4)?)?;
        same_column(dialect, written, &name).then_some((correlation, bytes, cached, changed))
    });
    let Some((correlation, bytes, cached, changed)) = found else {
        return StoredOrder::default();
    };
    let in_order = correlation >= STORED_IN_ENTITY_ORDER && changed <= STATISTICS_STILL_CURRENT;
    if !in_order || bytes <= cached {
        return StoredOrder::default();
    }
    let (set, reset) = dialect.stored_order_settings(bytes);
    if set.is_empty() {
        return StoredOrder::default();
    }
    let size = |b: u64| match b < 1 << 20 {
        true => format!("{} kB", b.div_ceil(1 << 10)),
        false => format!("{} MiB", b.div_ceil(1 << 20)),
    };
    StoredOrder {
        note: Some(format!(
            "{table} is stored in {written} order (correlation {correlation:.2}) and larger ({} with its indexes) than the planner assumes cached ({}): reading it in entity order is planned as one pass along its index ({})",
            size(bytes),
            size(cached),
            set.join("; ")
        )),
        set,
        reset,
    }
}

/// A key for `wrapped` as exact as [`crate::dialect::Quoting::attribute_key`] and cheaper,
/// where `column` names a plain column of the source table whose character set the catalog
/// gives and the dialect has one for ([`crate::dialect::Query::attribute_key_of_charset`]).
/// None: use the general key. The caller rules out joins (the column may be another table's).
pub(super) async fn cheaper_exact_key(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    job: &Job,
    column: &str,
    wrapped: &str,
) -> Option<String> {
    let column = TableRef::parse(column).ok()?.name();
    let sql = dialect.column_charset_query(&job.source.table, &column)?;
    let rows = session.inspect(&sql).await.ok()?;
    let [row] = rows.as_slice() else {
        return None;
    };
    let charset = row.first()?.as_text()?;
    dialect.attribute_key_of_charset(wrapped, &charset)
}

/// The first key (`key_name, column_name` rows) whose columns are all among `columns` (the
/// job's, as written).
fn proven_key(dialect: &dyn Dialect, columns: &[String], rows: &[Vec<Value>]) -> Option<String> {
    let covered = |c: &Option<String>| {
        c.as_ref()
            .is_some_and(|c| columns.iter().any(|w| same_column(dialect, w, c)))
    };
    super::keys::unique_keys_of(rows)
        .into_iter()
        .find(|(_, key_columns)| key_columns.iter().all(covered))
        .map(|(key, _)| key)
}

/// Whether the column `written` in the job (quotes kept) is the catalog's column `name`, as
/// the database resolves names.
fn same_column(dialect: &dyn Dialect, written: &str, name: &str) -> bool {
    let quoted = written.starts_with(['"', '[', '`']);
    let bare = if quoted {
        &written[1..written.len() - 1]
    } else {
        written
    };
    match dialect.unquoted_case() {
        UnquotedCase::Kept => bare.eq_ignore_ascii_case(name),
        _ if quoted => bare == name,
        case => case.fold(bare) == name,
    }
}

/// A group key with SQL's `GROUP BY` equality: NULLs form one group, and a float equal to an
/// integer is that integer (SQLite compares `1 = 1.0` as equal). Built from the scanned value
/// itself (moved, not copied) and turned back into it for the result.
#[derive(Hash, PartialEq, Eq)]
enum Key {
    Null,
    Int(i64),
    Float(u64),
    Text(String),
    Bytes(Vec<u8>),
    TextBytes(Vec<u8>),
}

impl Key {
    fn of(value: Value) -> Key {
        match value {
            Value::Null => Key::Null,
            Value::Int(n) => Key::Int(n),
            // Exactly an integer (`as` saturates, so huge values fail the round trip); this
            // also makes -0.0 and +0.0 one key.
            Value::Float(f) if f.fract() == 0.0 && (f as i64) as f64 == f => Key::Int(f as i64),
            Value::Float(f) => Key::Float(f.to_bits()),
            Value::Text(s) => Key::Text(s),
            Value::Bytes(b) => Key::Bytes(b),
            Value::TextBytes(b) => Key::TextBytes(b),
        }
    }

    fn value(&self) -> Value {
        match self {
            Key::Null => Value::Null,
            Key::Int(n) => Value::Int(*n),
            Key::Float(bits) => Value::Float(f64::from_bits(*bits)),
            Key::Text(s) => Value::Text(s.clone()),
            Key::Bytes(b) => Value::Bytes(b.clone()),
            Key::TextBytes(b) => Value::TextBytes(b.clone()),
        }
    }

    fn into_value(self) -> Value {
        match self {
            Key::Null => Value::Null,
            Key::Int(n) => Value::Int(n),
            Key::Float(bits) => Value::Float(f64::from_bits(bits)),
            Key::Text(s) => Value::Text(s),
            Key::Bytes(b) => Value::Bytes(b),
            Key::TextBytes(b) => Value::TextBytes(b),
        }
    }
}

/// Per decoded attribute name, its values' survey.
type Surveys = HashMap<String, Survey>;

/// One attribute's aggregates, as [`crate::dialect::query::discover_attributes`] returns them.
struct Group {
    rows: i64,
    values: i64,
    min_bytes: Option<i64>,
    max_bytes: Option<i64>,
    null_keys: Vec<i64>,
    /// The values' survey, when the scan carries them ([`DiscoveryScan::with_surveys`]).
    survey: Option<Survey>,
}

/// [`crate::dialect::query::discovery_scan`]'s rows (`a, bytes, null_e0, …`) aggregated per attribute.
pub struct DiscoveryScan {
    entity_width: usize,
    /// With values (`a, bytes, v, e0, …`): `pivot.types` kinds by attribute, the surveys
    /// check every value against.
    surveys: Option<(HashMap<String, ColumnKind>, &'static dyn Dialect)>,
    /// How the source spells its float values in text, for the surveys to measure them as
    /// they will be written ([`crate::dialect::Types::float_text`]).
    float_text: Option<fn(f64) -> String>,
    /// FxHash, as in the pivot: one lookup per source row. The keys come from the data, so a
    /// crafted source could make lookups slower, never wrong.
    groups: HashMap<Key, Group, BuildHasherDefault<FxHasher>>,
}

impl DiscoveryScan {
    pub fn new(entity_width: usize) -> DiscoveryScan {
        DiscoveryScan {
            entity_width,
            float_text: None,
            surveys: None,
            groups: HashMap::default(),
        }
    }

    /// Read [`crate::dialect::query::discovery_scan_values`] rows: survey every value for typing.
    pub fn with_surveys(
        mut self,
        declared: HashMap<String, ColumnKind>,
        dialect: &'static dyn Dialect,
    ) -> DiscoveryScan {
        self.surveys = Some((declared, dialect));
        self
    }

    /// [`DiscoveryScan::into_rows`], and the surveys by decoded attribute name.
    pub fn into_parts(mut self, dialect: &dyn Dialect) -> Result<(Vec<Vec<Value>>, Surveys)> {
        let mut surveys = HashMap::new();
        for (key, group) in self.groups.iter_mut() {
            let Some(survey) = group.survey.take() else {
                continue;
            };
            if let Some(name) = plan::attribute_name(dialect, key.value())? {
                surveys.insert(name, survey);
            }
        }
        Ok((self.into_rows(), surveys))
    }

    /// Rows `a, n_rows, n_values, min_bytes, max_bytes, null_e0, …`: the `GROUP BY` shape,
    /// sorted by attribute text so that everything downstream sees a stable order.
    pub fn into_rows(self) -> Vec<Vec<Value>> {
        let nullable = |n: Option<i64>| n.map_or(Value::Null, Value::Int);
        let mut rows: Vec<Vec<Value>> = self
            .groups
            .into_iter()
            .map(|(key, g)| {
                let mut row = vec![
                    key.into_value(),
                    Value::Int(g.rows),
                    Value::Int(g.values),
                    nullable(g.min_bytes),
                    nullable(g.max_bytes),
                ];
                row.extend(g.null_keys.into_iter().map(Value::Int));
                row
            })
            .collect();
        rows.sort_by_cached_key(|r| r[0].as_text());
        rows
    }
}

impl RowPipeline for DiscoveryScan {
    fn push(&mut self, mut row: Vec<Value>) -> Result<()> {
        let width = self.entity_width;
        let expected = match self.surveys {
            Some(_) => 3 + width,
            None => 2 + width,
        };
        if row.len() != expected {
            return Err(Error::Job(format!(
                "discovery: expected {expected} columns per scanned row, got {}",
                row.len()
            )));
        }
        let attribute = std::mem::replace(&mut row[0], Value::Null);
        let bytes = row[1].as_i64();
        let key = Key::of(attribute);
        let group = match self.groups.get_mut(&key) {
            Some(g) => g,
            None => {
                let survey = self.surveys.as_ref().map(|(declared, dialect)| {
                    let name = plan::attribute_name(*dialect, key.value()).ok().flatten();
                    let kind = name.and_then(|n| declared.get(&n)).cloned();
                    Survey::declared(kind)
                });
                self.groups.entry(key).or_insert(Group {
                    rows: 0,
                    values: 0,
                    min_bytes: None,
                    max_bytes: None,
                    null_keys: vec![0; width],
                    survey,
                })
            }
        };
        group.rows += 1;
        if let Some(b) = bytes {
            group.values += 1;
            group.min_bytes = Some(group.min_bytes.map_or(b, |m| m.min(b)));
            group.max_bytes = Some(group.max_bytes.map_or(b, |m| m.max(b)));
        }
        match group.survey.as_mut() {
            // `a, bytes, v, e0, …`: the key itself says which parts are NULL, and is read in
            // place (a survey copies it only into the few values that decide a reason).
            Some(survey) => {
                for (count, part) in group.null_keys.iter_mut().zip(&row[3..]) {
                    *count += i64::from(part.is_null());
                }
                survey.observe_spelled(&row[2], &row[3..], self.float_text);
            }
            None => {
                for (count, flag) in group.null_keys.iter_mut().zip(&row[2..]) {
                    *count += flag.as_i64().unwrap_or(0);
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }

    fn take_ready(&mut self) -> Vec<Vec<Vec<Value>>> {
        Vec::new()
    }

    fn ready_rows(&self) -> usize {
        0
    }
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;
    use crate::backend::sqlite::SqliteBackend;
    use crate::backend::Backend;
    use crate::dialect::Sqlite;

    const JOB: &str = "name: d
source: { table: kv }
entity: [id, sub]
attribute: attr
value: val
target: { table: wide }
";

    /// The scan aggregated here and SQLite's own GROUP BY agree row for row, over NULL
    /// values, NULL keys, a NULL attribute, integer and float attributes, and empty text.
    #[tokio::test]
    async fn the_scan_matches_the_group_by() {
        let mut db = SqliteBackend::in_memory().expect("sqlite");
        db.execute_script(
            "CREATE TABLE kv (id INTEGER, sub TEXT, attr COLLATE NOCASE, val);
             INSERT INTO kv VALUES
               (1, 'a', 'Color', 'Red'), (1, 'a', 'Size', NULL), (2, NULL, 'Color', 'Blue-ish'),
               (NULL, 'b', 'Color', ''), (3, 'c', NULL, 'x'), (3, 'c', 7, 'seven'),
               (4, 'd', 7.0, 'also seven'), (4, 'd', 2.5, 'half'), (5, NULL, '', 'empty name'),
               (NULL, NULL, 'Size', 'XL'), (6, 'e', 'color', 'lower'), (7, 'f', 1e16, 'big'),
               (8, 'g', 10000000000000000, 'big too');",
        )
        .await
        .expect("data");
        let path = std::path::Path::new("d.yaml");
        let job = crate::config::parse_job(JOB, path).expect("job");
        // The attribute as the pivot reads it: 7 and 7.0 are one group, whichever value of
        // it SQLite happens to return.
        let sort = |rows: Vec<Vec<Value>>| {
            let mut rows: Vec<Vec<Value>> = rows
                .into_iter()
                .map(|mut r| {
                    r[0] = r[0].as_text().map_or(Value::Null, Value::Text);
                    r
                })
                .collect();
            rows.sort_by_key(|r| format!("{r:?}"));
            rows
        };
        let expected = sort(
            db.query(&query::discover_attributes(
                &Sqlite,
                &crate::plan::source_query(&job),
            ))
            .await
            .expect("group by"),
        );
        let mut scan = DiscoveryScan::new(2);
        db.stream_into(
            &query::discovery_scan(&Sqlite, &crate::plan::source_query(&job)),
            &mut scan,
            &[],
        )
        .await
        .expect("scan");
        let got = sort(scan.into_rows());
        // `color` is its own attribute although the column is NOCASE (the key is BINARY);
        // 1e16 and 10000000000000000 are one, as SQLite compares them.
        assert_eq!(
            got.len(),
            8,
            "Color, color, Size, NULL, 7 (= 7.0), 2.5, '', 1e16: {got:?}"
        );
        assert_eq!(got, expected);
        // With the values (typing), the NULL key parts are counted from the keys read.
        let mut typed = DiscoveryScan::new(2).with_surveys(HashMap::new(), &Sqlite);
        db.stream_into(
            &query::discovery_scan_values(&Sqlite, &crate::plan::source_query(&job)),
            &mut typed,
            &[],
        )
        .await
        .expect("values scan");
        let (rows, surveys) = typed.into_parts(&Sqlite).expect("parts");
        assert_eq!(sort(rows), expected);
        assert_eq!(surveys["Color"].values, 3, "{surveys:?}");
    }

    /// A key proves the pairs single only when every one of its columns is the job's, as
    /// each database resolves names.
    #[test]
    fn a_key_proves_only_when_the_jobs_columns_cover_it() {
        use crate::dialect::{MariaDb, Postgres};
        let rows = |pairs: &[(&str, &str)]| -> Vec<Vec<Value>> {
            pairs
                .iter()
                .map(|(k, c)| vec![Value::Text(k.to_string()), Value::Text(c.to_string())])
                .collect()
        };
        let job = ["ID".to_string(), "Attr".to_string()];
        let pk = rows(&[("pk", "id"), ("pk", "attr")]);
        assert_eq!(proven_key(&Sqlite, &job, &pk).as_deref(), Some("pk"));
        assert_eq!(proven_key(&MariaDb, &job, &pk).as_deref(), Some("pk"));
        // PostgreSQL folds unquoted names; a quoted one keeps its case.
        assert_eq!(proven_key(&Postgres, &job, &pk).as_deref(), Some("pk"));
        let quoted = ["\"ID\"".to_string(), "attr".to_string()];
        assert_eq!(proven_key(&Postgres, &quoted, &pk), None);
        assert_eq!(proven_key(&Sqlite, &quoted, &pk).as_deref(), Some("pk"));
        // A wider key, or one with an expression part (no column name), proves nothing; a
        // key on the entity alone does.
        let wide = rows(&[("u", "id"), ("u", "attr"), ("u", "val")]);
        assert_eq!(proven_key(&Sqlite, &job, &wide), None);
        let mut expr = pk.clone();
        expr.push(vec![Value::Text("pk".into()), Value::Null]);
        assert_eq!(proven_key(&Sqlite, &job, &expr), None);
        let both = rows(&[("u", "id"), ("u", "val"), ("one", "id")]);
        assert_eq!(proven_key(&Sqlite, &job, &both).as_deref(), Some("one"));
        assert_eq!(proven_key(&Sqlite, &job, &[]), None);
    }

    /// Settings only for the entity column, stored in its order (correlation ≥ 0.95, as
    /// the catalog reports it, float or text), and only when the table is larger than the
    /// cache the planner assumes; the note names the table, the column and the setting.
    #[test]
    fn stored_order_needs_the_entity_in_order_and_past_the_cache() {
        use crate::dialect::Postgres;
        let table = TableRef::parse("kv").expect("table");
        let row = |column: &str, correlation: Value, bytes: i64, cached: i64| {
            vec![
                Value::Text(column.into()),
                correlation,
                Value::Int(bytes),
                Value::Int(cached),
                Value::Float(0.1),
            ]
        };
        let gib = 1 << 30;
        let rows = vec![
            row("attr", Value::Float(0.1), 10 * gib, 4 * gib),
            row("id", Value::Float(0.999), 10 * gib, 4 * gib),
        ];
        let found = stored_order_of(&Postgres, &table, "ID", &rows);
        assert_eq!(found.set, ["SET effective_cache_size = '10240MB'"]);
        assert_eq!(found.reset, ["RESET effective_cache_size"]);
        let note = found.note.expect("note");
        assert!(note.contains("kv is stored in ID order"), "{note}");
        assert!(note.contains("correlation 1.00"), "{note}");
        assert!(note.contains("(10240 MiB with its indexes)"), "{note}");
        assert!(note.contains("assumes cached (4096 MiB)"), "{note}");
        // As text (the simple protocol's float8), and just at the threshold.
        let text = vec![row("id", Value::Text("0.95".into()), 10 * gib, 4 * gib)];
        assert!(!stored_order_of(&Postgres, &table, "id", &text)
            .set
            .is_empty());
        let none = |rows: Vec<Vec<Value>>, written: &str| {
            assert_eq!(
                stored_order_of(&Postgres, &table, written, &rows),
                StoredOrder::default(),
                "{rows:?}"
            );
        };
        // Not in order, in reverse order, or no statistics.
        none(vec![row("id", Value::Float(0.94), 10 * gib, 4 * gib)], "id");
        none(vec![row("id", Value::Float(-1.0), 10 * gib, 4 * gib)], "id");
        none(vec![row("id", Value::Null, 10 * gib, 4 * gib)], "id");
        // Statistics older than a tenth of the rows, or none on the writes since.
        let mut stale = row("id", Value::Float(1.0), 10 * gib, 4 * gib);
        stale[4] = Value::Float(0.11);
        none(vec![stale.clone()], "id");
        stale[4] = Value::Null;
        none(vec![stale], "id");
        // Already within the assumed cache: the planner prices it as cached anyway.
        none(vec![row("id", Value::Float(1.0), 4 * gib, 4 * gib)], "id");
        // Another column in order; a quoted name PostgreSQL does not fold.
        none(
            vec![row("attr", Value::Float(1.0), 10 * gib, 4 * gib)],
            "id",
        );
        none(
            vec![row("id", Value::Float(1.0), 10 * gib, 4 * gib)],
            "\"ID\"",
        );
        none(Vec::new(), "id");
        // An engine without such settings gets none, whatever the catalog said.
        let sqlite = stored_order_of(&Sqlite, &table, "id", &rows);
        assert_eq!(sqlite, StoredOrder::default());
    }

    #[test]
    fn a_row_of_the_wrong_width_is_an_error() {
        let mut scan = DiscoveryScan::new(1);
        let err = scan
            .push(vec![Value::Text("a".into())])
            .expect_err("too short");
        assert!(err.to_string().contains("expected 3 columns"), "{err}");
    }
}
