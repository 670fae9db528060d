//! Decoding of client-sent TYPE_INFO and values (RPC parameters and bulk-load
//! rows, MS-TDS 2.2.5.4-2.2.5.6), rendered as text for the record.

use std::io;

use super::script::Value;
use super::wire::{from_utf16, invalid, Reader};

/// How a value of a type is framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Framing {
    /// Fixed width, no length prefix (INT4, FLT8, ...); 0 for the NULL type.
    Fixed(usize),
    /// A u8 length prefix; length 0 is NULL.
    ByteLen,
    /// A u16 length prefix; 0xFFFF is NULL.
    UShortLen,
    /// PLP chunks (the MAX types and XML).
    Plp,
}

/// A decoded TYPE_INFO.
#[derive(Debug, Clone, Copy)]
pub struct TypeInfo {
    ty: u8,
    framing: Framing,
    /// The maximum length in bytes the TYPE_INFO declares (0xFFFF for MAX),
    /// or the width of a fixed-length type.
    max_len: u16,
    /// Precision of DECIMAL/NUMERIC.
    precision: u8,
    /// Scale of DECIMAL/NUMERIC and of TIME/DATETIME2/DATETIMEOFFSET.
    scale: u8,
}

fn fixed_len(ty: u8) -> Option<usize> {
    Some(match ty {
        0x1F => 0,                      // NULLTYPE
        0x30 | 0x32 => 1,               // TINYINT, BIT
        0x34 => 2,                      // SMALLINT
        0x38 | 0x3A | 0x3B | 0x7A => 4, // INT, SMALLDATETIME, REAL, SMALLMONEY
        0x3C | 0x3D | 0x3E | 0x7F => 8, // MONEY, DATETIME, FLOAT, BIGINT
        _ => return None,
    })
}

impl TypeInfo {
    pub fn decode(r: &mut Reader<'_>) -> io::Result<TypeInfo> {
        let ty = r.u8()?;
        let (mut scale, mut precision, mut max_len) = (0, 0, 0);
        let framing = if let Some(n) = fixed_len(ty) {
            max_len = n as u16;
            Framing::Fixed(n)
        } else {
            match ty {
                // GUID, INTN, BITN, FLTN, MONEYN, DATETIMN: max length byte.
                0x24 | 0x26 | 0x68 | 0x6D | 0x6E | 0x6F => {
                    max_len = u16::from(r.u8()?);
                    Framing::ByteLen
                }
                // DECIMALN, NUMERICN (and the legacy DECIMAL/NUMERIC).
                0x6A | 0x6C | 0x37 | 0x3F => {
                    max_len = u16::from(r.u8()?);
                    precision = r.u8()?;
                    scale = r.u8()?;
                    Framing::ByteLen
                }
                0x28 => Framing::ByteLen, // DATEN
                // TIMEN, DATETIME2N, DATETIMEOFFSETN: scale byte.
                0x29..=0x2B => {
                    scale = r.u8()?;
                    Framing::ByteLen
                }
                // BIGVARBINARY, BIGBINARY (no collation).
                0xA5 | 0xAD => {
                    max_len = r.u16()?;
                    ushort_or_plp(max_len)
                }
                // BIGVARCHAR, BIGCHAR, NVARCHAR, NCHAR (with collation).
                0xA7 | 0xAF | 0xE7 | 0xEF => {
                    max_len = r.u16()?;
                    r.bytes(5)?;
                    ushort_or_plp(max_len)
                }
                0xF1 => {
                    // XML: optional schema info.
                    if r.u8()? != 0 {
                        r.b_varchar()?;
                        r.b_varchar()?;
                        r.us_varchar()?;
                    }
                    Framing::Plp
                }
                other => {
                    return Err(invalid(format!(
                        "unsupported TYPE_INFO 0x{other:02X} (text/ntext/image, sql_variant, UDT and TVP are not decoded)"
                    )))
                }
            }
        };
        Ok(TypeInfo {
            ty,
            framing,
            max_len,
            precision,
            scale,
        })
    }

    /// The type as MS-TDS 2.2.5.4 names it, with its length in bytes where it
    /// has one (`INT4`, `INTN(8)`, `NVARCHAR(max)`, `DECIMALN(10,2)`).
    pub fn describe(&self) -> String {
        let sized = |name: &str| match self.max_len {
            0xFFFF => format!("{name}(max)"),
            n => format!("{name}({n})"),
        };
        match self.ty {
            0x1F => "NULL".into(),
            0x30 => "INT1".into(),
            0x32 => "BIT".into(),
            0x34 => "INT2".into(),
            0x38 => "INT4".into(),
            0x7F => "INT8".into(),
            0x3A => "DATETIM4".into(),
            0x3B => "FLT4".into(),
            0x3C => "MONEY".into(),
            0x3D => "DATETIME".into(),
            0x3E => "FLT8".into(),
            0x7A => "MONEY4".into(),
            0x24 => "GUID".into(),
            0x26 => sized("INTN"),
            0x68 => "BITN".into(),
            0x6D => sized("FLTN"),
            0x6E => sized("MONEYN"),
            0x6F => sized("DATETIMN"),
            0x6A | 0x37 => format!("DECIMALN({},{})", self.precision, self.scale),
            0x6C | 0x3F => format!("NUMERICN({},{})", self.precision, self.scale),
            0x28 => "DATEN".into(),
            0x29 => format!("TIMEN({})", self.scale),
            0x2A => format!("DATETIME2N({})", self.scale),
            0x2B => format!("DATETIMEOFFSETN({})", self.scale),
            0xA5 => sized("BIGVARBIN"),
            0xAD => sized("BIGBINARY"),
            0xA7 => sized("BIGVARCHR"),
            0xAF => sized("BIGCHAR"),
            0xE7 => sized("NVARCHAR"),
            0xEF => sized("NCHAR"),
            0xF1 => "XML".into(),
            other => format!("0x{other:02X}"),
        }
    }

    /// Reads one value of this type as a typed [`Value`] (`None` = NULL):
    /// integers as `Int`, bits as `Bit`, floats as `Float`, character data as
    /// `Str`, anything else as `Str` of its [`TypeInfo::read_value`] text.
    pub fn read_typed(&self, r: &mut Reader<'_>) -> io::Result<Option<Value>> {
        let Some(d) = self.read_raw(r)? else {
            return Ok(None);
        };
        let width = |ok: &[usize]| {
            if ok.contains(&d.len()) {
                Ok(())
            } else {
                Err(invalid(format!(
                    "a {} value of {} bytes",
                    self.describe(),
                    d.len()
                )))
            }
        };
        Ok(Some(match self.ty {
            0x30 => Value::Int(i64::from(d[0])), // tinyint is unsigned
            0x26 if d.len() == 1 => Value::Int(i64::from(d[0])),
            0x34 | 0x38 | 0x7F | 0x26 => {
                width(&[2, 4, 8])?;
                Value::Int(le_int(&d) as i64)
            }
            0x32 | 0x68 => {
                width(&[1])?;
                Value::Bit(d[0] != 0)
            }
            0x3B | 0x6D if d.len() == 4 => Value::Float(f64::from(f32::from_le_bytes(first(&d)))),
            0x3E | 0x6D => {
                width(&[8])?;
                Value::Float(f64::from_le_bytes(first(&d)))
            }
            _ => Value::Str(render(self.ty, self.scale, &d)),
        }))
    }

    /// Reads one value of this type and renders it as text (`None` = NULL).
    pub fn read_value(&self, r: &mut Reader<'_>) -> io::Result<Option<String>> {
        Ok(self
            .read_raw(r)?
            .map(|data| render(self.ty, self.scale, &data)))
    }

    /// The bytes of one value as framed on the wire (`None` = NULL).
    fn read_raw(&self, r: &mut Reader<'_>) -> io::Result<Option<Vec<u8>>> {
        Ok(Some(match self.framing {
            Framing::Fixed(0) => return Ok(None),
            Framing::Fixed(n) => r.bytes(n)?.to_vec(),
            Framing::ByteLen => match r.u8()? {
                0 => return Ok(None),
                n => r.bytes(usize::from(n))?.to_vec(),
            },
            Framing::UShortLen => match r.u16()? {
                0xFFFF => return Ok(None),
                n => r.bytes(usize::from(n))?.to_vec(),
            },
            Framing::Plp => return read_plp(r),
        }))
    }
}

fn ushort_or_plp(max: u16) -> Framing {
    if max == 0xFFFF {
        Framing::Plp
    } else {
        Framing::UShortLen
    }
}

fn read_plp(r: &mut Reader<'_>) -> io::Result<Option<Vec<u8>>> {
    if r.u64()? == u64::MAX {
        return Ok(None);
    }
    let mut data = Vec::new();
    loop {
        let n = r.u32()? as usize;
        if n == 0 {
            return Ok(Some(data));
        }
        data.extend_from_slice(r.bytes(n)?);
    }
}

fn le_int(data: &[u8]) -> i128 {
    let mut v: i128 = 0;
    for (i, b) in data.iter().enumerate().take(16) {
        v |= i128::from(*b) << (8 * i);
    }
    // Sign-extend fixed-width signed integers.
    if let Some(&last) = data.last() {
        if data.len() < 16 && last & 0x80 != 0 {
            v -= 1i128 << (8 * data.len());
        }
    }
    v
}

fn le_uint(data: &[u8]) -> u128 {
    data.iter()
        .enumerate()
        .take(16)
        .fold(0u128, |v, (i, b)| v | u128::from(*b) << (8 * i))
}

fn with_scale(digits: u128, scale: u8, negative: bool) -> String {
    let s = digits.to_string();
    let scale = usize::from(scale);
    let body = if scale == 0 {
        s
    } else {
        let padded = format!("{s:0>width$}", width = scale + 1);
        let (int, frac) = padded.split_at(padded.len() - scale);
        format!("{int}.{frac}")
    };
    if negative {
        format!("-{body}")
    } else {
        body
    }
}

/// Days since 0001-01-01 to a proleptic Gregorian `YYYY-MM-DD`.
fn date_from_days(days: i64) -> String {
    // Shift to days since 1970-01-01, then the civil-from-days algorithm.
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

/// `HH:MM:SS[.fraction]` from `units` of 10^-scale seconds since midnight.
fn time_of_day(units: u128, scale: u8) -> String {
    // Valid scales are 0..=7; clamp so a corrupt one cannot overflow.
    let scale = scale.min(7);
    let per_sec = 10u128.pow(u32::from(scale));
    let secs = units / per_sec;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if scale == 0 {
        format!("{h:02}:{m:02}:{s:02}")
    } else {
        let frac = units % per_sec;
        format!("{h:02}:{m:02}:{s:02}.{frac:0w$}", w = usize::from(scale))
    }
}

fn hex(data: &[u8]) -> String {
    let digits: String = data.iter().map(|b| format!("{b:02X}")).collect();
    format!("0x{digits}")
}

/// Renders a non-NULL value of wire type `ty` as text.
fn render(ty: u8, scale: u8, d: &[u8]) -> String {
    match (ty, d.len()) {
        (0x32 | 0x68, _) => {
            let set = d.first().is_some_and(|b| *b != 0);
            if set { "1" } else { "0" }.to_string()
        }
        (0x30, _) | (0x26, 1) => le_uint(d).to_string(), // tinyint is unsigned
        (0x34 | 0x38 | 0x7F | 0x26, _) => le_int(d).to_string(),
        (0x3B, _) | (0x6D, 4) => f32::from_le_bytes(first::<4>(d)).to_string(),
        (0x3E | 0x6D, _) => f64::from_le_bytes(first::<8>(d)).to_string(),
        (0xE7 | 0xEF, _) => from_utf16(d),
        (0xA7 | 0xAF, _) => String::from_utf8_lossy(d).into_owned(),
        (0xF1, _) => from_utf16(d),
        (0x6A | 0x6C | 0x37 | 0x3F, _) if !d.is_empty() => {
            with_scale(le_uint(&d[1..]), scale, d[0] == 0)
        }
        (0x7A, _) | (0x6E, 4) => with_scale(le_int(d).unsigned_abs(), 4, le_int(d) < 0),
        (0x3C | 0x6E, 8) => {
            // MONEY: high 4 bytes first, then low 4 bytes.
            let mut v = [0u8; 8];
            v[..4].copy_from_slice(&d[4..8]);
            v[4..].copy_from_slice(&d[..4]);
            let i = i64::from_le_bytes(v);
            with_scale(u128::from(i.unsigned_abs()), 4, i < 0)
        }
        (0x28, 3) => date_from_days(le_uint(d) as i64),
        (0x29, n) => time_of_day(le_uint(&d[..n]), scale),
        (0x2A, n) if n > 3 => {
            let (t, dt) = d.split_at(n - 3);
            let date = date_from_days(le_uint(dt) as i64);
            format!("{date} {}", time_of_day(le_uint(t), scale))
        }
        (0x2B, n) if n > 5 => {
            let (t, rest) = d.split_at(n - 5);
            let date = date_from_days(le_uint(&rest[..3]) as i64);
            let offset = i16::from_le_bytes([rest[3], rest[4]]);
            let sign = if offset < 0 { '-' } else { '+' };
            let off = offset.unsigned_abs();
            let t = time_of_day(le_uint(t), scale);
            format!("{date} {t} UTC{sign}{:02}:{:02}", off / 60, off % 60)
        }
        (0x3D | 0x6F, 8) => {
            // DATETIME: days since 1900-01-01, then 1/300 s since midnight.
            let days = i64::from(i32::from_le_bytes(first::<4>(d)));
            let ticks = u128::from(u32::from_le_bytes(first::<4>(&d[4..])));
            let date = date_from_days(days + 693_595);
            format!("{date} {}", time_of_day(ticks * 1000 / 300, 3))
        }
        (0x3A | 0x6F, 4) => {
            let days = i64::from(u16::from_le_bytes([d[0], d[1]]));
            let mins = u128::from(u16::from_le_bytes([d[2], d[3]]));
            format!(
                "{} {}",
                date_from_days(days + 693_595),
                time_of_day(mins * 60, 0)
            )
        }
        (0x24, 16) => {
            let x = |r: std::ops::Range<usize>, rev: bool| {
                let mut v: Vec<u8> = d[r].to_vec();
                if rev {
                    v.reverse();
                }
                v.iter().map(|b| format!("{b:02X}")).collect::<String>()
            };
            format!(
                "{}-{}-{}-{}-{}",
                x(0..4, true),
                x(4..6, true),
                x(6..8, true),
                x(8..10, false),
                x(10..16, false)
            )
        }
        _ => hex(d),
    }
}

fn first<const N: usize>(d: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    let n = d.len().min(N);
    a[..n].copy_from_slice(&d[..n]);
    a
}
