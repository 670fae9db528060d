//! Binary `COPY` encodings of the typed columns `column_type: infer` declares (DATE,
//! TIMESTAMP, NUMERIC), from the canonical text the ladder accepted, so a typed stream load
//! stays one binary COPY instead of falling back to INSERTs with text parameters.

use bytes::{BufMut, BytesMut};
use tokio_postgres::types::Type;

/// Days from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
const PG_EPOCH_DAYS: i64 = 10_957;

/// Write `text` as `ty`'s binary form; None when it is not in the canonical form.
/// A date or timestamp also as PostgreSQL prints an entity key of that type: `infinity`,
/// `-infinity` (its binary form is the type's largest and smallest value) and `… BC`.
pub(super) fn encode(ty: &Type, text: &str, out: &mut BytesMut) -> Option<()> {
    match (ty, text) {
        (&Type::DATE, "infinity") => out.put_i32(i32::MAX),
        (&Type::DATE, "-infinity") => out.put_i32(i32::MIN),
        (&Type::TIMESTAMP, "infinity") => out.put_i64(i64::MAX),
        (&Type::TIMESTAMP, "-infinity") => out.put_i64(i64::MIN),
        (&Type::DATE, _) => out.put_i32(i32::try_from(date_days(text)?).ok()?),
        (&Type::TIMESTAMP, _) => out.put_i64(timestamp_micros(text)?),
        (&Type::NUMERIC, _) => numeric(text, out)?,
        _ => return None,
    }
    Some(())
}

fn number(text: &str) -> Option<i64> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// `text` without PostgreSQL's ` BC` suffix, and whether it had one.
fn era(text: &str) -> (&str, bool) {
    match text.strip_suffix(" BC") {
        Some(rest) => (rest, true),
        None => (text, false),
    }
}

/// `YYYY-MM-DD[ BC]` as days since 2000-01-01.
fn date_days(text: &str) -> Option<i64> {
    let (date, bc) = era(text);
    civil_days(date, bc)
}

/// `YYYY-MM-DD` of the era `bc` as days since 2000-01-01 (proleptic Gregorian, Hinnant's
/// days_from_civil; 1 BC is the year 0).
fn civil_days(text: &str, bc: bool) -> Option<i64> {
    let mut parts = text.splitn(3, '-');
    let (y, m, d) = (
        number(parts.next()?)?,
        number(parts.next()?)?,
        number(parts.next()?)?,
    );
    let y = if bc { 1 - y } else { y };
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468 - PG_EPOCH_DAYS)
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff][ BC]` as microseconds since 2000-01-01 00:00:00.
fn timestamp_micros(text: &str) -> Option<i64> {
    let (text, bc) = era(text);
    let (date, clock) = text.split_once(' ')?;
    let (hms, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let mut parts = hms.splitn(3, ':');
    let (h, m, s) = (
        number(parts.next()?)?,
        number(parts.next()?)?,
        number(parts.next()?)?,
    );
    if fraction.len() > 6 {
        return None;
    }
    let micros = if fraction.is_empty() {
        0
    } else {
        number(fraction)? * 10i64.pow(6 - fraction.len() as u32)
    };
    Some(civil_days(date, bc)? * 86_400_000_000 + ((h * 60 + m) * 60 + s) * 1_000_000 + micros)
}

/// `-?digits[.digits]` as PostgreSQL's binary NUMERIC: base-10000 digit groups aligned on
/// the decimal point, the weight of the first group, the sign and the display scale.
fn numeric(text: &str, out: &mut BytesMut) -> Option<()> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !all_digits(int) || !all_digits(frac) {
        return None;
    }
    let int_pad = (4 - int.len() % 4) % 4;
    let frac_pad = (4 - frac.len() % 4) % 4;
    let digits: String = "0".repeat(int_pad) + int + frac + &"0".repeat(frac_pad);
    let mut groups: Vec<i16> = digits
        .as_bytes()
        .chunks(4)
        .map(|c| c.iter().fold(0i16, |n, d| n * 10 + i16::from(d - b'0')))
        .collect();
    let mut weight = ((int.len() + int_pad) / 4) as i16 - 1;
    let leading = groups.iter().take_while(|&&g| g == 0).count();
    groups.drain(..leading);
    weight -= leading as i16;
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        weight = 0;
    }
    out.put_i16(i16::try_from(groups.len()).ok()?);
    out.put_i16(weight);
    out.put_u16(if negative && !groups.is_empty() {
        0x4000
    } else {
        0
    });
    out.put_u16(u16::try_from(frac.len()).ok()?);
    groups.iter().for_each(|g| out.put_i16(*g));
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric_bytes(text: &str) -> Vec<i16> {
        let mut out = BytesMut::new();
        numeric(text, &mut out).expect("numeric");
        out.chunks(2)
            .map(|c| i16::from_be_bytes([c[0], c[1]]))
            .collect()
    }

    #[test]
    fn dates_and_timestamps_count_from_2000() {
        assert_eq!(date_days("2000-01-01"), Some(0));
        assert_eq!(date_days("1999-12-31"), Some(-1));
        assert_eq!(date_days("2024-03-01"), Some(8_826));
        assert_eq!(
            timestamp_micros("2000-01-02 00:00:01.5"),
            Some(86_400_000_000 + 1_500_000)
        );
        // 1 BC is the year 0: its last day is the day before 1 AD's first.
        assert_eq!(
            date_days("0001-12-31 BC").map(|d| d + 1),
            date_days("0001-01-01")
        );
        assert_eq!(
            timestamp_micros("0044-03-15 12:00:00 BC"),
            date_days("0044-03-15 BC").map(|d| d * 86_400_000_000 + 43_200_000_000)
        );
        let mut out = BytesMut::new();
        encode(&Type::TIMESTAMP, "-infinity", &mut out).expect("-infinity");
        encode(&Type::DATE, "infinity", &mut out).expect("infinity");
        assert_eq!(out.as_ref()[..8], i64::MIN.to_be_bytes());
        assert_eq!(out.as_ref()[8..], i32::MAX.to_be_bytes());
    }

    #[test]
    fn numerics_group_by_four_digits_around_the_point() {
        // ndigits, weight, sign, dscale, digits…
        assert_eq!(numeric_bytes("0.40"), vec![1, -1, 0, 2, 4000]);
        assert_eq!(numeric_bytes("12345.5"), vec![3, 1, 0, 1, 1, 2345, 5000]);
        assert_eq!(numeric_bytes("-7"), vec![1, 0, 0x4000, 0, 7]);
        assert_eq!(numeric_bytes("0"), vec![0, 0, 0, 0]);
        assert_eq!(numeric_bytes("10000"), vec![1, 1, 0, 0, 1]);
    }
}
