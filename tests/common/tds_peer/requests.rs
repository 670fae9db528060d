//! Parsing of client requests after login: SQL batches (MS-TDS 2.2.6.7),
//! RPCs (2.2.6.6) and bulk-load data (2.2.6.1).

use std::io;

use super::decode::TypeInfo;
use super::script::{BulkColumn, Received, Value};
use super::wire::{from_utf16, invalid, Reader};

/// The UTF-16 text of a SQL batch after its ALL_HEADERS.
pub fn parse_batch(payload: &[u8]) -> io::Result<String> {
    let mut r = Reader::new(payload);
    r.skip_all_headers()?;
    Ok(from_utf16(r.rest()))
}

/// Well-known names for the RPC ProcIDs (MS-TDS 2.2.6.6).
fn proc_name(id: u16) -> String {
    match id {
        1 => "sp_cursor",
        2 => "sp_cursoropen",
        3 => "sp_cursorprepare",
        4 => "sp_cursorexecute",
        5 => "sp_cursorprepexec",
        6 => "sp_cursorunprepare",
        7 => "sp_cursorfetch",
        8 => "sp_cursoroption",
        9 => "sp_cursorclose",
        10 => "sp_executesql",
        11 => "sp_prepare",
        12 => "sp_execute",
        13 => "sp_prepexec",
        14 => "sp_prepexecrpc",
        15 => "sp_unprepare",
        other => return format!("procid#{other}"),
    }
    .to_string()
}

/// An RPC request as [`Received::Rpc`]. Only the first RPC of a batched
/// request is decoded (tiberius sends one per message).
pub fn parse_rpc(payload: &[u8]) -> io::Result<Received> {
    let mut r = Reader::new(payload);
    r.skip_all_headers()?;
    let name_len = r.u16()?;
    let proc = if name_len == 0xFFFF {
        proc_name(r.u16()?)
    } else {
        from_utf16(r.bytes(usize::from(name_len) * 2)?)
    };
    r.u16()?; // option flags
    let mut params = Vec::new();
    while !r.is_empty() {
        let name = r.b_varchar()?;
        r.u8()?; // status flags
        let ti = TypeInfo::decode(&mut r)?;
        params.push((name, ti.read_value(&mut r)?));
    }
    let mut sql = None;
    if proc.eq_ignore_ascii_case("sp_executesql") && !params.is_empty() {
        sql = params.remove(0).1;
        if !params.is_empty() {
            params.remove(0); // the parameter declaration string
        }
    }
    Ok(Received::Rpc { proc, sql, params })
}

/// Decoded bulk-load rows, `None` = NULL.
type Rows = Vec<Vec<Option<Value>>>;

/// A bulk load's COLMETADATA columns and its rows (MS-TDS 2.2.6.1): the
/// COLMETADATA token, then ROW (0xD1) or NBCROW (0xD2) tokens, then a DONE.
/// Values are decoded by the column types of that COLMETADATA.
pub fn parse_bulk(payload: &[u8]) -> io::Result<(Vec<BulkColumn>, Rows)> {
    let mut r = Reader::new(payload);
    if r.u8()? != 0x81 {
        return Err(invalid("bulk load does not start with COLMETADATA"));
    }
    let count = r.u16()?;
    let mut columns = Vec::new();
    let mut types = Vec::new();
    for _ in 0..count {
        r.u32()?; // user type
        let flags = r.u16()?;
        let ty = TypeInfo::decode(&mut r)?;
        let name = r.b_varchar()?;
        columns.push(BulkColumn {
            name,
            ty: ty.describe(),
            nullable: flags & 0x0001 != 0,
        });
        types.push(ty);
    }
    let mut rows = Vec::new();
    loop {
        match r.u8()? {
            0xD1 => {
                let row = types
                    .iter()
                    .map(|t| t.read_typed(&mut r))
                    .collect::<io::Result<Vec<_>>>()?;
                rows.push(row);
            }
            0xD2 => {
                // A bit per column, least significant first: set = NULL, no value sent.
                let bitmap = r.bytes(types.len().div_ceil(8))?;
                let row = types
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        if bitmap[i / 8] & (1 << (i % 8)) != 0 {
                            Ok(None)
                        } else {
                            t.read_typed(&mut r)
                        }
                    })
                    .collect::<io::Result<Vec<_>>>()?;
                rows.push(row);
            }
            0xFD => break,
            other => {
                return Err(invalid(format!(
                    "unexpected token 0x{other:02X} in bulk load"
                )))
            }
        }
    }
    Ok((columns, rows))
}
