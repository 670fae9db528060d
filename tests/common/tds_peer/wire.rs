//! TDS packet framing (MS-TDS 2.2.3) and a bounds-checked byte reader.

use std::io;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

pub const HEADER_LEN: usize = 8;
pub const DEFAULT_PACKET_SIZE: usize = 4096;

pub const SQL_BATCH: u8 = 0x01;
pub const RPC: u8 = 0x03;
pub const TABULAR_RESULT: u8 = 0x04;
pub const ATTENTION: u8 = 0x06;
pub const BULK_LOAD: u8 = 0x07;
pub const LOGIN7: u8 = 0x10;
pub const PRELOGIN: u8 = 0x12;

const STATUS_EOM: u8 = 0x01;
/// The SPID the peer reports in every packet header.
const SPID: u16 = 55;

pub fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// One client message: the packet type of its first packet and the payloads
/// of all its packets up to and including the end-of-message packet.
pub struct Message {
    pub ty: u8,
    pub payload: Vec<u8>,
}

/// Reads one whole message, reassembling packets split across TCP reads and
/// multi-packet messages. `Ok(None)` on a clean EOF between messages.
pub async fn read_message<R: AsyncRead + Unpin>(r: &mut R) -> io::Result<Option<Message>> {
    let mut ty = None;
    let mut payload = Vec::new();
    loop {
        let mut header = [0u8; HEADER_LEN];
        if r.read(&mut header[..1]).await? == 0 {
            return match ty {
                None => Ok(None),
                Some(_) => Err(io::ErrorKind::UnexpectedEof.into()),
            };
        }
        r.read_exact(&mut header[1..]).await?;
        let len = usize::from(u16::from_be_bytes([header[2], header[3]]));
        if len < HEADER_LEN {
            return Err(invalid(format!(
                "packet length {len} is shorter than a header"
            )));
        }
        let start = payload.len();
        payload.resize(start + len - HEADER_LEN, 0);
        r.read_exact(&mut payload[start..]).await?;
        // An attention may interrupt a multi-packet message; it wins.
        if header[0] == ATTENTION && ty.is_some_and(|t| t != ATTENTION) {
            return Ok(Some(Message {
                ty: ATTENTION,
                payload: Vec::new(),
            }));
        }
        let t = *ty.get_or_insert(header[0]);
        if header[1] & STATUS_EOM != 0 {
            return Ok(Some(Message { ty: t, payload }));
        }
    }
}

/// Writes `payload` as one message of packets no larger than `packet_size`.
pub async fn write_message<W: AsyncWrite + Unpin>(
    w: &mut W,
    ty: u8,
    payload: &[u8],
    packet_size: usize,
) -> io::Result<()> {
    let body = packet_size.saturating_sub(HEADER_LEN).max(1);
    let mut chunks: Vec<&[u8]> = payload.chunks(body).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    let count = chunks.len();
    let mut out = Vec::with_capacity(payload.len() + count * HEADER_LEN);
    for (i, chunk) in chunks.into_iter().enumerate() {
        let status = if i + 1 == count { STATUS_EOM } else { 0 };
        let len =
            u16::try_from(chunk.len() + HEADER_LEN).map_err(|_| invalid("packet too large"))?;
        out.extend_from_slice(&[ty, status]);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&SPID.to_be_bytes());
        // Packet ids start at 1 and wrap, as the spec allows.
        out.push(((i + 1) % 256) as u8);
        out.push(0);
        out.extend_from_slice(chunk);
    }
    w.write_all(&out).await?;
    w.flush().await
}

/// UTF-16LE bytes of `s`.
pub fn utf16(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

/// Decodes UTF-16LE bytes (lossily; an odd trailing byte is ignored).
pub fn from_utf16(bytes: &[u8]) -> String {
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16_lossy(&units)
}

/// A cursor over a message payload whose reads fail instead of panicking.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Everything not yet read.
    pub fn rest(&mut self) -> &'a [u8] {
        let out = &self.buf[self.pos.min(self.buf.len())..];
        self.pos = self.buf.len();
        out
    }

    pub fn bytes(&mut self, n: usize) -> io::Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| invalid(format!("truncated: need {n} bytes at {}", self.pos)))?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    pub fn u8(&mut self) -> io::Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u16(&mut self) -> io::Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    pub fn u32(&mut self) -> io::Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> io::Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// B_VARCHAR: a u8 count of UTF-16 code units, then the units.
    pub fn b_varchar(&mut self) -> io::Result<String> {
        let n = usize::from(self.u8()?);
        Ok(from_utf16(self.bytes(n * 2)?))
    }

    /// US_VARCHAR: a u16 count of UTF-16 code units, then the units.
    pub fn us_varchar(&mut self) -> io::Result<String> {
        let n = usize::from(self.u16()?);
        Ok(from_utf16(self.bytes(n * 2)?))
    }

    /// Skips an ALL_HEADERS block (its first u32 is its own total length).
    pub fn skip_all_headers(&mut self) -> io::Result<()> {
        let total = self.u32()? as usize;
        let rest = total
            .checked_sub(4)
            .ok_or_else(|| invalid("ALL_HEADERS shorter than its length field"))?;
        self.bytes(rest).map(|_| ())
    }
}
