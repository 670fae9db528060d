//! The typed forms of the ladder: exactly the canonical spellings a database prints back,
//! recognised from a value's text (see the parent module for why each rule exists).

use super::MAX_DIGITS;

/// The typed form a text has, if any: exactly the canonical spellings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    Integer(i128),
    /// Integer digits (at least 1: `0.40` has one) and fractional digits (at least 1).
    Decimal {
        digits: u32,
        scale: u32,
    },
    Date,
    /// Fractional digits (0–6), and whether the last is a zero (`.50`): the same instant as
    /// `.5`, but not the text PostgreSQL prints back.
    Timestamp {
        fraction: u32,
        trailing_zero: bool,
    },
    Boolean,
    None,
}

impl Form {
    pub(super) fn of(text: &str) -> Form {
        if let Some(form) = number_form(text) {
            return form;
        }
        if text == "true" || text == "false" {
            return Form::Boolean;
        }
        let b = text.as_bytes();
        if b.len() == 10 && is_date(b) {
            return Form::Date;
        }
        if b.len() >= 19 && is_date(&b[..10]) && b[10] == b' ' && is_clock(&b[11..19]) {
            let rest = &b[19..];
            if rest.is_empty() {
                return Form::Timestamp {
                    fraction: 0,
                    trailing_zero: false,
                };
            }
            let frac = &rest[1.min(rest.len())..];
            if rest[0] == b'.'
                && (1..=6).contains(&frac.len())
                && frac.iter().all(u8::is_ascii_digit)
            {
                return Form::Timestamp {
                    fraction: frac.len() as u32,
                    trailing_zero: frac.last() == Some(&b'0'),
                };
            }
        }
        Form::None
    }
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, not negative zero, at most 38 digits.
fn number_form(text: &str) -> Option<Form> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let negative = unsigned.len() != text.len();
    let (int, frac) = match unsigned.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (unsigned, None),
    };
    let digits_only = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    if !digits_only(int) || (int.len() > 1 && int.starts_with('0')) {
        return None;
    }
    let all_zero = |s: &str| s.bytes().all(|c| c == b'0');
    match frac {
        None => {
            if negative && all_zero(int) || int.len() as u32 > MAX_DIGITS {
                return None;
            }
            text.parse::<i128>().ok().map(Form::Integer)
        }
        Some(f) => {
            let (digits, scale) = (int.len() as u32, f.len() as u32);
            if !digits_only(f)
                || digits + scale > MAX_DIGITS
                || (negative && all_zero(int) && all_zero(f))
            {
                return None;
            }
            Some(Form::Decimal { digits, scale })
        }
    }
}

/// `YYYY-MM-DD`, a real calendar day, year 1000–9999 (MariaDB's DATE range).
fn is_date(b: &[u8]) -> bool {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(&b[0..4]), digits(&b[5..7]), digits(&b[8..10]))
    else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1000..=9999).contains(&y) && (1..=days).contains(&d)
}

/// `HH:MM:SS`, 00:00:00–23:59:59.
fn is_clock(b: &[u8]) -> bool {
    if b.len() != 8 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    matches!(
        (digits(&b[0..2]), digits(&b[3..5]), digits(&b[6..8])),
        (Some(h), Some(m), Some(s)) if h < 24 && m < 60 && s < 60
    )
}

fn digits(b: &[u8]) -> Option<u32> {
    b.iter().try_fold(0u32, |n, c| {
        c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
    })
}
