//! A scripted TDS 7.4 test peer: a tiny SQL Server stand-in for tests.
//!
//! Why it exists: eavpivot's main target is Microsoft SQL Server (through
//! tiberius), but no SQL Server can run on the development or CI machines and
//! published mock servers do not interoperate with tiberius 0.13. This peer,
//! written from the MS-TDS specification, speaks just enough of the protocol
//! for tiberius to log in, send SQL batches, RPCs (`sp_executesql`), attention
//! signals and bulk loads, and read scripted result sets, row counts and
//! errors. It records everything it receives (never the password), with the
//! connection it came on, so tests can assert the exact statement sequence.
//!
//! Bulk loads: script the metadata query (`SELECT TOP 0 <columns> FROM
//! <table>`) with an empty result set whose columns are the table's; the
//! `INSERT BULK` batch gets a plain DONE; the BulkLoad message that must follow
//! it on the same connection (COLMETADATA, ROW/NBCROW tokens, DONE) is decoded
//! by the client's own COLMETADATA into typed [`Value`]s, recorded as
//! [`Received::BulkLoad`], and answered with DONE carrying the row count.
//!
//! It listens on `127.0.0.1:<ephemeral>` in its own thread with its own tokio
//! runtime, so it also serves the eavpivot binary run as a subprocess.
//!
//! TDS 8 strict: [`TdsPeer::start_tls`] wraps every connection in TLS from its first byte
//! (ALPN `tds/8.0`), as SQL Server 2022 and Azure SQL do for `encrypt=strict`; inside it
//! the peer is the same.
//!
//! Client requirements otherwise: the peer speaks no TLS in PRELOGIN. It answers PRELOGIN with
//! ENCRYPTION = NOT_SUP, so tiberius must use `EncryptionLevel::NotSupported`
//! (a client asking for `On`/`Required` fails right after PRELOGIN with
//! "Server does not allow the requested encryption level."; one with `Off`
//! starts a TLS handshake, which the peer rejects by closing the connection).
//! Scripted login failures: password `wrong` gives error 18456, database
//! `nosuchdb` gives error 4060 (then 18456).
//!
//! Use from an integration test with
//! `#[path = "common/tds_peer.rs"] mod tds_peer;`.
#![allow(dead_code, unused_imports)]

#[path = "tds_peer/decode.rs"]
mod decode;
#[path = "tds_peer/login.rs"]
mod login;
#[path = "tds_peer/requests.rs"]
mod requests;
#[path = "tds_peer/script.rs"]
mod script;
#[path = "tds_peer/session.rs"]
mod session;
#[path = "tds_peer/tokens.rs"]
mod tokens;
#[path = "tds_peer/wire.rs"]
mod wire;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub use script::{
    contains, contains_ignore_case, starts_with, when, BulkColumn, ColType, Column, Matcher,
    Received, Response, Rule, Script, Value,
};

use session::Shared;

/// A running peer. Dropping it (or [`TdsPeer::shutdown`]) stops it and closes
/// every open connection.
pub struct TdsPeer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl TdsPeer {
    /// Starts a peer answering with `script` on 127.0.0.1 (ephemeral port).
    ///
    /// # Panics
    /// If no loopback port can be bound or the thread cannot be spawned.
    pub fn start(script: Script) -> TdsPeer {
        TdsPeer::start_with(script, None)
    }

    /// Starts a peer that speaks TDS 8 strict: TLS with `tls` (a server config) before any
    /// TDS byte.
    pub fn start_tls(script: Script, tls: Arc<rustls::ServerConfig>) -> TdsPeer {
        TdsPeer::start_with(script, Some(tls))
    }

    fn start_with(script: Script, tls: Option<Arc<rustls::ServerConfig>>) -> TdsPeer {
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").expect("tds-peer: bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("tds-peer: set listener non-blocking");
        let addr = listener.local_addr().expect("tds-peer: local address");
        let shared = Arc::new(Shared {
            script,
            received: Mutex::new(Vec::new()),
            connections: AtomicUsize::new(0),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (shared, stop) = (shared.clone(), stop.clone());
            std::thread::Builder::new()
                .name(format!("tds-peer-{}", addr.port()))
                .spawn(move || serve(listener, shared, stop, tls))
                .expect("tds-peer: spawn thread")
        };
        TdsPeer {
            addr,
            shared,
            stop,
            thread: Some(thread),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// A snapshot of everything received so far, in order, across connections.
    pub fn received(&self) -> Vec<Received> {
        self.shared.log().iter().map(|(_, r)| r.clone()).collect()
    }

    /// The same, each with the number of the connection it came on: 1 for
    /// the first connection the peer accepted, 2 for the next, and so on.
    pub fn received_by_connection(&self) -> Vec<(usize, Received)> {
        self.shared.log().clone()
    }

    /// Only the SQL texts received: batch texts and RPC statements (the
    /// `sp_executesql` SQL, or the procedure name), in order.
    pub fn statements(&self) -> Vec<String> {
        self.shared
            .log()
            .iter()
            .filter_map(|(_, r)| match r {
                Received::Batch(sql) => Some(sql.clone()),
                Received::Rpc { proc, sql, .. } => Some(sql.clone().unwrap_or(proc.clone())),
                _ => None,
            })
            .collect()
    }

    /// Forgets everything recorded so far.
    pub fn clear(&self) {
        self.shared.log().clear();
    }

    /// A tiberius config for this peer: SQL login `user`/`password`,
    /// `EncryptionLevel::NotSupported`, and `database` if given.
    pub fn tiberius_config(
        &self,
        user: &str,
        password: &str,
        database: Option<&str>,
    ) -> tiberius::Config {
        let mut config = tiberius::Config::new();
        config.host("127.0.0.1");
        config.port(self.port());
        config.authentication(tiberius::AuthMethod::sql_server(user, password));
        config.encryption(tiberius::EncryptionLevel::NotSupported);
        if let Some(db) = database {
            config.database(db);
        }
        config
    }

    /// Stops the peer and waits for its thread (same as dropping it).
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.stop.store(true, Ordering::SeqCst);
            // Wake the accept loop so it sees the flag.
            let _ = std::net::TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
            let _ = thread.join();
        }
    }
}

impl Drop for TdsPeer {
    fn drop(&mut self) {
        self.stop_now();
    }
}

/// The peer thread: a current-thread runtime running the accept loop. When
/// the loop ends the runtime is dropped, which closes every connection.
fn serve(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    tls: Option<Arc<rustls::ServerConfig>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("[tds-peer] cannot build a tokio runtime: {e}");
            return;
        }
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::from_std(listener) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("[tds-peer] cannot register the listener: {e}");
                return;
            }
        };
        while !stop.load(Ordering::SeqCst) {
            match listener.accept().await {
                Ok(_) if stop.load(Ordering::SeqCst) => break,
                Ok((sock, _)) => {
                    let _ = sock.set_nodelay(true);
                    let shared = shared.clone();
                    match &tls {
                        None => {
                            tokio::spawn(session::run(sock, shared));
                        }
                        Some(config) => {
                            let acceptor = tokio_rustls::TlsAcceptor::from(config.clone());
                            tokio::spawn(async move {
                                match acceptor.accept(sock).await {
                                    Ok(tls) => session::run(tls, shared).await,
                                    Err(e) => eprintln!("[tds-peer] TLS handshake failed: {e}"),
                                }
                            });
                        }
                    }
                }
                Err(e) => {
                    eprintln!("[tds-peer] accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }
    });
}
