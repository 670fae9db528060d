//! PRELOGIN (MS-TDS 2.2.6.5) and LOGIN7 (2.2.6.4) handling.

use std::io;

use super::tokens::{Tokens, DONE, DONE_ERROR, DONE_FINAL};
use super::wire::{from_utf16, invalid, Reader, DEFAULT_PACKET_SIZE};

/// PRELOGIN ENCRYPTION values.
pub const ENCRYPT_NOT_SUP: u8 = 0x02;

/// The ENCRYPTION option the client sent, if any.
pub fn prelogin_encryption(payload: &[u8]) -> Option<u8> {
    let mut i = 0;
    while let Some(&token) = payload.get(i) {
        if token == 0xFF || i + 5 > payload.len() {
            return None;
        }
        let offset = usize::from(u16::from_be_bytes([payload[i + 1], payload[i + 2]]));
        if token == 0x01 {
            return payload.get(offset).copied();
        }
        i += 5;
    }
    None
}

/// The server PRELOGIN answer: version 16.0, ENCRYPTION = NOT_SUP, no
/// instance, no thread id, no MARS.
pub fn prelogin_response() -> Vec<u8> {
    // (option token, option data)
    let options: [(u8, &[u8]); 5] = [
        (0x00, &[16, 0, 0x10, 0x00, 0, 0]), // VERSION + sub-build
        (0x01, &[ENCRYPT_NOT_SUP]),         // ENCRYPTION
        (0x02, &[0]),                       // INSTOPT: empty, NUL-terminated
        (0x03, &[]),                        // THREADID: empty from servers
        (0x04, &[0]),                       // MARS off
    ];
    let mut offset = options.len() * 5 + 1;
    let mut head = Vec::new();
    let mut data = Vec::new();
    for (token, value) in options {
        head.push(token);
        head.extend_from_slice(&(offset as u16).to_be_bytes());
        head.extend_from_slice(&(value.len() as u16).to_be_bytes());
        data.extend_from_slice(value);
        offset += value.len();
    }
    head.push(0xFF);
    head.extend_from_slice(&data);
    head
}

/// The fields of a LOGIN7 the peer cares about.
pub struct Login {
    pub user: String,
    pub database: String,
    pub app_name: String,
    /// Requested packet size, clamped to the legal 512..=32767.
    pub packet_size: usize,
    /// Whether the (de-obfuscated) password is the scripted bad one.
    password_is_wrong: bool,
}

/// Reads the (offset, length-in-characters) pair at `at` as a string.
fn field(payload: &[u8], at: usize) -> io::Result<(usize, usize)> {
    let mut r = Reader::new(payload);
    r.bytes(at)?;
    Ok((usize::from(r.u16()?), usize::from(r.u16()?) * 2))
}

fn string_at(payload: &[u8], at: usize) -> io::Result<String> {
    let (offset, len) = field(payload, at)?;
    let mut r = Reader::new(payload);
    r.bytes(offset)?;
    Ok(from_utf16(r.bytes(len)?))
}

pub fn parse_login7(payload: &[u8]) -> io::Result<Login> {
    if payload.len() < 94 {
        return Err(invalid("LOGIN7 shorter than its fixed part"));
    }
    let requested = u32::from_le_bytes([payload[8], payload[9], payload[10], payload[11]]);
    let packet_size = if requested == 0 {
        DEFAULT_PACKET_SIZE
    } else {
        requested.clamp(512, 32767) as usize
    };
    // The password: each byte XOR 0xA5, then nibbles swapped. Decoded only
    // to compare it here, then dropped; never stored or logged.
    let (offset, len) = field(payload, 44)?;
    let mut r = Reader::new(payload);
    r.bytes(offset)?;
    let obfuscated = r.bytes(len)?;
    let plain: Vec<u8> = obfuscated
        .iter()
        .map(|b| (b ^ 0xA5).rotate_left(4))
        .collect();
    let password_is_wrong = from_utf16(&plain) == "wrong";
    Ok(Login {
        user: string_at(payload, 40)?,
        app_name: string_at(payload, 48)?,
        database: string_at(payload, 68)?,
        packet_size,
        password_is_wrong,
    })
}

impl Login {
    /// The token stream answering this login, and whether it succeeded.
    pub fn response(&self) -> (Vec<u8>, bool) {
        let mut t = Tokens::default();
        let failed = format!("Login failed for user '{}'.", self.user);
        if self.password_is_wrong {
            t.error(18456, 1, 14, &failed);
            t.done(DONE, DONE_ERROR, 0, 0);
            return (t.0, false);
        }
        if self.database.eq_ignore_ascii_case("nosuchdb") {
            let msg = format!(
                "Cannot open database \"{}\" requested by the login. The login failed.",
                self.database
            );
            t.error(4060, 1, 11, &msg);
            t.error(18456, 1, 14, &failed);
            t.done(DONE, DONE_ERROR, 0, 0);
            return (t.0, false);
        }
        let db = if self.database.is_empty() {
            "master"
        } else {
            self.database.as_str()
        };
        t.env_change(1, db, "master");
        t.env_change_collation();
        t.env_change(2, "us_english", "");
        t.login_ack();
        let size = self.packet_size.to_string();
        t.env_change(4, &size, &DEFAULT_PACKET_SIZE.to_string());
        t.done(DONE, DONE_FINAL, 0, 0);
        (t.0, true)
    }
}
