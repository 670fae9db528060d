//! Values as they cross between a backend and the engine: enough types to carry keys and
//! pivoted cells faithfully, without tying the engine to any one driver's types.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
    Bytes(Vec<u8>),
    /// Text whose bytes are not valid UTF-8. SQLite stores whatever bytes it is given as text;
    /// such a value must go back as text, byte for byte, never as a blob (whose storage class,
    /// sort order and `typeof()` differ) and never through a lossy `String`.
    TextBytes(Vec<u8>),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Text read from a database, kept exact: a `String` when it is UTF-8, else its bytes.
    pub fn text_from_bytes(bytes: &[u8]) -> Value {
        match std::str::from_utf8(bytes) {
            Ok(s) => Value::Text(s.to_owned()),
            Err(_) => Value::TextBytes(bytes.to_vec()),
        }
    }

    /// Text form for reports, previews and messages (lossy for bytes that are not UTF-8).
    pub fn as_text(&self) -> Option<String> {
        match self {
            Value::Null => None,
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Text(s) => Some(s.clone()),
            Value::Bytes(b) | Value::TextBytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        }
    }

    /// The bytes of a text value, valid UTF-8 or not: what SQL's BINARY collation compares.
    pub fn text_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Text(s) => Some(s.as_bytes()),
            Value::TextBytes(b) => Some(b),
            _ => None,
        }
    }

    /// The bytes of a string or binary value that is not valid UTF-8, which cannot be an
    /// attribute name: a column name must be valid text.
    pub fn invalid_utf8(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) | Value::TextBytes(b) => std::str::from_utf8(b).is_err().then_some(b),
            _ => None,
        }
    }

    /// This value as an attribute name: None for NULL, the bytes as the error when they are
    /// not UTF-8 (see [`Value::invalid_utf8`]).
    pub fn into_attribute_name(self) -> Result<Option<String>, Vec<u8>> {
        match self {
            Value::Null => Ok(None),
            Value::Text(s) => Ok(Some(s)),
            Value::Bytes(b) | Value::TextBytes(b) => {
                String::from_utf8(b).map(Some).map_err(|e| e.into_bytes())
            }
            other => Ok(other.as_text()),
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Float(f) if f.fract() == 0.0 => Some(*f as i64),
            Value::Text(s) => s.trim().parse().ok(),
            Value::Bytes(b) => std::str::from_utf8(b).ok()?.trim().parse().ok(),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_text() {
            Some(text) => f.write_str(&text),
            None => f.write_str("NULL"),
        }
    }
}

/// The single integer of a one-row, one-column result (0 when absent).
pub fn first_int(rows: &[Vec<Value>]) -> u64 {
    rows.first()
        .and_then(|r| r.first())
        .and_then(|v| v.as_i64())
        .unwrap_or(0)
        .max(0) as u64
}

/// The integers of a one-row result, one per column (counts; NULL and negatives read as 0,
/// no row as none).
pub fn row_counts(rows: &[Vec<Value>]) -> Vec<u64> {
    rows.first()
        .map(|r| {
            r.iter()
                .map(|v| v.as_i64().unwrap_or(0).max(0) as u64)
                .collect()
        })
        .unwrap_or_default()
}

/// Bytes as upper-case hex, the form SQL's `X'…'` literals and error messages use.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02X}");
            s
        })
}
