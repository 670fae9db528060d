//! The scripting vocabulary of the peer: what it answers ([`Script`],
//! [`Response`]) and what it records ([`Received`]).

use std::fmt;

/// Decides whether a rule applies to a statement. Batches are matched on their
/// full text; RPCs on the SQL text of `sp_executesql` (or the procedure name
/// for any other procedure).
pub enum Matcher {
    /// The statement contains this text (case-sensitive).
    Contains(String),
    /// The statement contains this text, ignoring ASCII case.
    ContainsIgnoreCase(String),
    /// The statement, with leading whitespace removed, starts with this text.
    StartsWith(String),
    /// An arbitrary predicate; may keep state (e.g. count calls via an atomic).
    Fn(Box<dyn Fn(&str) -> bool + Send + Sync>),
}

impl Matcher {
    pub(crate) fn matches(&self, text: &str) -> bool {
        match self {
            Matcher::Contains(s) => text.contains(s.as_str()),
            Matcher::ContainsIgnoreCase(s) => {
                text.to_ascii_lowercase().contains(&s.to_ascii_lowercase())
            }
            Matcher::StartsWith(s) => text.trim_start().starts_with(s.as_str()),
            Matcher::Fn(f) => f(text),
        }
    }
}

impl fmt::Debug for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Matcher::Contains(s) => write!(f, "contains({s:?})"),
            Matcher::ContainsIgnoreCase(s) => write!(f, "contains_ignore_case({s:?})"),
            Matcher::StartsWith(s) => write!(f, "starts_with({s:?})"),
            Matcher::Fn(_) => write!(f, "when(<closure>)"),
        }
    }
}

/// Matches statements containing `needle` (case-sensitive).
pub fn contains(needle: &str) -> Matcher {
    Matcher::Contains(needle.to_string())
}

/// Matches statements containing `needle`, ignoring ASCII case.
pub fn contains_ignore_case(needle: &str) -> Matcher {
    Matcher::ContainsIgnoreCase(needle.to_string())
}

/// Matches statements that start with `prefix` (after leading whitespace).
pub fn starts_with(prefix: &str) -> Matcher {
    Matcher::StartsWith(prefix.to_string())
}

/// Matches statements for which `f` returns true.
pub fn when(f: impl Fn(&str) -> bool + Send + Sync + 'static) -> Matcher {
    Matcher::Fn(Box::new(f))
}

/// SQL Server column types the peer can put in a result set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColType {
    /// `nvarchar(4000)`: USHORTLEN type 0xE7, NULL = length 0xFFFF.
    NVarChar,
    /// `nvarchar(max)`: PLP encoding, NULL = 0xFFFFFFFFFFFFFFFF.
    NVarCharMax,
    /// `int`: INTN (0x26) of length 4, NULL = length 0.
    Int,
    /// `bigint`: INTN (0x26) of length 8, NULL = length 0.
    BigInt,
    /// `bit`: BITN (0x68), NULL = length 0.
    Bit,
    /// `float`: FLTN (0x6D) of length 8, NULL = length 0.
    Float,
    /// `int NOT NULL`: the fixed-length INT4 (0x38), no length prefix, never
    /// NULL; described without the nullable flag, as SQL Server describes a
    /// `NOT NULL` column.
    IntNotNull,
}

/// A result-set column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub ty: ColType,
}

impl Column {
    pub fn new(name: &str, ty: ColType) -> Column {
        Column {
            name: name.to_string(),
            ty,
        }
    }
}

/// A cell value in a scripted result set. It is converted to the column's
/// type when encoded (e.g. `Int(5)` in an NVARCHAR column is sent as `"5"`); a
/// value that does not convert turns the whole response into an ERROR token.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
    Bit(bool),
    Float(f64),
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Str(v.to_string())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Str(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Value {
        Value::Int(i64::from(v))
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bit(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Float(v)
    }
}

/// What the peer answers to a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// A result set: COLMETADATA, one ROW per row, DONE with DONE_COUNT.
    Rows {
        columns: Vec<Column>,
        rows: Vec<Vec<Option<Value>>>,
    },
    /// DONE with DONE_COUNT and this row count (e.g. an INSERT).
    RowCount(u64),
    /// A bare DONE without a row count (what unmatched statements get).
    Done,
    /// ERROR token, then DONE with DONE_ERROR.
    Error {
        number: u32,
        state: u8,
        class: u8,
        message: String,
    },
    /// Several results in one answer (DONE_MORE set on all but the last).
    Multi(Vec<Response>),
}

impl Response {
    /// A result set.
    pub fn rows(columns: Vec<Column>, rows: Vec<Vec<Option<Value>>>) -> Response {
        Response::Rows { columns, rows }
    }

    /// What `sp_describe_first_result_set` answers for one non-null INT column `name`: the
    /// entity-key type probe every run makes.
    pub fn describe_int_key(name: &str) -> Response {
        Response::rows(
            vec![
                Column::new("is_hidden", ColType::Bit),
                Column::new("column_ordinal", ColType::Int),
                Column::new("name", ColType::NVarChar),
                Column::new("is_nullable", ColType::Bit),
                Column::new("system_type_id", ColType::Int),
                Column::new("system_type_name", ColType::NVarChar),
            ],
            vec![vec![
                Some(false.into()),
                Some(1i64.into()),
                Some(name.into()),
                Some(false.into()),
                Some(56i64.into()),
                Some("int".into()),
            ]],
        )
    }

    /// An error with state 1 and class (severity) 16, like most user errors.
    pub fn error(number: u32, message: &str) -> Response {
        Response::Error {
            number,
            state: 1,
            class: 16,
            message: message.to_string(),
        }
    }
}

/// One scripted rule: the first rule whose matcher accepts a statement
/// answers it. A rule may fire any number of times.
#[derive(Debug)]
pub struct Rule {
    pub matcher: Matcher,
    pub response: Response,
}

/// The ordered rules the peer answers with.
#[derive(Debug, Default)]
pub struct Script {
    pub rules: Vec<Rule>,
}

impl Script {
    pub fn new() -> Script {
        Script::default()
    }

    /// Appends a rule (rules are tried in the order they were added).
    pub fn on(mut self, matcher: Matcher, response: Response) -> Script {
        self.rules.push(Rule { matcher, response });
        self
    }

    /// The response for `text`; unmatched statements get [`Response::Done`].
    pub(crate) fn respond(&self, text: &str) -> Response {
        self.rules
            .iter()
            .find(|r| r.matcher.matches(text))
            .map(|r| r.response.clone())
            .unwrap_or(Response::Done)
    }
}

/// Something the peer received, in arrival order across all connections.
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// A LOGIN7 (the password is never recorded). `database` is empty when
    /// the client named none; `accepted` says whether the login succeeded.
    Login {
        user: String,
        database: String,
        app_name: String,
        accepted: bool,
    },
    /// A SQL batch (packet type 1), the UTF-16 text decoded.
    Batch(String),
    /// An RPC (packet type 3). `proc` is the name sent, or the well-known
    /// name for a ProcID (10 = `sp_executesql`). For `sp_executesql`, `sql`
    /// is the statement and `params` holds only the bound parameters
    /// (`@P1`, `@P2`, ...): the statement and the declaration string are left
    /// out. For other procedures `params` holds every parameter.
    Rpc {
        proc: String,
        sql: Option<String>,
        params: Vec<(String, Option<String>)>,
    },
    /// An attention (cancel) signal (packet type 6).
    Attention,
    /// One bulk load (packet type 7): the `INSERT BULK` statement that
    /// announced it on the same connection, the columns of the COLMETADATA
    /// the client sent, and its ROW/NBCROW tokens decoded by those columns'
    /// types (`None` = NULL). See [`BulkColumn`] for how values are decoded.
    BulkLoad {
        statement: String,
        columns: Vec<BulkColumn>,
        rows: Vec<Vec<Option<Value>>>,
    },
    /// A message of a type the peer does not understand; answered with DONE.
    Other { packet_type: u8 },
}

/// A column of a client's bulk-load COLMETADATA.
///
/// `ty` names the TDS type as MS-TDS 2.2.5.4 does, with the maximum length in
/// bytes where it has one: `INT4`, `INTN(8)`, `NVARCHAR(max)`,
/// `NVARCHAR(100)`, `BIGVARCHR(255)`, `FLTN(8)`, `BITN`, `DECIMALN(10,2)`.
/// Values decode as [`Value::Int`] (integer types), [`Value::Bit`],
/// [`Value::Float`] and [`Value::Str`] (character types); any other type
/// becomes [`Value::Str`] with its text rendering (binary as `0x…` hex).
#[derive(Debug, Clone, PartialEq)]
pub struct BulkColumn {
    pub name: String,
    pub ty: String,
    pub nullable: bool,
}

impl BulkColumn {
    pub fn new(name: &str, ty: &str, nullable: bool) -> BulkColumn {
        BulkColumn {
            name: name.to_string(),
            ty: ty.to_string(),
            nullable,
        }
    }
}
