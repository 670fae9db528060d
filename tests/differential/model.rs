//! The oracle: what a job must produce, written from the README ("The job file", "Typed
//! columns", "Running again: merge", "Source and target in two databases") and the merge
//! semantics of issue 21, never from `src/`. Given the source rows, one step of the job and
//! the target the previous step left, it says which rows and cells the target must hold, how
//! many conflicts the report must count, or that the run must be refused and change nothing.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use super::numbers::{self, Values};

/// One entity key value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum K {
    I(i64),
    T(String),
}

impl std::fmt::Display for K {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            K::I(i) => write!(f, "{i}"),
            K::T(t) => write!(f, "{t:?}"),
        }
    }
}

/// One source row: key, attribute name, value, the `where` group and the delta stamp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub key: Vec<K>,
    pub attr: Option<String>,
    pub val: Option<String>,
    pub grp: i64,
    pub modified: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agg {
    Max,
    Min,
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnNew {
    Add,
    Error,
    Ignore,
}

/// The job's settings that stay the same over the steps of a case.
#[derive(Clone, Debug)]
pub struct Job {
    pub aggregate: Agg,
    pub infer: bool,
    /// attribute -> declared SQL type (`pivot.types`), checked by [`fits`].
    pub types: BTreeMap<String, String>,
    pub on_missing_delete: bool,
    pub on_new: OnNew,
    pub split: Option<usize>,
    pub pushdown: bool,
}

/// One run of the job: full source snapshot, `if_exists`, `--var g=` and `changed`.
#[derive(Clone, Debug)]
pub struct Step {
    pub merge: bool,
    pub rows: Vec<Row>,
    /// `where: s.grp >= ${g}`
    pub where_g: Option<i64>,
    /// `changed: s.modified >= ${since}`
    pub changed: Option<i64>,
    /// With `changed`: the delta is written as `s.<first key> IN (…)`, the first key part of
    /// every entity with a row modified since (in the scope or not), instead of the
    /// `modified` test: a delta on the entity key alone.
    pub changed_by_key: bool,
}

impl Step {
    /// The first key parts a delta on the entity key lists (None: no such delta).
    pub fn changed_keys(&self) -> Option<BTreeSet<K>> {
        let since = self.changed.filter(|_| self.changed_by_key)?;
        Some(
            self.rows
                .iter()
                .filter(|r| r.modified >= since)
                .filter_map(|r| r.key.first().cloned())
                .collect(),
        )
    }
}

/// The target as the model sees it: attributes with a column, and the non-null cells.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Target {
    pub columns: BTreeSet<String>,
    pub rows: BTreeMap<Vec<K>, BTreeMap<String, String>>,
    /// Every value ever written into each column: what its type was inferred or widened from.
    pub seen: BTreeMap<String, BTreeSet<String>>,
    /// With `split: N`: how many attribute columns the last table has. A merge keeps every
    /// column in its table and puts new ones in the last, refusing more than N there.
    pub last_split: usize,
}

impl Target {
    fn remember(mut self) -> Target {
        for row in self.rows.values() {
            for (a, v) in row {
                self.seen.entry(a.clone()).or_default().insert(v.clone());
            }
        }
        self
    }
}

#[derive(Clone, Debug)]
pub enum Outcome {
    /// Exit 0 with this table; `conflicts`/`nulled` when the report must say so.
    Written {
        target: Target,
        conflicts: Option<u64>,
        nulled: Option<u64>,
    },
    /// A non-zero exit that must leave the target (and source) exactly as they were.
    Refused(String),
    /// A typed merge: either written like this (values by value) or refused untouched.
    WrittenOrRefused(Target),
}

/// Where a step runs, as far as the model needs to know.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    /// Source and target are two databases.
    pub cross: bool,
    /// What the source's or the target's database counts as one text key ([`key_fold`]).
    pub fold: KeyFold,
    /// How the source's value column holds values ([`numbers::values`]).
    pub values: Values,
}

impl Run {
    /// A run from the leg `source` into the leg `target`; `column`: the case's value column's
    /// type.
    pub fn new(source: &str, target: &str, column: numbers::Column) -> Run {
        Run {
            cross: source != target,
            fold: key_fold(source, target),
            values: numbers::values(column, source, target),
        }
    }
}

/// What `step` must do to `prev` (None: no target yet) when run as `run` says.
pub fn expect(job: &Job, step: &Step, prev: Option<&Target>, run: Run) -> Outcome {
    let Run {
        cross,
        fold,
        values,
    } = run;
    // A numeric value column: the model goes on with the texts the source holds.
    let stored: Cow<Step> = match values {
        Values::Text => Cow::Borrowed(step),
        _ => Cow::Owned(Step {
            rows: values.stored_rows(&step.rows),
            ..step.clone()
        }),
    };
    let step: &Step = &stored;
    if cross && job.pushdown {
        return Outcome::Refused("a forced pushdown cannot cross databases (exit 2)".into());
    }
    if let (
        true,
        Values::Double {
            mssql_source: true, ..
        },
    ) = (job.pushdown, values)
    {
        return Outcome::Refused(
            "a forced pushdown of SQL Server FLOAT values into text (6 digits) (exit 2)".into(),
        );
    }
    let in_scope = |r: &Row| step.where_g.is_none_or(|g| r.grp >= g);
    let mut scope: Vec<&Row> = step.rows.iter().filter(|r| in_scope(r)).collect();
    // A delta merge into an existing target reads only the entities `changed` names, each
    // with all its rows in scope (the first merge, into no target, reads the whole scope).
    let delta = step.merge && prev.is_some() && step.changed.is_some();
    if let (true, Some(since)) = (delta, step.changed) {
        let keys = step.changed_keys();
        let named: BTreeSet<Vec<K>> = scope
            .iter()
            .filter(|r| match &keys {
                Some(firsts) => r.key.first().is_some_and(|k| firsts.contains(k)),
                None => r.modified >= since,
            })
            .map(|r| r.key.clone())
            .collect();
        scope.retain(|r| named.contains(&r.key));
    }
    if let Some((a, b)) = twins(&scope, fold) {
        return Outcome::Refused(format!(
            "entity keys {a:?} and {b:?} are one key to the collation"
        ));
    }
    let pivot = pivot(&scope, job.aggregate, values.by_value());
    if pivot.attrs.is_empty() && !delta {
        return Outcome::Refused("no attribute names in scope: nothing to pivot".into());
    }
    if job.aggregate == Agg::Error && pivot.conflicts > 0 {
        return Outcome::Refused(format!(
            "aggregate: error with {} conflicts",
            pivot.conflicts
        ));
    }
    // A numeric source's values are checked as the source prints them, as the product's check
    // goes by text: PostgreSQL's `5.0000` does not fit BIGINT, nor `27.8000` DECIMAL(12,2).
    // A double is judged by its number, not its layout: SQLite's `99.0` fits BIGINT.
    // Every value in scope is checked, not only the one a conflict keeps: discovery reads
    // them all before the pivot chooses (seed 820: `12.5` beside the kept `5` under `min`).
    for (attr, ty) in &job.types {
        for r in &scope {
            // A row with an empty name is skipped, not a value of the attribute "".
            let (Some(a), Some(v), key) =
                (r.attr.as_ref().filter(|a| !a.is_empty()), &r.val, &r.key)
            else {
                continue;
            };
            let number = match values {
                Values::Double { .. } => Cow::Owned(format!("{}", numbers::number(v))),
                _ => Cow::Borrowed(v.as_str()),
            };
            if a == attr && !fits(ty, &number) {
                return Outcome::Refused(format!("{a:?} = {v:?} ({key:?}) does not fit {ty}"));
            }
        }
    }
    let (Some(prev), true) = (prev, step.merge) else {
        // `split: N` fills tables of N columns in order; no column still makes one table.
        let last_split = job.split.map_or(0, |n| match pivot.attrs.len() % n {
            0 => n.min(pivot.attrs.len()),
            r => r,
        });
        let target = Target {
            columns: pivot.attrs.clone(),
            rows: pivot.rows(&pivot.attrs),
            seen: BTreeMap::new(),
            last_split,
        }
        .remember();
        return Outcome::Written {
            target,
            conflicts: Some(pivot.conflicts),
            nulled: None,
        };
    };
    let new: BTreeSet<String> = pivot.attrs.difference(&prev.columns).cloned().collect();
    if job.on_new == OnNew::Error && !new.is_empty() {
        return Outcome::Refused(format!("on_new_attributes: error, new {new:?}"));
    }
    // The entities this merge re-pivots, each from all its rows in scope (for a delta, the
    // scope holds only the entities `changed` names).
    let touched: BTreeSet<Vec<K>> = pivot.entities.clone();
    let mut columns = prev.columns.clone();
    let mut last_split = prev.last_split;
    if job.on_new == OnNew::Add {
        last_split += new.len();
        if let Some(n) = job.split.filter(|&n| last_split > n) {
            return Outcome::Refused(format!(
                "new {new:?} would put {last_split} columns in the last table of split: {n}"
            ));
        }
        columns.extend(new);
    }
    let fresh = pivot.rows(&columns);
    let mut rows = prev.rows.clone();
    let mut nulled = 0;
    for key in &touched {
        let row = fresh.get(key).cloned().unwrap_or_default();
        if let Some(old) = prev.rows.get(key) {
            for (attr, value) in old {
                if row.contains_key(attr) {
                    continue;
                }
                nulled += 1;
                if step.changed.is_none() && outside_scope_has(step, key, attr) {
                    return Outcome::Refused(format!(
                        "{key:?} {attr:?} = {value:?} would become NULL while the source outside `where` has it"
                    ));
                }
            }
        }
        rows.insert(key.clone(), row);
    }
    if job.on_missing_delete && step.changed.is_none() {
        rows.retain(|k, _| pivot.entities.contains(k));
    }
    let target = Target {
        columns,
        rows,
        seen: prev.seen.clone(),
        last_split,
    }
    .remember();
    if (job.infer || !job.types.is_empty()) && !covered(job, prev, &target, &touched) {
        return Outcome::WrittenOrRefused(target);
    }
    Outcome::Written {
        target,
        conflicts: Some(pivot.conflicts),
        nulled: Some(nulled),
    }
}

/// Which text keys a database counts as one, from the least folding to the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KeyFold {
    /// By their bytes.
    Bytes,
    /// Regardless of case (`postgres_ci`'s source columns: ICU level 2, spaces count; and
    /// `postgres_citext`'s).
    Case,
    /// Regardless of case and trailing spaces (MariaDB's and SQL Server's defaults, which
    /// the harness's tables keep).
    CaseAndPad,
}

/// What the run between `source` and `target` (the same leg for one database) counts as one
/// key: the more folding of the two. `postgres_ci`'s collation is on the source's columns
/// only: the tables eavpivot creates there take the database's default. A `postgres_citext`
/// target's keys are citext only where its own source's were, the same leg.
pub fn key_fold(source: &str, target: &str) -> KeyFold {
    let of = |leg: &str, is_source: bool| match leg {
        "mariadb" | "mariadb_latin1" | "mssql" => KeyFold::CaseAndPad,
        "postgres_ci" | "postgres_citext" if is_source => KeyFold::Case,
        _ => KeyFold::Bytes,
    };
    of(source, true).max(of(target, false))
}

/// Two distinct keys read by the run that `fold` counts as one.
fn twins(scope: &[&Row], fold: KeyFold) -> Option<(Vec<K>, Vec<K>)> {
    let folded = |key: &[K]| -> Vec<String> {
        key.iter()
            .map(|k| match (k, fold) {
                (K::T(t), KeyFold::CaseAndPad) => t.trim_end_matches(' ').to_lowercase(),
                (K::T(t), KeyFold::Case) => t.to_lowercase(),
                (K::T(t), KeyFold::Bytes) => t.clone(),
                (K::I(i), _) => i.to_string(),
            })
            .collect()
    };
    let mut seen: BTreeMap<Vec<String>, &Vec<K>> = BTreeMap::new();
    for r in scope {
        match seen.get(&folded(&r.key)) {
            Some(&other) if *other != r.key => return Some((other.clone(), r.key.clone())),
            Some(_) => {}
            None => {
                seen.insert(folded(&r.key), &r.key);
            }
        }
    }
    None
}

/// Whether a typed merge must succeed: every value it writes into an existing column is
/// one that column already held, or the column's values old and new are all integers in
/// INTEGER's range (the headroom `infer` promises: INTEGER before SMALLINT), or the column
/// is a `pivot.types` override (whose values were checked). Otherwise the product may widen
/// the column or refuse the run.
fn covered(job: &Job, prev: &Target, next: &Target, touched: &BTreeSet<Vec<K>>) -> bool {
    let small = |v: &str| is_integer(v) && v.parse::<i32>().is_ok();
    next.columns
        .iter()
        .filter(|a| prev.columns.contains(*a))
        .all(|attr| {
            let new: Vec<&str> = touched
                .iter()
                .filter_map(|k| next.rows.get(k)?.get(attr))
                .map(String::as_str)
                .collect();
            if let Some(ty) = job.types.get(attr) {
                return new.iter().all(|v| sqlite_keeps(ty, v));
            }
            if new.is_empty() {
                return true;
            }
            let Some(old) = prev.seen.get(attr) else {
                return false; // typed from no value at all: any type may be there
            };
            new.iter().all(|v| old.contains(*v))
                || (old.iter().all(|v| small(v)) && new.iter().all(|v| small(v)))
        })
}

/// Whether SQLite keeps `v` as written in a column declared `ty`, by the type's affinity
/// (docs/reference.md, `pivot.types` on SQLite): TEXT-like types keep every value, INTEGER and
/// NUMERIC only plain integers, REAL none. Where not, a merge into a column an earlier run
/// created so may be refused (SQLite cannot change its type); other engines write.
fn sqlite_keeps(ty: &str, v: &str) -> bool {
    let t = ty.to_ascii_uppercase();
    let has = |parts: &[&str]| parts.iter().any(|p| t.contains(p));
    match () {
        // INTEGER affinity comes first; it and NUMERIC keep only plain integers.
        _ if has(&["INT"]) => is_integer(v) && v.parse::<i64>().is_ok(),
        _ if has(&["CHAR", "CLOB", "TEXT", "BLOB"]) => true,
        _ if has(&["REAL", "FLOA", "DOUB"]) => false,
        _ => is_integer(v) && v.parse::<i64>().is_ok(),
    }
}

fn outside_scope_has(step: &Step, key: &[K], attr: &str) -> bool {
    step.rows.iter().any(|r| {
        r.key == key
            && r.attr.as_deref() == Some(attr)
            && r.val.is_some()
            && step.where_g.is_some_and(|g| r.grp < g)
    })
}

/// The pivot of the rows in scope: entities, attributes, the aggregated cells, conflicts.
pub struct Pivot {
    pub entities: BTreeSet<Vec<K>>,
    pub attrs: BTreeSet<String>,
    pub cells: BTreeMap<(Vec<K>, String), String>,
    pub conflicts: u64,
}

impl Pivot {
    fn rows(&self, columns: &BTreeSet<String>) -> BTreeMap<Vec<K>, BTreeMap<String, String>> {
        let mut rows: BTreeMap<_, BTreeMap<_, _>> = self
            .entities
            .iter()
            .map(|e| (e.clone(), BTreeMap::new()))
            .collect();
        for ((key, attr), value) in &self.cells {
            if columns.contains(attr) {
                rows.entry(key.clone())
                    .or_default()
                    .insert(attr.clone(), value.clone());
            }
        }
        rows
    }
}

/// Rows with a NULL or empty attribute name still name their entity (it gets a row) but
/// no column; conflicts pick by byte order (`max`, and `min` for `min`), or `by_value` (a
/// numeric value column, whose equal numbers have one text: no conflict) by number.
pub fn pivot(rows: &[&Row], agg: Agg, by_value: bool) -> Pivot {
    let mut entities = BTreeSet::new();
    let mut values: BTreeMap<(Vec<K>, String), BTreeSet<&str>> = BTreeMap::new();
    let mut attrs = BTreeSet::new();
    for r in rows {
        entities.insert(r.key.clone());
        let Some(attr) = r.attr.as_deref().filter(|a| !a.is_empty()) else {
            continue;
        };
        attrs.insert(attr.to_string());
        let set = values.entry((r.key.clone(), attr.to_string())).or_default();
        if let Some(v) = &r.val {
            set.insert(v);
        }
    }
    let conflicts = values.values().filter(|s| s.len() > 1).count() as u64;
    let cells = values
        .into_iter()
        .filter_map(|(k, s)| {
            let pick = match (agg == Agg::Min, by_value) {
                (true, false) => s.first().copied(),
                (false, false) => s.last().copied(),
                (true, true) => s.iter().copied().min_by(numbers::by_number),
                (false, true) => s.iter().copied().max_by(numbers::by_number),
            };
            pick.map(|v| (k, v.to_string()))
        })
        .collect();
    Pivot {
        entities,
        attrs,
        cells,
        conflicts,
    }
}

/// Whether `value` converts exactly to the declared override type (the README's promise
/// for integer and DECIMAL(p,s) overrides; the generator declares only those).
pub fn fits(ty: &str, value: &str) -> bool {
    let ty = ty.to_ascii_uppercase();
    if ty == "BIGINT" || ty == "INTEGER" || ty == "INT" {
        return is_integer(value) && value.parse::<i64>().is_ok();
    }
    if let Some(ps) = ty
        .strip_prefix("DECIMAL(")
        .and_then(|t| t.strip_suffix(')'))
    {
        let Some((p, s)) = ps.split_once(',') else {
            return false;
        };
        let (p, s): (usize, usize) = (p.trim().parse().unwrap_or(0), s.trim().parse().unwrap_or(0));
        let Some((int, frac)) = decimal_parts(value) else {
            return false;
        };
        return frac.len() <= s && int.trim_start_matches('0').len() <= p - s;
    }
    true
}

fn is_integer(v: &str) -> bool {
    let d = v.strip_prefix('-').unwrap_or(v);
    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) && (d == "0" || !d.starts_with('0'))
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?` split into integer and fraction digits.
pub fn decimal_parts(v: &str) -> Option<(&str, &str)> {
    let d = v.strip_prefix('-').unwrap_or(v);
    let (int, frac) = d.split_once('.').unwrap_or((d, ""));
    let ok = is_integer(int) && (d.len() == int.len() || !frac.is_empty());
    (ok && frac.bytes().all(|b| b.is_ascii_digit())).then_some((int, frac))
}

/// The number a canonical decimal text stands for, as sign + digits without padding.
fn number_key(v: &str) -> Option<String> {
    let (int, frac) = decimal_parts(v)?;
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    let neg = v.starts_with('-') && !(int.is_empty() && frac.is_empty());
    Some(format!("{}{int}.{frac}", if neg { "-" } else { "" }))
}

/// A date or timestamp as `YYYY-MM-DD HH:MM:SS[.f]` without trailing fractional zeros.
fn time_key(v: &str) -> Option<String> {
    let v = v.replacen('T', " ", 1);
    let b = v.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        b.get(r.clone())
            .is_some_and(|s| s.iter().all(u8::is_ascii_digit))
    };
    if !(b.len() >= 10
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10))
    {
        return None;
    }
    let (date, time) = v.split_at(10);
    let time = time.trim_start();
    let time = if time.is_empty() { "00:00:00" } else { time };
    let time = if time.contains('.') {
        time.trim_end_matches('0').trim_end_matches('.')
    } else {
        time
    };
    Some(format!("{date} {time}"))
}

/// A cell as read back from the target.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(String),
    Int(i64),
    /// A binary float: never what a text source value may become (README: only
    /// floating-point source values become doubles).
    Real(f64),
    Bytes(Vec<u8>),
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Text(t) => write!(f, "{t:?}"),
            Cell::Int(i) => write!(f, "{i} (integer)"),
            Cell::Real(x) => write!(f, "{x} (REAL)"),
            Cell::Bytes(b) => write!(f, "{b:?} (bytes)"),
        }
    }
}

/// Whether the target's `cell` holds the source's `expected` text: exactly for text
/// columns; by value for numbers and dates where the column is typed.
pub fn same(expected: &str, cell: &Cell, typed: bool) -> bool {
    let text = match cell {
        Cell::Text(t) => t.clone(),
        Cell::Int(i) => i.to_string(),
        Cell::Real(_) => return false,
        Cell::Bytes(b) => return b == expected.as_bytes(),
    };
    if text == expected {
        return true;
    }
    if !typed {
        return false;
    }
    if let (Some(a), Some(b)) = (number_key(expected), number_key(&text)) {
        return a == b;
    }
    matches!((time_key(expected), time_key(&text)), (Some(a), Some(b)) if a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_compare_by_value_only_where_typed() {
        assert!(same("12.5", &Cell::Text("12.50".into()), true));
        assert!(!same("12.5", &Cell::Text("12.50".into()), false));
        assert!(!same("007", &Cell::Int(7), true));
        assert!(!same("27.85", &Cell::Text("27.9".into()), true));
        assert!(!same("82.0", &Cell::Real(82.0), true));
        assert!(same(
            "2024-01-01",
            &Cell::Text("2024-01-01 00:00:00".into()),
            true
        ));
        assert!(!same(
            "2024-01-02 10:30:00",
            &Cell::Text("2024-01-02".into()),
            true
        ));
        assert!(fits("DECIMAL(12,4)", "149.99") && !fits("DECIMAL(12,4)", "1.23456"));
        assert!(!fits("BIGINT", "007") && fits("BIGINT", "-12"));
    }
}
