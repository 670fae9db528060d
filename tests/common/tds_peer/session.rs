//! One client connection: PRELOGIN, LOGIN7, then requests until EOF.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::net::TcpStream;

use super::login::{parse_login7, prelogin_encryption, prelogin_response};
use super::requests::{parse_batch, parse_bulk, parse_rpc};
use super::script::{Received, Response, Script};
use super::tokens::{encode_response, Tokens, DONE, DONE_ATTN, DONE_COUNT, DONE_FINAL};
use super::wire::{self, invalid, read_message, write_message, DEFAULT_PACKET_SIZE};

/// State shared by the listener, every connection and the [`super::TdsPeer`].
pub struct Shared {
    pub script: Script,
    pub received: Mutex<Vec<Received>>,
}

impl Shared {
    pub fn log(&self) -> MutexGuard<'_, Vec<Received>> {
        // A panicking test thread must not hide what was recorded.
        self.received.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn record(&self, r: Received) {
        self.log().push(r);
    }
}

/// Serves one connection; errors are logged and end the connection.
pub async fn run(mut sock: TcpStream, shared: Arc<Shared>) {
    if let Err(e) = serve(&mut sock, &shared).await {
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

async fn serve(sock: &mut TcpStream, shared: &Shared) -> io::Result<()> {
    sock.set_nodelay(true)?;

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
    shared.record(Received::Login {
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
        let reply = answer(msg.ty, &msg.payload, shared);
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
fn answer(ty: u8, payload: &[u8], shared: &Shared) -> Vec<u8> {
    match ty {
        wire::SQL_BATCH => match parse_batch(payload) {
            Ok(text) => {
                let response = shared.script.respond(&text);
                shared.record(Received::Batch(text));
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
                let response = shared.script.respond(&key);
                shared.record(rpc);
                encode_response(response, true)
            }
            Err(e) => decode_failure("RPC", &e, true),
        },
        wire::ATTENTION => {
            shared.record(Received::Attention);
            let mut t = Tokens::default();
            t.done(DONE, DONE_ATTN, 0, 0);
            t.0
        }
        wire::BULK_LOAD => match parse_bulk(payload) {
            Ok(rows) => {
                let n = rows.len() as u64;
                shared.record(Received::BulkRows { rows });
                let mut t = Tokens::default();
                t.done(DONE, DONE_COUNT, 0, n);
                t.0
            }
            Err(e) => decode_failure("bulk load", &e, false),
        },
        other => {
            shared.record(Received::Other { packet_type: other });
            let mut t = Tokens::default();
            t.done(DONE, DONE_FINAL, 0, 0);
            t.0
        }
    }
}
