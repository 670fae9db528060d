//! The streaming pivot: ordered `(entity…, attribute, value)` rows in, wide rows out.
//!
//! One hash lookup per row (attribute → column) instead of one CASE per column per row, and
//! memory bounded by one entity's row plus one load batch, whatever the source size.
//!
//! The per-row path is kept allocation-free beyond what the backend hands over: the attribute
//! is looked up by `&str` in a map with a cheap non-cryptographic hash (its keys come from the
//! plan, not from an adversary), the entity key is moved, not cloned, and compared only
//! against the current entity; the value is moved into its cell.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::backend::RowPipeline;
use crate::config::Aggregate;
use crate::dialect::{ColumnKind, Dialect, TableShape};
use crate::error::{shown, Error, Result};
use crate::plan::{naming, types};
use crate::transform::{KvRow, Transform};
use crate::value::Value;

use super::progress::Progress;
use crate::interrupt;

/// Conflicting pairs listed in an `aggregate: error` message.
const CONFLICT_SAMPLES: usize = 10;
/// Source rows between interrupt checks and progress updates (a power of two minus one).
const CHECK_EVERY: u64 = 4_095;

/// FxHash (rustc's): a multiply-rotate per word. Attribute names are short and few, and a
/// lookup per source row is the pivot's only per-row cost besides moving the value, so SipHash
/// would be a measurable share of it.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

impl FxHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        // The length first, so trailing NULs (zero words) still change the hash.
        self.add(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type ColumnIndex = HashMap<String, (usize, usize), BuildHasherDefault<FxHasher>>;

pub struct Pivoter {
    dialect: &'static dyn Dialect,
    entity_width: usize,
    /// Attribute name → (table, column position within that table's row).
    index: ColumnIndex,
    widths: Vec<usize>,
    /// Per table per column, the typed kind a chosen cell is converted to (None: as read).
    kinds: Vec<Vec<Option<ColumnKind>>>,
    /// Per table per column: an integer column whose round trip the pivot checks as it
    /// converts ([`crate::dialect::Typed::converted_by_stream`]).
    checks_integer: Vec<Vec<bool>>,
    /// The buffer an integer is printed into for that check.
    printed_integer: String,
    /// Per column: typed by value (`12.5` prints `12.50`), so its print hash ignores
    /// trailing fractional zeros ([`super::verify::print_hash`]).
    by_value: Vec<Vec<bool>>,
    aggregate: Aggregate,
    /// The values are decimals read as their text: compared by value.
    decimal_values: bool,
    /// How the source database spells its float values in text, where not as eavpivot does
    /// ([`crate::dialect::Types::float_text`]).
    float_text: Option<fn(f64) -> String>,
    /// Per table per column: its type is text (its own, or the table's `column_type`).
    text_columns: Vec<Vec<bool>>,
    transforms: Vec<Box<dyn Transform>>,
    current: Option<Vec<Value>>,
    /// Per table, the current entity's cells (entity values excluded).
    cells: Vec<Vec<Value>>,
    conflicted: Vec<Vec<bool>>,
    ready: Vec<Vec<Vec<Value>>>,
    ready_rows: usize,
    progress: Progress,
    /// Sum the print hashes of typed cells ([`StreamStats::printed`]).
    print_check: bool,
    pub stats: StreamStats,
}

/// What the stream saw and produced: the expected side of verification.
#[derive(Debug, Clone, Default)]
pub struct StreamStats {
    pub source_rows: u64,
    pub entities: u64,
    /// Non-null cells per table per column.
    pub cells: Vec<Vec<u64>>,
    pub conflicts: u64,
    pub conflict_samples: Vec<String>,
    /// Rows whose attribute is not a planned column (excluded, or empty names skipped).
    pub dropped_rows: u64,
    /// Per table per column, the non-null source rows read for that attribute: compared with
    /// discovery's `n_values` to prove the stream saw every row (see `load::verify`).
    pub values_read: Vec<Vec<u64>>,
    /// Per table per column, non-null rows whose (entity, attribute) cell was already filled:
    /// duplicates, folded by `aggregate`. `values_read - repeats == cells` by construction.
    pub repeats: Vec<Vec<u64>>,
    /// Every entity key was all integers and strictly greater than the one before it, so no
    /// key came back after another had started: each entity is one contiguous run, and
    /// `entities` is the number of distinct keys read.
    pub keys_ascending: bool,
    /// Per table per column, for typed columns when asked ([`Pivoter::with_print_check`]):
    /// the wrapping sum of [`super::verify::print_hash`] of every chosen source text, which
    /// the target's cells printed back must match (runs across two databases).
    pub printed: Vec<Vec<u64>>,
    /// When the read carried the round-trip check ([`Pivoter::with_misprint_check`]): the
    /// source values read that the database does not print back as written once converted
    /// to their column's type; verification refuses the load unless 0.
    pub misprinted: Option<u64>,
    /// Chosen cells of integer columns the pivot converted that do not print back as
    /// written ([`crate::dialect::Typed::converted_by_stream`]): not canonical 64-bit
    /// integers. Verification refuses the load unless 0.
    pub integers_misprinted: u64,
}

impl Pivoter {
    pub fn new(
        dialect: &'static dyn Dialect,
        entity_width: usize,
        tables: &[TableShape],
        aggregate: Aggregate,
        transforms: Vec<Box<dyn Transform>>,
    ) -> Pivoter {
        let mut index = ColumnIndex::default();
        for (t, shape) in tables.iter().enumerate() {
            for (c, col) in shape.columns.iter().enumerate() {
                index.insert(col.attribute.clone(), (t, c));
            }
        }
        let widths: Vec<usize> = tables.iter().map(|t| t.columns.len()).collect();
        let kinds = per_column(tables, |ty| ty.map(|t| t.kind.clone()));
        let checks_integer = per_column(tables, |ty| {
            ty.is_some_and(crate::dialect::Typed::converted_by_stream)
        });
        let by_value = per_column(tables, |ty| ty.is_some_and(|t| t.by_value));
        Pivoter {
            kinds,
            checks_integer,
            printed_integer: String::new(),
            by_value,
            dialect,
            entity_width,
            index,
            cells: widths.iter().map(|&w| vec![Value::Null; w]).collect(),
            conflicted: widths.iter().map(|&w| vec![false; w]).collect(),
            ready: vec![Vec::new(); widths.len()],
            stats: StreamStats {
                cells: widths.iter().map(|&w| vec![0; w]).collect(),
                values_read: widths.iter().map(|&w| vec![0; w]).collect(),
                repeats: widths.iter().map(|&w| vec![0; w]).collect(),
                keys_ascending: true,
                ..StreamStats::default()
            },
            widths,
            aggregate,
            decimal_values: false,
            float_text: None,
            text_columns: tables
                .iter()
                .map(|t| {
                    let table_text = crate::dialect::portable::parse(&t.column_type)
                        .is_some_and(|k| k.is_text());
                    t.columns
                        .iter()
                        .map(|c| c.typed.as_ref().map_or(table_text, |ty| ty.kind.is_text()))
                        .collect()
                })
                .collect(),
            transforms,
            current: None,
            ready_rows: 0,
            progress: Progress::hidden(),
            print_check: false,
        }
    }

    /// Fingerprint the chosen text of every typed cell ([`StreamStats::printed`]).
    pub fn with_print_check(mut self, on: bool) -> Pivoter {
        self.print_check = on;
        self.stats.printed = self.widths.iter().map(|&w| vec![0; w]).collect();
        self
    }

    /// Read rows with a last `misprinted` column ([`crate::dialect::query::ordered_rows_checked`])
    /// and sum it into [`StreamStats::misprinted`].
    pub fn with_misprint_check(mut self, on: bool) -> Pivoter {
        self.stats.misprinted = on.then_some(0);
        self
    }

    /// The source's values are of a decimal type, read as their text (PostgreSQL's NUMERIC,
    /// MariaDB's and SQL Server's DECIMAL): conflicts compare them by value, as the
    /// pushdown's MAX/MIN do — by their text `9` would beat `10.5`.
    pub fn with_decimal_values(mut self, on: bool) -> Pivoter {
        self.decimal_values = on;
        self
    }

    /// A float chosen for a text column is written as `float_text` spells it, as the
    /// pushdown's cast writes it ([`crate::execute::Session::float_text`]).
    pub fn with_float_text(mut self, float_text: Option<fn(f64) -> String>) -> Pivoter {
        self.float_text = float_text;
        self
    }

    /// Show `progress` (a bar over the expected source rows) while streaming.
    pub fn with_progress(mut self, progress: Progress) -> Pivoter {
        self.progress = progress;
        self
    }

    /// The transforms, handed back after the stream for their reports and side tables.
    pub fn take_transforms(&mut self) -> Vec<Box<dyn Transform>> {
        std::mem::take(&mut self.transforms)
    }

    fn decode(&mut self, mut row: Vec<Value>) -> Result<KvRow> {
        let checked = usize::from(self.stats.misprinted.is_some());
        if row.len() != self.entity_width + 2 + checked {
            return Err(Error::Job(format!(
                "stream: expected {} columns per source row, got {}",
                self.entity_width + 2 + checked,
                row.len()
            )));
        }
        if let Some(misprinted) = self.stats.misprinted.as_mut() {
            // Anything but a 0 counts: the check must not pass on a value it cannot read.
            let flag = row.pop().and_then(|f| f.as_i64());
            *misprinted += u64::from(flag != Some(0));
        }
        let value = row.pop().unwrap_or(Value::Null);
        let attribute = match row.pop().unwrap_or(Value::Null).into_attribute_name() {
            Ok(name) => name.unwrap_or_default(),
            Err(bytes) => return Err(naming::not_text(&bytes, Some(&row))),
        };
        Ok(KvRow {
            entity: row,
            attribute: self.dialect.decode_attribute_key(attribute),
            value,
        })
    }

    /// Run `row` through the transforms from `stage` on, then into the pivot.
    fn feed(&mut self, stage: usize, row: KvRow) -> Result<()> {
        if stage == self.transforms.len() {
            return self.pivot(row);
        }
        let mut out = Vec::new();
        self.transforms[stage].push(row, &mut out)?;
        for r in out {
            self.feed(stage + 1, r)?;
        }
        Ok(())
    }

    fn pivot(&mut self, row: KvRow) -> Result<()> {
        let KvRow {
            entity,
            attribute,
            value,
        } = row;
        if self.current.as_ref() != Some(&entity) {
            if self.stats.keys_ascending {
                self.stats.keys_ascending = int_key_follows(self.current.as_deref(), &entity);
            }
            self.emit_current();
            self.current = Some(entity);
            self.stats.entities += 1;
        }
        let Some(&(t, c)) = self.index.get(attribute.as_str()) else {
            self.stats.dropped_rows += 1;
            return Ok(());
        };
        if value.is_null() {
            return Ok(());
        }
        self.stats.values_read[t][c] += 1;
        let float_text = self.float_text;
        let cell = &mut self.cells[t][c];
        if cell.is_null() {
            *cell = value;
            return Ok(());
        }
        self.stats.repeats[t][c] += 1;
        let order = compare(&value, cell, self.decimal_values);
        // `10.5` and `10.50` of a decimal type are one value, as the pushdown counts them.
        let differs = match self.decimal_values {
            true => order != Ordering::Equal,
            false => *cell != value,
        };
        if differs && !self.conflicted[t][c] {
            self.conflicted[t][c] = true;
            self.stats.conflicts += 1;
            if self.stats.conflict_samples.len() < CONFLICT_SAMPLES {
                let key: Vec<String> = self
                    .current
                    .iter()
                    .flatten()
                    .map(Value::to_string)
                    .collect();
                let (a, b) = (
                    value_shown(cell, float_text),
                    value_shown(&value, float_text),
                );
                let sample = conflict_sample(&key, &attribute, &a, &b);
                self.stats.conflict_samples.push(sample);
            }
        }
        let replace = match self.aggregate {
            Aggregate::Max | Aggregate::Error => order == Ordering::Greater,
            Aggregate::Min => order == Ordering::Less,
        };
        if replace {
            *cell = value;
        }
        Ok(())
    }

    fn emit_current(&mut self) {
        let Some(entity) = self.current.take() else {
            return;
        };
        let tables = self.widths.len();
        let mut entity = Some(entity);
        for t in 0..tables {
            let mut wide = Vec::with_capacity(self.entity_width + self.widths[t]);
            // The last table takes the key itself; earlier ones (with `split`) a copy.
            match (t + 1 == tables, entity.as_ref()) {
                (true, _) => wide.extend(entity.take().into_iter().flatten()),
                (false, Some(key)) => wide.extend(key.iter().cloned()),
                (false, None) => {}
            }
            for (c, cell) in self.cells[t].iter_mut().enumerate() {
                if !cell.is_null() {
                    self.stats.cells[t][c] += 1;
                }
                let mut chosen = std::mem::replace(cell, Value::Null);
                if let (Value::Float(f), Some(spell), true) =
                    (&chosen, self.float_text, self.text_columns[t][c])
                {
                    chosen = Value::Text(spell(*f));
                }
                if self.print_check && self.kinds[t][c].is_some() {
                    if let Some(h) = super::verify::print_hash(&chosen, self.by_value[t][c]) {
                        let sum = &mut self.stats.printed[t][c];
                        *sum = sum.wrapping_add(h);
                    }
                }
                // Converted after the aggregate chose among the source texts, as the
                // pushdown's CAST(MAX(…)) does.
                if self.checks_integer[t][c] && !chosen.is_null() {
                    let misprinted = !prints_as_integer(&chosen, &mut self.printed_integer);
                    self.stats.integers_misprinted += u64::from(misprinted);
                }
                wide.push(match &self.kinds[t][c] {
                    Some(kind) => types::convert(chosen, kind),
                    None => chosen,
                });
            }
            self.conflicted[t].iter_mut().for_each(|f| *f = false);
            self.ready[t].push(wide);
        }
        self.ready_rows += 1;
    }
}

/// Per table, per column: `of` the column's own type (None for an untyped column).
fn per_column<T>(
    tables: &[TableShape],
    of: impl Fn(Option<&crate::dialect::Typed>) -> T,
) -> Vec<Vec<T>> {
    tables
        .iter()
        .map(|t| t.columns.iter().map(|c| of(c.typed.as_ref())).collect())
        .collect()
}

/// Whether the source value `chosen` is exactly what the 64-bit integer it converts to
/// ([`types::convert`], which binds that number) prints as: the round trip of a cell the
/// stream converts itself. `printed` is a reused buffer.
fn prints_as_integer(chosen: &Value, printed: &mut String) -> bool {
    use std::fmt::Write;
    let text = match chosen {
        // Already a number in the source (an integer value column): prints as itself.
        Value::Int(_) => return true,
        Value::Text(s) => s.as_str(),
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => s,
            Err(_) => return false,
        },
        _ => return false,
    };
    let Ok(n) = text.parse::<i64>() else {
        return false;
    };
    printed.clear();
    // Writing to a String cannot fail.
    let _ = write!(printed, "{n}");
    printed == text
}

/// Whether `next` is an all-integer key strictly greater (lexicographically) than `previous`
/// (any all-integer key follows no key at all). Integers are the one key type whose equality
/// and order are the same in every engine and here: text may compare under a collation that
/// folds case or trailing spaces, and SQLite's `1 = 1.0`, so other keys prove nothing.
fn int_key_follows(previous: Option<&[Value]>, next: &[Value]) -> bool {
    if !next.iter().all(|v| matches!(v, Value::Int(_))) {
        return false;
    }
    let Some(previous) = previous else {
        return true;
    };
    if previous.len() != next.len() {
        return false;
    }
    for (p, n) in previous.iter().zip(next) {
        match (p, n) {
            (Value::Int(p), Value::Int(n)) if n > p => return true,
            (Value::Int(p), Value::Int(n)) if n == p => continue,
            _ => return false,
        }
    }
    false
}

/// Numbers by value, everything else by its text: the order `aggregate: max/min` keeps.
/// `decimals`: texts that are decimal numerals are numbers (a decimal type read as text).
fn compare(a: &Value, b: &Value, decimals: bool) -> Ordering {
    if decimals {
        if let (Value::Text(x), Value::Text(y)) = (a, b) {
            if let Some(order) = compare_decimals(x, y) {
                return order;
            }
        }
    }
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Float(x), Value::Float(y)) => x.total_cmp(y),
        (Value::Int(x), Value::Float(y)) => (*x as f64).total_cmp(y),
        (Value::Float(x), Value::Int(y)) => x.total_cmp(&(*y as f64)),
        // Text by its bytes, as SQL's BINARY collation, whether or not they are UTF-8.
        _ => match (a.text_bytes(), b.text_bytes()) {
            (Some(x), Some(y)) => x.cmp(y),
            _ => a.as_text().cmp(&b.as_text()),
        },
    }
}

/// Two decimal numerals (`-12.50`, `0.5`, `7`) by value, exactly; None where either is not
/// one (PostgreSQL's `NaN`, which then sorts by its text: above every number, as there).
fn compare_decimals(a: &str, b: &str) -> Option<Ordering> {
    let (a, b) = (Decimal::parse(a)?, Decimal::parse(b)?);
    let magnitude = |x: &Decimal| {
        // Integer digits without leading zeros, then the fraction without trailing ones.
        let int = x.int.trim_start_matches('0');
        let frac = x.frac.trim_end_matches('0');
        (int.len(), int.to_string(), frac.to_string())
    };
    let (ma, mb) = (magnitude(&a), magnitude(&b));
    let zero = |m: &(usize, String, String)| m.0 == 0 && m.2.is_empty();
    let (na, nb) = (a.negative && !zero(&ma), b.negative && !zero(&mb));
    Some(match (na, nb) {
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
        (false, false) => ma.cmp(&mb),
        (true, true) => mb.cmp(&ma),
    })
}

/// A decimal numeral's parts: an optional sign, digits, an optional fraction.
struct Decimal<'a> {
    negative: bool,
    int: &'a str,
    frac: &'a str,
}

impl<'a> Decimal<'a> {
    fn parse(text: &'a str) -> Option<Decimal<'a>> {
        let (negative, digits) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
        let numeral = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        (!(int.is_empty() && frac.is_empty()) && numeral(int) && numeral(frac)).then_some(Decimal {
            negative,
            int,
            frac,
        })
    }
}

impl RowPipeline for Pivoter {
    fn push(&mut self, row: Vec<Value>) -> Result<()> {
        if self.stats.source_rows & CHECK_EVERY == 0 {
            interrupt::check_interrupt()?;
            self.progress.set_position(self.stats.source_rows);
        }
        self.progress.fault_point(self.stats.source_rows);
        self.stats.source_rows += 1;
        let row = self.decode(row)?;
        self.feed(0, row)
    }

    fn finish(&mut self) -> Result<()> {
        for stage in 0..self.transforms.len() {
            let mut out = Vec::new();
            self.transforms[stage].finish(&mut out)?;
            for r in out {
                self.feed(stage + 1, r)?;
            }
        }
        self.emit_current();
        self.progress.set_position(self.stats.source_rows);
        self.progress.finish();
        if self.aggregate == Aggregate::Error && self.stats.conflicts > 0 {
            return Err(conflict_error(
                self.stats.conflicts,
                &self.stats.conflict_samples,
            ));
        }
        Ok(())
    }

    fn take_ready(&mut self) -> Vec<Vec<Vec<Value>>> {
        self.ready_rows = 0;
        self.ready.iter_mut().map(std::mem::take).collect()
    }

    fn ready_rows(&self) -> usize {
        self.ready_rows
    }
}

/// The `aggregate: error` refusal, listing the first conflicting pairs.
/// One conflicting pair as conflict errors list it, in both strategies: the names and values
/// cut by [`shown`], so ten samples of 10 MB values still make one short line.
/// A conflicting value as a message shows it: a float as the database writes it into a text
/// cell (`float_text`: PostgreSQL's `1e+20`), so that both strategies name it alike.
pub fn value_shown(value: &Value, float_text: Option<fn(f64) -> String>) -> String {
    match (value, float_text) {
        (Value::Float(f), Some(spell)) => spell(*f),
        _ => value.to_string(),
    }
}

pub fn conflict_sample(key: &[String], attribute: &str, a: &str, b: &str) -> String {
    format!(
        "({}) {}: {} vs {}",
        key.join(", "),
        shown(attribute),
        shown(a),
        shown(b)
    )
}

pub fn conflict_error(count: u64, samples: &[String]) -> Error {
    Error::Job(format!(
        "{count} entity/attribute pairs have conflicting values (pivot.aggregate: error); first {}: {}",
        samples.len(),
        samples.join("; ")
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::TableRef;
    use crate::dialect::{EntityColumn, PivotColumn, Sqlite};

    /// A one-key (`id`) text table for pivot tests; verify.rs uses it too.
    pub(crate) fn shape(table: &str, attributes: &[&str]) -> TableShape {
        TableShape {
            table: TableRef::parse(table).expect("table name"),
            entity: vec![EntityColumn {
                name: "id".into(),
                sql_type: None,
            }],
            columns: attributes.iter().map(|a| PivotColumn::text(a, a)).collect(),
            column_type: "TEXT".into(),
            primary_key: true,
        }
    }

    fn text(s: &str) -> Value {
        Value::Text(s.into())
    }

    fn run(pivoter: &mut Pivoter, rows: &[(i64, &str, Option<&str>)]) -> Result<()> {
        for &(id, a, v) in rows {
            pivoter.push(vec![Value::Int(id), text(a), v.map_or(Value::Null, text)])?;
        }
        pivoter.finish()
    }

    fn pivoter(tables: &[TableShape], aggregate: Aggregate) -> Pivoter {
        Pivoter::new(&Sqlite, 1, tables, aggregate, Vec::new())
    }

    /// An integer column the stream converts itself: a chosen text that is not what its
    /// 64-bit integer prints as (`007`, `+5`, `-0`, beyond 64 bits, not a number) counts as
    /// a misprint, canonical ones and NULLs do not; the cell is loaded as converted (the
    /// count refuses the load).
    #[test]
    fn integer_cells_the_stream_converts_are_checked_as_they_print() {
        let mut typed = shape("w", &["n"]);
        typed.columns[0].typed = Some(crate::dialect::Typed {
            kind: ColumnKind::BigInt,
            sql_type: "INTEGER".into(),
            why: String::new(),
            round_trips: true,
            by_value: false,
        });
        let mut p = pivoter(&[typed.clone()], Aggregate::Max);
        let rows = [
            (1, "n", Some("7")),
            (2, "n", Some("-12")),
            (3, "n", Some("0")),
            (4, "n", None),
            (5, "n", Some("9223372036854775807")),
            (6, "n", Some("007")),
            (7, "n", Some("+5")),
            (8, "n", Some("-0")),
            (9, "n", Some("9223372036854775808")),
            (10, "n", Some("x")),
        ];
        run(&mut p, &rows).expect("pivot");
        assert_eq!(p.stats.integers_misprinted, 5);
        assert_eq!(p.take_ready()[0][5], vec![Value::Int(6), Value::Int(7)]);
        // Not typed by the ladder's round trip (`pivot.types`): not checked.
        typed.columns[0].typed.as_mut().expect("typed").round_trips = false;
        let mut p = pivoter(&[typed], Aggregate::Max);
        run(&mut p, &rows).expect("pivot");
        assert_eq!(p.stats.integers_misprinted, 0);
    }

    /// The checked read's last column is summed, not pivoted; anything but 0 (a NULL, a
    /// value that is no integer) counts as a misprint, and a row without it is refused.
    #[test]
    fn the_misprint_column_is_counted_not_pivoted() {
        let mut p = pivoter(&[shape("w", &["a"])], Aggregate::Max).with_misprint_check(true);
        let flags = [
            Value::Int(0),
            Value::Int(1),
            Value::Null,
            text("0"),
            text("x"),
        ];
        for (id, flag) in (1..).zip(flags) {
            p.push(vec![Value::Int(id), text("a"), text("7"), flag])
                .expect("pivot");
        }
        p.finish().expect("finish");
        assert_eq!(p.stats.misprinted, Some(3));
        assert_eq!(p.stats.cells, vec![vec![5]]);
        assert_eq!(p.take_ready()[0][0], vec![Value::Int(1), text("7")]);
        let err = p
            .push(vec![Value::Int(9), text("a"), text("7")])
            .expect_err("no flag");
        assert!(err.to_string().contains("expected 4 columns"), "{err}");
        assert_eq!(
            pivoter(&[shape("w", &["a"])], Aggregate::Max)
                .stats
                .misprinted,
            None
        );
    }

    #[test]
    fn one_wide_row_per_entity_in_column_order() {
        let mut p = pivoter(&[shape("w", &["a", "b", "c"])], Aggregate::Max);
        let rows = [
            (1, "c", Some("1c")),
            (1, "a", Some("1a")),
            (2, "b", Some("2b")),
            (2, "zz", Some("dropped")),
            (3, "a", None),
        ];
        run(&mut p, &rows).expect("pivot");
        assert_eq!(p.ready_rows(), 3);
        let ready = p.take_ready();
        assert_eq!(
            ready[0],
            vec![
                vec![Value::Int(1), text("1a"), Value::Null, text("1c")],
                vec![Value::Int(2), Value::Null, text("2b"), Value::Null],
                vec![Value::Int(3), Value::Null, Value::Null, Value::Null],
            ]
        );
        assert_eq!(p.stats.source_rows, 5);
        assert_eq!(p.stats.entities, 3);
        assert_eq!(p.stats.cells, vec![vec![1, 1, 1]]);
        assert_eq!(p.stats.dropped_rows, 1);
        assert_eq!(p.ready_rows(), 0);
    }

    #[test]
    fn split_tables_each_get_every_entity() {
        let tables = [shape("w", &["a"]), shape("w_2", &["b"])];
        let mut p = pivoter(&tables, Aggregate::Max);
        run(&mut p, &[(1, "b", Some("x")), (2, "a", Some("y"))]).expect("pivot");
        let ready = p.take_ready();
        assert_eq!(
            ready[0],
            vec![
                vec![Value::Int(1), Value::Null],
                vec![Value::Int(2), text("y")]
            ]
        );
        assert_eq!(
            ready[1],
            vec![
                vec![Value::Int(1), text("x")],
                vec![Value::Int(2), Value::Null]
            ]
        );
        assert_eq!(p.stats.cells, vec![vec![1], vec![1]]);
    }

    #[test]
    fn conflicts_keep_max_or_min_and_are_counted_once_per_pair() {
        let rows = [
            (1, "a", Some("b")),
            (1, "a", Some("c")),
            (1, "a", Some("a")),
        ];
        for (aggregate, kept) in [(Aggregate::Max, "c"), (Aggregate::Min, "a")] {
            let mut p = pivoter(&[shape("w", &["a"])], aggregate);
            run(&mut p, &rows).expect("pivot");
            assert_eq!(p.take_ready()[0], vec![vec![Value::Int(1), text(kept)]]);
            assert_eq!(p.stats.conflicts, 1);
            assert_eq!(
                p.stats.conflict_samples,
                vec!["(1) 'a': 'b' vs 'c'".to_string()]
            );
        }
        let mut p = pivoter(&[shape("w", &["a"])], Aggregate::Error);
        let err = run(&mut p, &rows).expect_err("aggregate: error refuses");
        assert!(
            err.to_string().contains("1 entity/attribute pairs"),
            "{err}"
        );
    }

    #[test]
    fn numbers_compare_by_value_not_text() {
        let mut p = pivoter(&[shape("w", &["n"])], Aggregate::Max);
        p.push(vec![Value::Int(1), text("n"), Value::Int(9)])
            .expect("push");
        p.push(vec![Value::Int(1), text("n"), Value::Int(10)])
            .expect("push");
        p.finish().expect("finish");
        assert_eq!(p.take_ready()[0], vec![vec![Value::Int(1), Value::Int(10)]]);
    }

    #[test]
    fn decimals_read_as_text_compare_by_value() {
        let cases = [
            ("10.5", "9", Ordering::Greater),
            ("10.50", "10.5", Ordering::Equal),
            ("-10", "-2", Ordering::Less),
            ("0.49", "0.5", Ordering::Less),
            ("-0.00", "0", Ordering::Equal),
            ("-0.5", "0", Ordering::Less),
            ("007", "7.000", Ordering::Equal),
            (".5", "0.50", Ordering::Equal),
            (
                "123456789012345678901234567890.1",
                "123456789012345678901234567890.09",
                Ordering::Greater,
            ),
        ];
        for (a, b, order) in cases {
            assert_eq!(compare(&text(a), &text(b), true), order, "{a} vs {b}");
            assert_eq!(
                compare(&text(b), &text(a), true),
                order.reverse(),
                "{b} vs {a}"
            );
        }
        // Not numerals: by their text, as without the flag.
        assert_eq!(compare(&text("NaN"), &text("9"), true), Ordering::Greater);
        assert_eq!(compare(&text("1e5"), &text("9"), true), Ordering::Less);
        assert_eq!(compare(&text("10.5"), &text("9"), false), Ordering::Less);
    }

    #[test]
    fn wrong_row_shape_is_an_error() {
        let mut p = pivoter(&[shape("w", &["a"])], Aggregate::Max);
        let err = p
            .push(vec![Value::Int(1), text("a")])
            .expect_err("two columns");
        assert!(err.to_string().contains("expected 3 columns"), "{err}");
    }

    #[test]
    fn fx_hash_separates_similar_names() {
        let hash = |s: &str| {
            let mut h = FxHasher::default();
            std::hash::Hash::hash(s, &mut h);
            h.finish()
        };
        assert_ne!(hash("attr_0001"), hash("attr_0002"));
        assert_ne!(hash("a"), hash("a\0"));
        assert_ne!(hash(""), hash("\0"));
    }
}
