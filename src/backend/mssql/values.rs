//! Values across the TDS boundary: tiberius's [`ColumnData`] to eavpivot's [`Value`] and back,
//! and result-column types rendered as T-SQL type names CREATE TABLE can reuse.
//!
//! Dates and times are rendered as ISO text (tiberius is built without chrono/time), decimals
//! as exact decimal text: a value is never rounded on its way through a pivot.

use std::borrow::Cow;

use tiberius::ColumnData;

use crate::value::Value;

/// One cell read from SQL Server.
pub fn from_column(data: ColumnData<'static>) -> Value {
    match data {
        ColumnData::U8(v) => v.map_or(Value::Null, |n| Value::Int(n.into())),
        ColumnData::I16(v) => v.map_or(Value::Null, |n| Value::Int(n.into())),
        ColumnData::I32(v) => v.map_or(Value::Null, |n| Value::Int(n.into())),
        ColumnData::I64(v) => v.map_or(Value::Null, Value::Int),
        ColumnData::F32(v) => v.map_or(Value::Null, |f| Value::Float(f.into())),
        ColumnData::F64(v) => v.map_or(Value::Null, Value::Float),
        ColumnData::Bit(v) => v.map_or(Value::Null, |b| Value::Int(b.into())),
        ColumnData::String(v) => v.map_or(Value::Null, |s| Value::Text(s.into_owned())),
        ColumnData::Guid(v) => v.map_or(Value::Null, |g| Value::Text(g.to_string().to_uppercase())),
        ColumnData::Binary(v) => v.map_or(Value::Null, |b| Value::Bytes(b.into_owned())),
        ColumnData::Numeric(v) => v.map_or(Value::Null, |n| Value::Text(n.to_string())),
        ColumnData::Xml(v) => v.map_or(Value::Null, |x| Value::Text(x.to_string())),
        ColumnData::DateTime(v) => v.map_or(Value::Null, |d| {
            // Days since 1900-01-01 and 1/300 s ticks, rounded to the millisecond as SQL
            // Server prints them (2 ticks: .007, not .006).
            let ms = (u64::from(d.seconds_fragments()) * 10 + 1) / 3;
            Value::Text(format!(
                "{} {}",
                date_1900(i64::from(d.days())),
                clock(ms * 10_000, 3)
            ))
        }),
        ColumnData::SmallDateTime(v) => v.map_or(Value::Null, |d| {
            let minutes = u64::from(d.seconds_fragments());
            Value::Text(format!(
                "{} {}",
                date_1900(i64::from(d.days())),
                clock(minutes * 600_000_000, 0)
            ))
        }),
        ColumnData::Date(v) => {
            v.map_or(Value::Null, |d| Value::Text(date_0001(i64::from(d.days()))))
        }
        ColumnData::Time(v) => v.map_or(Value::Null, |t| Value::Text(time_text(t))),
        ColumnData::DateTime2(v) => v.map_or(Value::Null, |d| {
            Value::Text(format!(
                "{} {}",
                date_0001(i64::from(d.date().days())),
                time_text(d.time())
            ))
        }),
        ColumnData::DateTimeOffset(v) => v.map_or(Value::Null, |d| {
            // Stored as UTC plus the offset in minutes; shown as local time with the offset.
            let dt = d.datetime2();
            let offset = i64::from(d.offset());
            let scale = dt.time().scale();
            let per_minute = 60 * 10i64.pow(u32::from(scale));
            let total = i64::from(dt.date().days()) * 1440 * per_minute
                + i64::try_from(dt.time().increments()).unwrap_or(0)
                + offset * per_minute;
            let day_len = 1440 * per_minute;
            let (days, incs) = (total.div_euclid(day_len), total.rem_euclid(day_len));
            let sign = if offset < 0 { '-' } else { '+' };
            Value::Text(format!(
                "{} {} {sign}{:02}:{:02}",
                date_0001(days),
                clock(scaled_to_100ns(incs as u64, scale), scale),
                offset.abs() / 60,
                offset.abs() % 60
            ))
        }),
    }
}

/// A bind parameter for a cell going to SQL Server.
pub fn to_column(value: &Value) -> ColumnData<'static> {
    match value {
        Value::Null => ColumnData::String(None),
        Value::Int(n) => ColumnData::I64(Some(*n)),
        Value::Float(f) => ColumnData::F64(Some(*f)),
        Value::Text(s) => ColumnData::String(Some(Cow::Owned(s.clone()))),
        Value::Bytes(b) | Value::TextBytes(b) => ColumnData::Binary(Some(Cow::Owned(b.clone()))),
    }
}

/// `int` / `nvarchar(50)` as `sp_describe_first_result_set` reports it → `INT` / `NVARCHAR(50)`.
pub fn type_name(system_type_name: &str) -> String {
    system_type_name.trim().to_uppercase()
}

/// [`type_name`], with the length taken from `max_length` (bytes; -1 for MAX) where the name
/// lacks it: Babelfish reports `nvarchar` for an `NVARCHAR(50)` column, and a bare
/// `NVARCHAR` in CREATE TABLE means `NVARCHAR(1)`. SQL Server always names the length.
pub fn declared_type(system_type_name: &str, max_length: Option<i64>) -> String {
    let name = type_name(system_type_name);
    let bytes_per_char = match name.as_str() {
        "NVARCHAR" | "NCHAR" => 2,
        "VARCHAR" | "CHAR" | "VARBINARY" | "BINARY" => 1,
        _ => return name,
    };
    match max_length {
        Some(-1) => format!("{name}(MAX)"),
        Some(n) if n > 0 => format!("{name}({})", n / bytes_per_char),
        _ => name,
    }
}

fn time_text(t: tiberius::time::Time) -> String {
    clock(scaled_to_100ns(t.increments(), t.scale()), t.scale())
}

fn scaled_to_100ns(increments: u64, scale: u8) -> u64 {
    if scale >= 7 {
        increments / 10u64.pow(u32::from(scale - 7))
    } else {
        increments * 10u64.pow(u32::from(7 - scale))
    }
}

/// `hh:mm:ss[.fffffff]` from 100 ns units, with `digits` fractional digits.
fn clock(hundred_ns: u64, digits: u8) -> String {
    let secs = hundred_ns / 10_000_000;
    let frac = hundred_ns % 10_000_000;
    let base = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if digits == 0 {
        return base;
    }
    let digits = usize::from(digits.min(7));
    format!("{base}.{}", &format!("{frac:07}")[..digits])
}

fn date_1900(days: i64) -> String {
    // 1900-01-01 is day 693_595 counted from 0001-01-01.
    date_0001(days + 693_595)
}

/// `yyyy-mm-dd` for days since 0001-01-01 (proleptic Gregorian).
fn date_0001(days: i64) -> String {
    // Howard Hinnant's civil_from_days, shifted from the 1970 epoch.
    let z = days - 719_162 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_render_as_iso() {
        assert_eq!(date_0001(0), "0001-01-01");
        assert_eq!(date_0001(719_162), "1970-01-01");
        assert_eq!(date_1900(0), "1900-01-01");
        assert_eq!(date_1900(45_000), "2023-03-17");
        assert_eq!(clock(37_235_000_000, 3), "01:02:03.500");
    }

    #[test]
    fn datetime_milliseconds_round_as_sql_server_prints_them() {
        // 1/300 s ticks: 1, 2 and 299 ticks are .003, .007 and .997 on SQL Server.
        let at = |ticks: u32| {
            let cell = ColumnData::DateTime(Some(tiberius::time::DateTime::new(
                45_000,
                36_672 * 300 + ticks,
            )));
            from_column(cell)
        };
        assert_eq!(at(1), Value::Text("2023-03-17 10:11:12.003".into()));
        assert_eq!(at(2), Value::Text("2023-03-17 10:11:12.007".into()));
        assert_eq!(at(299), Value::Text("2023-03-17 10:11:12.997".into()));
    }

    #[test]
    fn cells_map_both_ways() {
        assert_eq!(from_column(ColumnData::I32(Some(7))), Value::Int(7));
        assert_eq!(from_column(ColumnData::String(None)), Value::Null);
        assert_eq!(from_column(ColumnData::Bit(Some(true))), Value::Int(1));
        let n = tiberius::numeric::Numeric::new_with_scale(-12345, 2);
        assert_eq!(
            from_column(ColumnData::Numeric(Some(n))),
            Value::Text("-123.45".into())
        );
        assert!(matches!(to_column(&Value::Null), ColumnData::String(None)));
        assert_eq!(type_name("nvarchar(50)"), "NVARCHAR(50)");
        assert_eq!(declared_type("nvarchar(50)", Some(100)), "NVARCHAR(50)");
        assert_eq!(declared_type("nvarchar", Some(100)), "NVARCHAR(50)");
        assert_eq!(declared_type("varchar", Some(-1)), "VARCHAR(MAX)");
        assert_eq!(declared_type("int", Some(4)), "INT");
        assert_eq!(declared_type("nvarchar", None), "NVARCHAR");
    }
}
