//! `column_type: infer`: per attribute, a type of a fixed ladder that keeps every non-null
//! value. Pure: [`Survey`] is fed every value by discovery's one scan, and
//! [`Survey::decide_with`] gives the same answer for every database; a dialect only renders it
//! ([`crate::dialect::Types::column_sql_type`]) or, where it cannot store a kind so that it
//! prints back (SQLite decimals, booleans outside PostgreSQL), the plan keeps the text.
//!
//! The ladder: integer (SMALLINT/INT/BIGINT by range, then DECIMAL(p,0) up to 38 digits; no
//! leading zeros, `+`, spaces or `-0`), decimal (no exponent), date (`YYYY-MM-DD`, years
//! 1000–9999, real calendar days), timestamp without zone (`YYYY-MM-DD HH:MM:SS[.f…]`, 0–6
//! fractional digits and no trailing zero, which PostgreSQL would drop), boolean
//! (`true`/`false`), else text bounded by the longest value.
//!
//! `pivot.infer` ([`Infer`]) says how. `numbers: value` (default) types decimals by value:
//! the most integer digits and the most fractional digits of any value, integers among them
//! included, and timestamps with the most fractional digits of any; the check then compares
//! by value. `numbers: text` wants every value to print back as its exact text: one scale in
//! every decimal (a DECIMAL(p,s) prints `s` digits), one fraction length in every timestamp.
//! `widths: headroom` (default) widens the result for the next load (INTEGER before
//! SMALLINT, DECIMAL precision 18 or more, text lengths in steps); `widths: exact` keeps the
//! narrowest.

use crate::config::{Infer, InferNumbers, InferWidths};
use crate::dialect::ColumnKind;
use crate::value::Value;

mod form;

use form::Form;

/// Most digits a DECIMAL may have on every supported database (SQL Server's 38).
const MAX_DIGITS: u32 = 38;
/// Characters of a value quoted in a reason.
const SAMPLE_CHARS: usize = 40;

/// A value that decided something, and the entity it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub value: String,
    pub entity: String,
}

impl Sample {
    fn new(value: &str, entity: &[Value]) -> Sample {
        let mut shown: String = value.chars().take(SAMPLE_CHARS).collect();
        if value.chars().count() > SAMPLE_CHARS {
            shown.push('…');
        }
        let key: Vec<String> = entity.iter().map(Value::to_string).collect();
        Sample {
            value: shown,
            entity: key.join(", "),
        }
    }
}

impl std::fmt::Display for Sample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "'{}' for entity {}",
            self.value.escape_debug(),
            self.entity
        )
    }
}

/// One rung of the ladder: still possible, or the first value that ruled it out.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Rung {
    out: Option<Sample>,
}

impl Rung {
    fn alive(&self) -> bool {
        self.out.is_none()
    }

    fn rule_out(&mut self, value: &str, entity: &[Value]) {
        if self.out.is_none() {
            self.out = Some(Sample::new(value, entity));
        }
    }
}

/// Everything one attribute's values say about its type, accumulated one value at a time.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Survey {
    /// Non-null values seen.
    pub values: u64,
    /// The longest value in characters, UTF-16 code units and UTF-8 bytes.
    pub max_chars: u64,
    pub max_utf16: u64,
    pub max_bytes: u64,
    pub min_bytes: Option<u64>,
    pub min_chars: Option<u64>,
    int: Rung,
    int_range: Option<(i128, i128)>,
    decimal: Rung,
    /// Most integer digits, and the fractional digits every decimal value has.
    decimal_digits: u32,
    decimal_scale: Option<u32>,
    date: Rung,
    timestamp: Rung,
    timestamp_fraction: Option<u32>,
    /// `numbers: value`: every value an integer or decimal numeral, the most integer digits
    /// and the most fractional digits of any, and whether any has a fraction.
    number: Rung,
    number_digits: u32,
    number_scale: u32,
    number_fraction: bool,
    /// `numbers: value`: every value a timestamp, with at most this many fractional digits.
    any_timestamp: Rung,
    any_timestamp_fraction: u32,
    boolean: Rung,
    float: Rung,
    /// Values of some typed form: a text attribute with any is mixed (`N/A` among numbers).
    pub typed_values: u64,
    /// The first value of no typed form at all: why the attribute is text.
    untyped: Option<Sample>,
    /// The first value seen, for the reason of a mixed column.
    first: Option<Sample>,
    /// The `pivot.types` kind every value must convert to, and the first that does not.
    declared: Option<ColumnKind>,
    pub misfit: Option<Sample>,
}

impl Survey {
    /// A survey that also checks every value against a `pivot.types` kind.
    pub fn declared(kind: Option<ColumnKind>) -> Survey {
        Survey {
            declared: kind,
            ..Survey::default()
        }
    }

    /// Take one value of the attribute, from the entity `entity`.
    pub fn observe(&mut self, value: &Value, entity: &[Value]) {
        self.observe_spelled(value, entity, None);
    }

    /// [`Survey::observe`], a float measured and checked as `float_text` spells it (the
    /// source database's text of it, which both strategies write into a text column:
    /// [`crate::dialect::Types::float_text`]).
    pub fn observe_spelled(
        &mut self,
        value: &Value,
        entity: &[Value],
        float_text: Option<fn(f64) -> String>,
    ) {
        let text = match value {
            Value::Null => return,
            Value::Int(n) => {
                let text = n.to_string();
                self.float.rule_out(&text, entity);
                std::borrow::Cow::Owned(text)
            }
            Value::Float(f) => {
                // Already typed: stays a float, or text when mixed with other forms.
                let text = float_text.map_or_else(|| f.to_string(), |spell| spell(*f));
                self.measure(&text);
                self.values += 1;
                self.first_seen(&text, entity);
                for rung in self.exact_rungs() {
                    rung.rule_out(&text, entity);
                }
                // Checked against `pivot.types` as its text is: a SQLite REAL 27.85 declared
                // BIGINT was loaded as 28 (MariaDB) and as 27.9 in a DECIMAL(12,1).
                self.check_declared(&text, entity);
                return;
            }
            Value::Text(s) => {
                self.float.rule_out(s, entity);
                std::borrow::Cow::Borrowed(s.as_str())
            }
            Value::Bytes(b) | Value::TextBytes(b) => match std::str::from_utf8(b) {
                Ok(s) => {
                    self.float.rule_out(s, entity);
                    std::borrow::Cow::Owned(s.to_string())
                }
                Err(_) => {
                    let lossy = String::from_utf8_lossy(b).into_owned();
                    self.values += 1;
                    self.measure(&lossy);
                    self.max_bytes = self.max_bytes.max(b.len() as u64);
                    self.float.rule_out(&lossy, entity);
                    for rung in self.exact_rungs() {
                        rung.rule_out(&lossy, entity);
                    }
                    self.untyped
                        .get_or_insert_with(|| Sample::new(&lossy, entity));
                    return;
                }
            },
        };
        self.values += 1;
        self.measure(&text);
        self.first_seen(&text, entity);
        self.classify(&text, entity);
        self.check_declared(&text, entity);
    }

    /// The first value that does not convert exactly to the `pivot.types` kind.
    fn check_declared(&mut self, text: &str, entity: &[Value]) {
        if let Some(kind) = &self.declared {
            if self.misfit.is_none() && !converts(text, kind) {
                self.misfit = Some(Sample::new(text, entity));
            }
        }
    }

    fn first_seen(&mut self, text: &str, entity: &[Value]) {
        if self.first.is_none() {
            self.first = Some(Sample::new(text, entity));
        }
    }

    fn measure(&mut self, text: &str) {
        let bytes = text.len() as u64;
        self.max_bytes = self.max_bytes.max(bytes);
        self.min_bytes = Some(self.min_bytes.map_or(bytes, |m| m.min(bytes)));
        let chars = if text.is_ascii() {
            self.max_utf16 = self.max_utf16.max(bytes);
            bytes
        } else {
            self.max_utf16 = self.max_utf16.max(text.encode_utf16().count() as u64);
            text.chars().count() as u64
        };
        self.max_chars = self.max_chars.max(chars);
        self.min_chars = Some(self.min_chars.map_or(chars, |m| m.min(chars)));
    }

    fn exact_rungs(&mut self) -> [&mut Rung; 7] {
        [
            &mut self.int,
            &mut self.decimal,
            &mut self.date,
            &mut self.timestamp,
            &mut self.boolean,
            &mut self.number,
            &mut self.any_timestamp,
        ]
    }

    fn classify(&mut self, text: &str, entity: &[Value]) {
        let form = Form::of(text);
        if form == Form::None {
            self.untyped
                .get_or_insert_with(|| Sample::new(text, entity));
        } else {
            self.typed_values += 1;
        }
        match form {
            Form::Integer(n) => {
                let (lo, hi) = self.int_range.unwrap_or((n, n));
                self.int_range = Some((lo.min(n), hi.max(n)));
            }
            _ => self.int.rule_out(text, entity),
        }
        match form {
            Form::Integer(n) => {
                self.number_digits = self.number_digits.max(integer_digits(n));
            }
            Form::Decimal { digits, scale } => {
                self.number_digits = self.number_digits.max(digits);
                self.number_scale = self.number_scale.max(scale);
                self.number_fraction = true;
            }
            _ => self.number.rule_out(text, entity),
        }
        match form {
            Form::Timestamp { fraction, .. } => {
                self.any_timestamp_fraction = self.any_timestamp_fraction.max(fraction);
            }
            _ => self.any_timestamp.rule_out(text, entity),
        }
        match form {
            Form::Decimal { digits, scale } if self.decimal_scale.is_none_or(|s| s == scale) => {
                self.decimal_scale = Some(scale);
                self.decimal_digits = self.decimal_digits.max(digits);
            }
            _ => self.decimal.rule_out(text, entity),
        }
        if form != Form::Date {
            self.date.rule_out(text, entity);
        }
        match form {
            Form::Timestamp {
                fraction,
                trailing_zero: false,
            } if self.timestamp_fraction.is_none_or(|f| f == fraction) => {
                self.timestamp_fraction = Some(fraction);
            }
            _ => self.timestamp.rule_out(text, entity),
        }
        if form != Form::Boolean {
            self.boolean.rule_out(text, entity);
        }
    }

    /// [`Survey::decide_with`] the defaults of `pivot.infer`.
    pub fn decide(&self) -> (ColumnKind, String) {
        self.decide_with(Infer::default())
    }

    /// The kind every value observed converts to without loss (by value, or as its exact
    /// text with `numbers: text`), widened for the next load unless `widths: exact`, and why.
    pub fn decide_with(&self, infer: Infer) -> (ColumnKind, String) {
        if self.values == 0 {
            return (
                self.text_kind_with(infer),
                "text: no non-null values".into(),
            );
        }
        if self.float.alive() {
            return (
                ColumnKind::Float,
                "float: the source values are floating point".into(),
            );
        }
        if let Some(decided) = self.decide_number(infer) {
            return decided;
        }
        if self.date.alive() {
            return (ColumnKind::Date, "date: every value is YYYY-MM-DD".into());
        }
        let by_value = infer.numbers == InferNumbers::Value;
        if by_value && self.any_timestamp.alive() {
            let fraction = self.any_timestamp_fraction;
            return (
                ColumnKind::Timestamp { fraction },
                format!("timestamp({fraction}): every value is YYYY-MM-DD HH:MM:SS with at most {fraction} fractional digits"),
            );
        }
        if !by_value && self.timestamp.alive() {
            let fraction = self.timestamp_fraction.unwrap_or(0);
            return (
                ColumnKind::Timestamp { fraction },
                format!("timestamp({fraction}): every value is YYYY-MM-DD HH:MM:SS with {fraction} fractional digits"),
            );
        }
        if self.boolean.alive() {
            return (
                ColumnKind::Boolean,
                "boolean: every value is true or false".into(),
            );
        }
        // Whether the length is headroom depends on the dialect's text type: the plan says.
        (
            self.text_kind_with(infer),
            format!("text: {}", self.text_reason()),
        )
    }

    /// Integers, else decimals: by value (any scales, integers among them) or, with
    /// `numbers: text`, only with one scale and no integers, so every value prints back.
    fn decide_number(&self, infer: Infer) -> Option<(ColumnKind, String)> {
        if self.int.alive() {
            if let Some((lo, hi)) = self.int_range {
                let exact = integer_kind(lo, hi);
                if matches!(exact, ColumnKind::UnboundedText) {
                    return None;
                }
                let detail = format!("integers from {lo} to {hi}");
                let kind = match infer.widths {
                    InferWidths::Exact => exact.clone(),
                    InferWidths::Headroom => integer_headroom(&exact),
                };
                return Some((kind.clone(), widths_reason(&kind, &exact, infer, &detail)));
            }
        }
        let (digits, scale, detail) = match infer.numbers {
            InferNumbers::Value if self.number.alive() && self.number_fraction => (
                self.number_digits.max(1),
                self.number_scale,
                format!(
                    "numbers with at most {} integer and {} fractional digits{}",
                    self.number_digits.max(1),
                    self.number_scale,
                    because(&self.int.out, "not an integer")
                ),
            ),
            InferNumbers::Text if self.decimal.alive() => {
                let scale = self.decimal_scale?;
                (
                    self.decimal_digits.max(1),
                    scale,
                    format!(
                        "{scale} fractional digits in every value{}",
                        because(&self.int.out, "not an integer")
                    ),
                )
            }
            _ => return None,
        };
        let precision = digits + scale;
        if precision > MAX_DIGITS {
            return None;
        }
        let exact = ColumnKind::Decimal { precision, scale };
        let kind = match infer.widths {
            InferWidths::Exact => exact.clone(),
            InferWidths::Headroom => ColumnKind::Decimal {
                precision: precision.clamp(DECIMAL_HEADROOM, MAX_DIGITS),
                scale,
            },
        };
        Some((kind.clone(), widths_reason(&kind, &exact, infer, &detail)))
    }

    /// Text bounded by the longest value, rounded up to a step unless `widths: exact`.
    pub fn text_kind_with(&self, infer: Infer) -> ColumnKind {
        match infer.widths {
            InferWidths::Exact => self.text_kind(),
            InferWidths::Headroom => ColumnKind::Text {
                chars: text_headroom(self.max_chars),
                utf16: text_headroom(self.max_utf16),
                bytes: self.max_bytes,
            },
        }
    }

    /// Whether every value is an integer of at most 64 bits written canonically (what a
    /// database's numeric conversion keeps as its text).
    pub fn integers_only(&self) -> bool {
        self.values > 0
            && self.int.alive()
            && self
                .int_range
                .is_some_and(|(lo, hi)| lo >= i128::from(i64::MIN) && hi <= i128::from(i64::MAX))
    }

    /// A value a numeric conversion would not keep as written: the first that is not an
    /// integer, else the first value.
    pub fn changed_sample(&self) -> Option<&Sample> {
        self.int.out.as_ref().or(self.first.as_ref())
    }

    /// Whether every value was already a floating-point number in the source.
    pub fn floats_only(&self) -> bool {
        self.values > 0 && self.float.alive()
    }

    /// Text bounded by the longest value.
    pub fn text_kind(&self) -> ColumnKind {
        ColumnKind::Text {
            chars: self.max_chars,
            utf16: self.max_utf16,
            bytes: self.max_bytes,
        }
    }

    /// Why no typed rung survived: a value of no typed form, else two values of different
    /// (or differently shaped) forms.
    fn text_reason(&self) -> String {
        if let Some(s) = &self.untyped {
            return s.to_string();
        }
        let first = self
            .first
            .as_ref()
            .map(Sample::to_string)
            .unwrap_or_default();
        // The rung the first value belonged to was ruled out by a later value.
        let later = [
            &self.int,
            &self.decimal,
            &self.date,
            &self.timestamp,
            &self.boolean,
            &self.float,
        ]
        .into_iter()
        .filter_map(|r| r.out.as_ref())
        .find(|s| Some(*s) != self.first.as_ref());
        match later {
            Some(other) => format!("{first} and {other} have no one type"),
            None => first,
        }
    }
}

fn because(out: &Option<Sample>, what: &str) -> String {
    out.as_ref()
        .map(|s| format!(" ({s} is {what})"))
        .unwrap_or_default()
}

/// The least DECIMAL precision `widths: headroom` declares.
const DECIMAL_HEADROOM: u32 = 18;

/// VARCHAR / NVARCHAR lengths `widths: headroom` rounds up to; longer text keeps its length.
const TEXT_STEPS: [u64; 8] = [32, 64, 128, 255, 512, 1024, 2048, 4000];

fn text_headroom(n: u64) -> u64 {
    TEXT_STEPS.into_iter().find(|&s| s >= n).unwrap_or(n)
}

/// `widths: headroom`: INTEGER at least, BIGINT where a value needs it, DECIMAL(38,0) beyond.
fn integer_headroom(exact: &ColumnKind) -> ColumnKind {
    match exact {
        ColumnKind::SmallInt => ColumnKind::Int,
        ColumnKind::Decimal { .. } => ColumnKind::Decimal {
            precision: MAX_DIGITS,
            scale: 0,
        },
        other => other.clone(),
    }
}

/// `int, headroom (exact: smallint): integers from 1 to 6771`, `smallint, exact: …`.
fn widths_reason(kind: &ColumnKind, exact: &ColumnKind, infer: Infer, detail: &str) -> String {
    let by_value = match (kind, infer.numbers) {
        (ColumnKind::Decimal { scale, .. }, InferNumbers::Value) if *scale > 0 => ", by value",
        _ => "",
    };
    match infer.widths {
        InferWidths::Exact => format!("{}, exact{by_value}: {detail}", kind_name(kind)),
        InferWidths::Headroom if kind == exact => {
            format!("{}, headroom{by_value}: {detail}", kind_name(kind))
        }
        InferWidths::Headroom => format!(
            "{}, headroom (exact: {}){by_value}: {detail}",
            kind_name(kind),
            kind_name(exact)
        ),
    }
}

fn kind_name(kind: &ColumnKind) -> String {
    match kind {
        ColumnKind::SmallInt => "smallint".into(),
        ColumnKind::Int => "int".into(),
        ColumnKind::BigInt => "bigint".into(),
        ColumnKind::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        _ => "text".into(),
    }
}

/// Decimal digits of `n` (1 for 0), counted without printing it: this runs for every
/// integer value discovery reads.
fn integer_digits(n: i128) -> u32 {
    n.unsigned_abs().checked_ilog10().map_or(1, |log| log + 1)
}

/// The integer type for values in `lo..=hi`; DECIMAL(p,0) beyond BIGINT.
fn integer_kind(lo: i128, hi: i128) -> ColumnKind {
    let within = |min: i128, max: i128| lo >= min && hi <= max;
    if within(i16::MIN.into(), i16::MAX.into()) {
        ColumnKind::SmallInt
    } else if within(i32::MIN.into(), i32::MAX.into()) {
        ColumnKind::Int
    } else if within(i64::MIN.into(), i64::MAX.into()) {
        ColumnKind::BigInt
    } else {
        let precision = integer_digits(lo).max(integer_digits(hi));
        if precision <= MAX_DIGITS {
            ColumnKind::Decimal {
                precision,
                scale: 0,
            }
        } else {
            ColumnKind::UnboundedText
        }
    }
}

/// A `pivot.types` type as a ladder kind where the ladder models it (so every value can be
/// checked before any DDL), else [`ColumnKind::Declared`].
pub fn parse_declared(ty: &str) -> ColumnKind {
    let (base, arg) = crate::dialect::type_parts(ty);
    let args: Vec<u32> = ty
        .split_once('(')
        .map(|(_, a)| {
            a.trim_end_matches(')')
                .split(',')
                .filter_map(|p| p.trim().parse().ok())
                .collect()
        })
        .unwrap_or_default();
    match base.as_str() {
        "smallint" | "int2" => ColumnKind::SmallInt,
        "int" | "integer" | "int4" => ColumnKind::Int,
        "bigint" | "int8" => ColumnKind::BigInt,
        "decimal" | "numeric" if args.len() == 2 && args[1] <= args[0] => ColumnKind::Decimal {
            precision: args[0],
            scale: args[1],
        },
        "date" => ColumnKind::Date,
        "timestamp" | "datetime" | "datetime2" => ColumnKind::Timestamp {
            fraction: arg.map_or(0, |n| n as u32).min(6),
        },
        "boolean" | "bool" => ColumnKind::Boolean,
        "varchar" | "character varying" if arg.is_some() => ColumnKind::Text {
            chars: arg.map_or(u64::MAX, |n| n as u64),
            utf16: u64::MAX,
            bytes: u64::MAX,
        },
        "nvarchar" if arg.is_some() => ColumnKind::Text {
            chars: u64::MAX,
            utf16: arg.map_or(u64::MAX, |n| n as u64),
            bytes: u64::MAX,
        },
        _ => ColumnKind::Declared(ty.to_string()),
    }
}

/// Whether `text` converts exactly to `kind`, as `pivot.types` demands of every value: the
/// ladder's form, within the type's range and digits (a decimal may have fewer fractional
/// digits than the scale; a timestamp fewer than its precision). Unmodelled types pass.
pub fn converts(text: &str, kind: &ColumnKind) -> bool {
    let form = Form::of(text);
    let int_within =
        |min: i128, max: i128| matches!(form, Form::Integer(n) if n >= min && n <= max);
    match kind {
        ColumnKind::SmallInt => int_within(i16::MIN.into(), i16::MAX.into()),
        ColumnKind::Int => int_within(i32::MIN.into(), i32::MAX.into()),
        ColumnKind::BigInt => int_within(i64::MIN.into(), i64::MAX.into()),
        ColumnKind::Decimal { precision, scale } => match form {
            Form::Integer(n) => n == 0 || integer_digits(n) <= precision - scale,
            Form::Decimal { digits, scale: s } => {
                s <= *scale
                    && (digits <= precision - scale
                        || text.trim_start_matches('-').starts_with("0."))
            }
            _ => false,
        },
        ColumnKind::Date => form == Form::Date,
        ColumnKind::Timestamp { fraction } => {
            matches!(form, Form::Timestamp { fraction: f, trailing_zero: false } if f <= *fraction)
        }
        ColumnKind::Boolean => form == Form::Boolean,
        ColumnKind::Text { chars, utf16, .. } => {
            text.chars().count() as u64 <= *chars && text.encode_utf16().count() as u64 <= *utf16
        }
        ColumnKind::Float | ColumnKind::UnboundedText | ColumnKind::Declared(_) => true,
    }
}

/// The stream's conversion of a chosen cell to what the load binds for `kind`: integers as
/// integers; every other kind as its text, which the backend encodes for the column's type
/// (the forms are canonical, so that cannot fail or change the value).
pub fn convert(value: Value, kind: &ColumnKind) -> Value {
    match value {
        Value::Text(ref s) if kind.is_integer() => s.parse().map_or(value, Value::Int),
        Value::Bytes(ref b) if kind.is_integer() => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse().ok())
            .map_or(value, Value::Int),
        other => other,
    }
}

#[cfg(test)]
mod tests;
