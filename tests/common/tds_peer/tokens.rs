//! Encoding of server-to-client tokens (MS-TDS 2.2.7) and of scripted
//! [`Response`]s into a token stream.

use super::script::{ColType, Column, Response, Value};
use super::wire::utf16;

pub const DONE: u8 = 0xFD;
pub const DONE_PROC: u8 = 0xFE;
pub const DONE_IN_PROC: u8 = 0xFF;

pub const DONE_FINAL: u16 = 0x00;
pub const DONE_MORE: u16 = 0x01;
pub const DONE_ERROR: u16 = 0x02;
pub const DONE_COUNT: u16 = 0x10;
pub const DONE_ATTN: u16 = 0x20;

const COLMETADATA: u8 = 0x81;
const ROW: u8 = 0xD1;
const ERROR: u8 = 0xAA;
const LOGINACK: u8 = 0xAD;
const ENVCHANGE: u8 = 0xE3;
const RETURNSTATUS: u8 = 0x79;

/// CurCmd values reported in DONE tokens.
const CMD_SELECT: u16 = 0xC1;
const CMD_INSERT: u16 = 0xC3;

/// Latin1_General_CI_AS: LCID 0x0409, flags 0xD0 (ignore case/kana/width), sort 52.
pub const COLLATION: [u8; 5] = [0x09, 0x04, 0xD0, 0x00, 0x34];
/// Column flags: nullable (0x01) and updateable-unknown (0x08), so tiberius'
/// `bulk_insert` treats every scripted column as a bulk target.
const COLUMN_FLAGS: u16 = 0x0009;
/// The same without nullable, for `NOT NULL` columns.
const COLUMN_FLAGS_NOT_NULL: u16 = 0x0008;
const SERVER_NAME: &str = "tds-peer";
/// TDS 7.4, big-endian on the wire inside LOGINACK.
const TDS_74: u32 = 0x7400_0004;

/// A growing token stream.
#[derive(Default)]
pub struct Tokens(pub Vec<u8>);

impl Tokens {
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn b_varchar(&mut self, s: &str) {
        let units = utf16(s);
        self.0
            .push(u8::try_from(units.len() / 2).unwrap_or(u8::MAX));
        self.0.extend_from_slice(&units[..units.len().min(510)]);
    }

    fn us_varchar(&mut self, s: &str) {
        let units = utf16(s);
        self.u16(u16::try_from(units.len() / 2).unwrap_or(u16::MAX));
        self.0
            .extend_from_slice(&units[..units.len().min(2 * 65535)]);
    }

    /// A token with a u16 length prefix around `body`.
    fn sized(&mut self, token: u8, body: &[u8]) {
        self.0.push(token);
        self.u16(u16::try_from(body.len()).unwrap_or(u16::MAX));
        self.0.extend_from_slice(body);
    }

    /// ENVCHANGE with B_VARCHAR new/old values (database 1, packet size 4, ...).
    pub fn env_change(&mut self, ty: u8, new: &str, old: &str) {
        let mut body = Tokens(vec![ty]);
        body.b_varchar(new);
        body.b_varchar(old);
        self.sized(ENVCHANGE, &body.0);
    }

    /// ENVCHANGE type 7 (SQL collation), new value only.
    pub fn env_change_collation(&mut self) {
        let mut body = vec![7u8, COLLATION.len() as u8];
        body.extend_from_slice(&COLLATION);
        body.push(0);
        self.sized(ENVCHANGE, &body);
    }

    pub fn login_ack(&mut self) {
        let mut body = Tokens(vec![1u8]); // interface: SQL_TSQL
        body.0.extend_from_slice(&TDS_74.to_be_bytes());
        body.b_varchar("Microsoft SQL Server");
        body.0.extend_from_slice(&[16, 0, 0x10, 0x00]); // 16.0.4096
        self.sized(LOGINACK, &body.0);
    }

    pub fn error(&mut self, number: u32, state: u8, class: u8, message: &str) {
        let mut body = Tokens(number.to_le_bytes().to_vec());
        body.0.extend_from_slice(&[state, class]);
        body.us_varchar(message);
        body.b_varchar(SERVER_NAME);
        body.b_varchar("");
        body.0.extend_from_slice(&1u32.to_le_bytes()); // line number
        self.sized(ERROR, &body.0);
    }

    pub fn done(&mut self, token: u8, status: u16, cur_cmd: u16, rows: u64) {
        self.0.push(token);
        self.u16(status);
        self.u16(cur_cmd);
        self.0.extend_from_slice(&rows.to_le_bytes());
    }

    pub fn return_status(&mut self, status: i32) {
        self.0.push(RETURNSTATUS);
        self.0.extend_from_slice(&status.to_le_bytes());
    }

    pub fn col_metadata(&mut self, columns: &[Column]) {
        self.0.push(COLMETADATA);
        self.u16(u16::try_from(columns.len()).unwrap_or(u16::MAX));
        for c in columns {
            self.0.extend_from_slice(&0u32.to_le_bytes()); // user type
            self.u16(if c.ty == ColType::IntNotNull {
                COLUMN_FLAGS_NOT_NULL
            } else {
                COLUMN_FLAGS
            });
            match c.ty {
                ColType::NVarChar => {
                    self.0.push(0xE7);
                    self.u16(8000); // max length in bytes: nvarchar(4000)
                    self.0.extend_from_slice(&COLLATION);
                }
                ColType::NVarCharMax => {
                    self.0.push(0xE7);
                    self.u16(0xFFFF);
                    self.0.extend_from_slice(&COLLATION);
                }
                ColType::Int => self.0.extend_from_slice(&[0x26, 4]),
                ColType::BigInt => self.0.extend_from_slice(&[0x26, 8]),
                ColType::Bit => self.0.extend_from_slice(&[0x68, 1]),
                ColType::Float => self.0.extend_from_slice(&[0x6D, 8]),
                ColType::IntNotNull => self.0.push(0x38),
            }
            self.b_varchar(&c.name);
        }
    }

    /// A ROW token, or a description of the first value that does not fit.
    pub fn row(&mut self, columns: &[Column], row: &[Option<Value>]) -> Result<(), String> {
        if row.len() != columns.len() {
            return Err(format!(
                "scripted row has {} values for {} columns",
                row.len(),
                columns.len()
            ));
        }
        self.0.push(ROW);
        for (c, v) in columns.iter().zip(row) {
            self.value(c, v.as_ref())?;
        }
        Ok(())
    }

    fn value(&mut self, c: &Column, v: Option<&Value>) -> Result<(), String> {
        let bad = |v: &Value| format!("value {v:?} does not fit column {} ({:?})", c.name, c.ty);
        let Some(v) = v else {
            match c.ty {
                ColType::IntNotNull => return Err(format!("NULL in NOT NULL column {}", c.name)),
                ColType::NVarChar => self.u16(0xFFFF),
                ColType::NVarCharMax => self.0.extend_from_slice(&u64::MAX.to_le_bytes()),
                _ => self.0.push(0),
            }
            return Ok(());
        };
        match c.ty {
            ColType::NVarChar | ColType::NVarCharMax => {
                let text = match v {
                    Value::Str(s) => s.clone(),
                    Value::Int(i) => i.to_string(),
                    Value::Float(f) => f.to_string(),
                    Value::Bit(b) => u8::from(*b).to_string(),
                };
                let bytes = utf16(&text);
                if c.ty == ColType::NVarChar {
                    let len = u16::try_from(bytes.len())
                        .ok()
                        .filter(|&l| l <= 8000)
                        .ok_or_else(|| bad(v))?;
                    self.u16(len);
                    self.0.extend_from_slice(&bytes);
                } else {
                    let len = u32::try_from(bytes.len()).map_err(|_| bad(v))?;
                    self.0.extend_from_slice(&u64::from(len).to_le_bytes());
                    if len > 0 {
                        self.0.extend_from_slice(&len.to_le_bytes());
                        self.0.extend_from_slice(&bytes);
                    }
                    self.0.extend_from_slice(&0u32.to_le_bytes()); // PLP terminator
                }
            }
            ColType::Int | ColType::BigInt | ColType::IntNotNull => {
                let i = match v {
                    Value::Int(i) => *i,
                    Value::Bit(b) => i64::from(*b),
                    Value::Str(s) => s.trim().parse().map_err(|_| bad(v))?,
                    Value::Float(_) => return Err(bad(v)),
                };
                if c.ty == ColType::IntNotNull {
                    let i = i32::try_from(i).map_err(|_| bad(v))?;
                    self.0.extend_from_slice(&i.to_le_bytes());
                } else if c.ty == ColType::Int {
                    let i = i32::try_from(i).map_err(|_| bad(v))?;
                    self.0.push(4);
                    self.0.extend_from_slice(&i.to_le_bytes());
                } else {
                    self.0.push(8);
                    self.0.extend_from_slice(&i.to_le_bytes());
                }
            }
            ColType::Bit => {
                let b = match v {
                    Value::Bit(b) => *b,
                    Value::Int(i) => *i != 0,
                    Value::Str(s) if s == "1" || s.eq_ignore_ascii_case("true") => true,
                    Value::Str(s) if s == "0" || s.eq_ignore_ascii_case("false") => false,
                    _ => return Err(bad(v)),
                };
                self.0.extend_from_slice(&[1, u8::from(b)]);
            }
            ColType::Float => {
                let f = match v {
                    Value::Float(f) => *f,
                    Value::Int(i) => *i as f64,
                    Value::Str(s) => s.trim().parse().map_err(|_| bad(v))?,
                    Value::Bit(_) => return Err(bad(v)),
                };
                self.0.push(8);
                self.0.extend_from_slice(&f.to_le_bytes());
            }
        }
        Ok(())
    }
}

/// Flattens nested `Multi`s into the list of single results.
fn flatten(response: Response, out: &mut Vec<Response>) {
    match response {
        Response::Multi(parts) => parts.into_iter().for_each(|p| flatten(p, out)),
        other => out.push(other),
    }
}

/// The token stream answering a batch (`in_rpc == false`) or an RPC. Each
/// result ends in DONE (DONEINPROC inside an RPC, which then ends with
/// RETURNSTATUS and a final DONEPROC); DONE_MORE marks all but the last.
pub fn encode_response(response: Response, in_rpc: bool) -> Vec<u8> {
    let mut parts = Vec::new();
    flatten(response, &mut parts);
    if parts.is_empty() {
        parts.push(Response::Done);
    }
    let done_token = if in_rpc { DONE_IN_PROC } else { DONE };
    let count = parts.len();
    let mut t = Tokens::default();
    let mut any_error = false;
    for (i, part) in parts.into_iter().enumerate() {
        let more = if i + 1 < count || in_rpc {
            DONE_MORE
        } else {
            0
        };
        match part {
            Response::Rows { columns, rows } => {
                let mut body = Tokens::default();
                body.col_metadata(&columns);
                let encoded: Result<(), String> =
                    rows.iter().try_for_each(|r| body.row(&columns, r));
                match encoded {
                    Ok(()) => {
                        t.0.extend_from_slice(&body.0);
                        let n = rows.len() as u64;
                        t.done(done_token, more | DONE_COUNT, CMD_SELECT, n);
                    }
                    Err(msg) => {
                        any_error = true;
                        t.error(50000, 1, 16, &format!("tds-peer script error: {msg}"));
                        t.done(done_token, more | DONE_ERROR, 0, 0);
                    }
                }
            }
            Response::RowCount(n) => t.done(done_token, more | DONE_COUNT, CMD_INSERT, n),
            Response::Done | Response::Multi(_) => t.done(done_token, more, 0, 0),
            Response::Error {
                number,
                state,
                class,
                message,
            } => {
                any_error = true;
                t.error(number, state, class, &message);
                t.done(done_token, more | DONE_ERROR, 0, 0);
            }
        }
    }
    if in_rpc {
        t.return_status(if any_error { 1 } else { 0 });
        let status = if any_error { DONE_ERROR } else { DONE_FINAL };
        t.done(DONE_PROC, status, 0, 0);
    }
    t.0
}
