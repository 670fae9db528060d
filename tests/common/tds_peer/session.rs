//! One client connection: PRELOGIN, LOGIN7, then requests until EOF.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncRead, AsyncWrite};

use super::login::{parse_login7, prelogin_encryption, prelogin_response};
use super::requests::{parse_batch, parse_bulk, parse_rpc};
use super::script::{Received, Response, Script};
use super::tokens::{encode_response, Tokens, DONE, DONE_ATTN, DONE_COUNT, DONE_FINAL};
use super::wire::{self, invalid, read_message, write_message, DEFAULT_PACKET_SIZE};

/// State shared by the listener, every connection and the [`super::TdsPeer`].
pub struct Shared {
    pub script: Script,
    /// Everything received, each with the number of the connection it came
    /// on (1 for the first connection accepted).
    pub received: Mutex<Vec<(usize, Received)>>,
    pub connections: AtomicUsize,
}

impl Shared {
    pub fn log(&self) -> MutexGuard<'_, Vec<(usize, Received)>> {
        // A panicking test thread must not hide what was recorded.
        self.received.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One connection's state.
struct Conn<'a> {
    shared: &'a Shared,
    id: usize,
    /// The `INSERT BULK` batch whose bulk-load data has not arrived yet.
    insert_bulk: Option<String>,
}

impl Conn<'_> {
    fn record(&self, r: Received) {
        self.shared.log().push((self.id, r));
    }
}

/// Serves one connection (TCP, or TLS over it for TDS 8 strict); errors are logged and end
/// the connection.
pub async fn run<S: AsyncRead + AsyncWrite + Unpin>(mut sock: S, shared: Arc<Shared>) {
    let id = shared.connections.fetch_add(1, Ordering::SeqCst) + 1;
    let mut conn = Conn {
        shared: &shared,
        id,
        insert_bulk: None,
    };
    if let Err(e) = serve(&mut sock, &mut conn).await {
        if !matches!(
            e.kind(),
            io::ErrorKind::UnexpectedEof
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::BrokenPipe
        ) {
            eprintln!("[tds-peer] closing connection: {e}");
        }
    }
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    sock: &mut S,
    conn: &mut Conn<'_>,
) -> io::Result<()> {
    let Some(msg) = read_message(sock).await? else {
        return Ok(());
    };
    if msg.ty != wire::PRELOGIN {
        return Err(invalid(format!(
            "expected PRELOGIN, got packet type {}",
            msg.ty
        )));
    }
    let encryption = prelogin_encryption(&msg.payload);
    let prelogin = prelogin_response();
    write_message(sock, wire::TABULAR_RESULT, &prelogin, DEFAULT_PACKET_SIZE).await?;

    let Some(msg) = read_message(sock).await? else {
        // A client that asked for ENCRYPT_ON/REQ fails right after PRELOGIN.
        return Ok(());
    };
    if msg.ty == wire::PRELOGIN {
        return Err(invalid(format!(
            "client started a TLS handshake (its PRELOGIN ENCRYPTION was {encryption:?}); \
             the peer speaks no TLS: configure tiberius with EncryptionLevel::NotSupported"
        )));
    }
    if msg.ty != wire::LOGIN7 {
        return Err(invalid(format!(
            "expected LOGIN7, got packet type {}",
            msg.ty
        )));
    }
    let login = parse_login7(&msg.payload)?;
    let (tokens, accepted) = login.response();
    conn.record(Received::Login {
        user: login.user.clone(),
        database: login.database.clone(),
        app_name: login.app_name.clone(),
        accepted,
    });
    write_message(sock, wire::TABULAR_RESULT, &tokens, DEFAULT_PACKET_SIZE).await?;
    if !accepted {
        return Ok(());
    }

    let packet_size = login.packet_size;
    while let Some(msg) = read_message(sock).await? {
        let reply = answer(msg.ty, &msg.payload, conn);
        write_message(sock, wire::TABULAR_RESULT, &reply, packet_size).await?;
    }
    Ok(())
}

/// An ERROR + DONE answer for a request the peer could not decode.
fn decode_failure(what: &str, e: &io::Error, in_rpc: bool) -> Vec<u8> {
    eprintln!("[tds-peer] could not decode {what}: {e}");
    let msg = format!("tds-peer could not decode the {what}: {e}");
    encode_response(Response::error(50000, &msg), in_rpc)
}

/// Records one request and builds its answer.
fn answer(ty: u8, payload: &[u8], conn: &mut Conn<'_>) -> Vec<u8> {
    let script = &conn.shared.script;
    match ty {
        wire::SQL_BATCH => match parse_batch(payload) {
            Ok(text) => {
                let response = script.respond(&text);
                let starts_bulk = text
                    .trim_start()
                    .get(..11)
                    .is_some_and(|head| head.eq_ignore_ascii_case("INSERT BULK"));
                if starts_bulk && !matches!(response, Response::Error { .. }) {
                    conn.insert_bulk = Some(text.clone());
                }
                conn.record(Received::Batch(text));
                encode_response(response, false)
            }
            Err(e) => decode_failure("SQL batch", &e, false),
        },
        wire::RPC => match parse_rpc(payload) {
            Ok(rpc) => {
                let key = match &rpc {
                    Received::Rpc { proc, sql, .. } => sql.clone().unwrap_or_else(|| proc.clone()),
                    _ => String::new(),
                };
                let response = script.respond(&key);
                conn.record(rpc);
                encode_response(response, true)
            }
            Err(e) => decode_failure("RPC", &e, true),
        },
        wire::ATTENTION => {
            conn.record(Received::Attention);
            let mut t = Tokens::default();
            t.done(DONE, DONE_ATTN, 0, 0);
            t.0
        }
        wire::BULK_LOAD => {
            // Like SQL Server, accept bulk-load data only right after an INSERT BULK.
            let Some(statement) = conn.insert_bulk.take() else {
                let e = invalid("no INSERT BULK was accepted on this connection before it");
                return decode_failure("bulk load", &e, false);
            };
            match parse_bulk(payload) {
                Ok((columns, rows)) => {
                    let n = rows.len() as u64;
                    conn.record(Received::BulkLoad {
                        statement,
                        columns,
                        rows,
                    });
                    let mut t = Tokens::default();
                    t.done(DONE, DONE_COUNT, 0, n);
                    t.0
                }
                Err(e) => decode_failure("bulk load", &e, false),
            }
        }
        other => {
            conn.record(Received::Other { packet_type: other });
            let mut t = Tokens::default();
            t.done(DONE, DONE_FINAL, 0, 0);
            t.0
        }
    }
}
