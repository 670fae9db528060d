//! Opening a PostgreSQL connection the way libpq does: `sslmode` with its six meanings,
//! certificate files, `PG*` environment variables where the string says nothing, the
//! password from `~/.pgpass`, and the whole of connect + TLS + login bounded by
//! `--connect-timeout`.
//!
//! tokio-postgres knows only three SSL modes and none of the certificate options, so those
//! are taken out of the string here (by the libpq and URL grammars of
//! [`crate::backend::credentials`]) before tokio-postgres parses the rest.

use std::time::Duration;

use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::{Client, Config, NoTls};

use crate::backend::connection::{error_chain, with_retry, Attempt, PasswordLogin};
use crate::backend::credentials::{self, is_libpq, libpq_pairs};
use crate::backend::tls::{client_config, MakeRustls, TlsFiles, Verify};
use crate::backend::ConnectOptions;
use crate::error::{Error, Result};

/// libpq's `sslmode`: `prefer` when nothing is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// Everything needed to open (and re-open, for the streaming read) a connection.
#[derive(Clone)]
pub struct PgTarget {
    pub config: Config,
    mode: Mode,
    files: TlsFiles,
    /// `host:port/database as user`, safe to print.
    shown: String,
    timeout: Duration,
}

/// Parse a URL or libpq string, fill the gaps from the environment, and find the password.
pub fn parse(text: &str, options: &ConnectOptions) -> Result<PgTarget> {
    let (rest, ssl) = take_ssl_options(text)?;
    let mut config: Config = rest.parse().map_err(|e| {
        Error::Usage(format!(
            "postgres connection string is not valid: {}",
            error_chain(&e)
        ))
    })?;
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if config.get_hosts().is_empty() {
        config.host(env("PGHOST").as_deref().unwrap_or("localhost"));
    }
    if config.get_ports().is_empty() {
        if let Some(port) = env("PGPORT").and_then(|p| p.parse().ok()) {
            config.port(port);
        }
    }
    if config.get_user().is_none() {
        if let Some(user) = env("PGUSER").or_else(|| env("USER")) {
            config.user(user);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(db) = env("PGDATABASE") {
            config.dbname(db);
        }
    }
    let mode_text = ssl.mode.or_else(|| env("PGSSLMODE"));
    let mode = parse_mode(mode_text.as_deref().unwrap_or("prefer"))?;
    let files = TlsFiles {
        root: ssl.root.or_else(|| env("PGSSLROOTCERT")).map(Into::into),
        cert: ssl.cert.or_else(|| env("PGSSLCERT")).map(Into::into),
        key: ssl.key.or_else(|| env("PGSSLKEY")).map(Into::into),
    };
    let host = config
        .get_hosts()
        .first()
        .map(host_text)
        .unwrap_or_default();
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("?").to_string();
    let db = config.get_dbname().unwrap_or(&user).to_string();
    if config.get_password().is_none() {
        let password = options
            .password
            .clone()
            .or_else(|| credentials::fallback_password("PGPASSWORD"))
            .or_else(|| credentials::pgpass_password(&host, port, &db, &user));
        if let Some(password) = password {
            config.password(password);
        }
    }
    config.connect_timeout(options.connect_timeout);
    Ok(PgTarget {
        shown: format!("{host}:{port}/{db} as {user}"),
        config,
        mode,
        files,
        timeout: options.connect_timeout,
    })
}

fn host_text(host: &Host) -> String {
    match host {
        Host::Tcp(name) => name.clone(),
        #[cfg(unix)]
        Host::Unix(path) => path.display().to_string(),
    }
}

fn parse_mode(text: &str) -> Result<Mode> {
    Ok(match text.to_ascii_lowercase().as_str() {
        "disable" => Mode::Disable,
        "allow" => Mode::Allow,
        "prefer" => Mode::Prefer,
        "require" => Mode::Require,
        "verify-ca" => Mode::VerifyCa,
        "verify-full" => Mode::VerifyFull,
        other => {
            return Err(Error::Usage(format!(
                "postgres sslmode={other} is not one of disable, allow, prefer, require, verify-ca, verify-full"
            )))
        }
    })
}

#[derive(Default)]
struct SslOptions {
    mode: Option<String>,
    root: Option<String>,
    cert: Option<String>,
    key: Option<String>,
}

impl SslOptions {
    /// Keep `key`'s value if it is one of ours; false when it belongs to tokio-postgres.
    fn take(&mut self, key: &str, value: &str) -> bool {
        let slot = match key.to_ascii_lowercase().as_str() {
            "sslmode" => &mut self.mode,
            "sslrootcert" => &mut self.root,
            "sslcert" => &mut self.cert,
            "sslkey" => &mut self.key,
            _ => return false,
        };
        *slot = Some(value.to_string());
        true
    }
}

/// The string without the SSL options, and those options.
fn take_ssl_options(text: &str) -> Result<(String, SslOptions)> {
    let mut ssl = SslOptions::default();
    let text = text.trim();
    if is_libpq(text) {
        let pairs = libpq_pairs(text).ok_or_else(|| {
            Error::Usage("postgres key=value string has an unterminated quote".into())
        })?;
        let rest: Vec<String> = pairs
            .into_iter()
            .filter(|(k, _, v)| !ssl.take(k, v))
            .map(|(k, raw, _)| format!("{k}={raw}"))
            .collect();
        return Ok((rest.join(" "), ssl));
    }
    let mut url = url::Url::parse(text)
        .map_err(|e| Error::Usage(format!("postgres connection URL is not valid: {e}")))?;
    if let Some(query) = url.query() {
        // The pairs not taken are kept exactly as written: re-encoding them would write a
        // space as `+`, which tokio-postgres does not decode (`options=-c%20…` broke).
        let kept: Vec<String> = query
            .split('&')
            .filter(|pair| {
                let (k, v) = url::form_urlencoded::parse(pair.as_bytes())
                    .next()
                    .unwrap_or_default();
                !pair.is_empty() && !ssl.take(&k, &v)
            })
            .map(str::to_string)
            .collect();
        url.set_query((!kept.is_empty()).then(|| kept.join("&")).as_deref());
    }
    Ok((url.to_string(), ssl))
}

#[async_trait::async_trait]
impl PasswordLogin for PgTarget {
    type Conn = Client;
    fn shown(&self) -> &str {
        &self.shown
    }
    /// tokio-postgres's own (client-side, English, code-less) error when the server asks for a
    /// password and none was configured.
    fn wants_password(&self, line: &str) -> bool {
        self.config.get_password().is_none() && line.contains("password missing")
    }
    fn set_password(&mut self, password: String) {
        self.config.password(password);
    }
    async fn open(&self) -> Result<Client> {
        open(self).await
    }
}

/// Connect, negotiate TLS as `sslmode` says, and log in, all within the timeout; retry
/// transient failures (a reset connection, a server starting up or full) until then.
pub async fn open(target: &PgTarget) -> Result<Client> {
    let timeout = target.timeout;
    let shown = &target.shown;
    with_retry(timeout, |remaining| async move {
        let first = attempt(target, target.mode, remaining).await;
        match (target.mode, first) {
            // libpq's `allow`: plain first, TLS when the server refuses plain.
            (Mode::Allow, Err(e)) if !e.timed_out => {
                attempt(target, Mode::Require, remaining).await
            }
            (_, outcome) => outcome,
        }
    })
    .await
    .map_err(|failure| failure.into_error(&format!("postgres {shown}"), timeout))
}

/// How the server's certificate is checked under `mode`.
fn verify_for(target: &PgTarget, mode: Mode) -> Verify {
    match mode {
        Mode::VerifyFull => Verify::Full,
        Mode::VerifyCa => Verify::Chain,
        // libpq: with a root certificate, `require` checks the chain.
        _ if target.files.root.is_some() => Verify::Chain,
        _ => Verify::Nothing,
    }
}

/// The TLS a cancel request needs: the protocol sends it on a new connection, negotiated
/// like the session's (a `require` server refuses a plain one, and the cancel would be lost).
pub fn cancel_tls(target: &PgTarget) -> Result<MakeRustls> {
    let config = client_config(verify_for(target, target.mode), &target.files)?;
    Ok(MakeRustls::new(config))
}

async fn attempt(target: &PgTarget, mode: Mode, remaining: Duration) -> Result<Client, Attempt> {
    let mut config = target.config.clone();
    config.connect_timeout(remaining);
    let verify = verify_for(target, mode);
    let connected = match mode {
        Mode::Disable | Mode::Allow => {
            config.ssl_mode(SslMode::Disable);
            tokio::time::timeout(remaining, config.connect(NoTls))
                .await
                .map(|r| r.map(spawn))
        }
        _ => {
            config.ssl_mode(if mode == Mode::Prefer {
                SslMode::Prefer
            } else {
                SslMode::Require
            });
            let tls =
                client_config(verify, &target.files).map_err(|e| Attempt::fatal(e.to_string()))?;
            tokio::time::timeout(remaining, config.connect(MakeRustls::new(tls)))
                .await
                .map(|r| r.map(spawn))
        }
    };
    let client = match connected {
        Err(_) => return Err(Attempt::timeout()),
        Ok(Ok(client)) => client,
        Ok(Err(e)) => return Err(failure(&e, verify)),
    };
    // The session's output formats, whatever the database or role set (`Postgres::session_setup`).
    let setup_sql = crate::dialect::Postgres.session_setup();
    let setup = client.batch_execute(&setup_sql);
    match tokio::time::timeout(remaining, setup).await {
        Err(_) => Err(Attempt::timeout()),
        Ok(Ok(())) => Ok(client),
        Ok(Err(e)) => Err(failure(&e, verify)),
    }
}

/// Run the connection's I/O on the current runtime; errors surface on the client's next call.
fn spawn<S, T>((client, connection): (Client, tokio_postgres::Connection<S, T>)) -> Client
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

fn failure(err: &tokio_postgres::Error, verify: Verify) -> Attempt {
    if let Some(db) = err.as_db_error() {
        let code = db.code().code();
        let line = format!("{}: {} (SQLSTATE {code})", db.severity(), db.message());
        // cannot_connect_now (starting up) and too_many_connections pass.
        return Attempt {
            reason: line,
            transient: matches!(code, "57P03" | "53300"),
            timed_out: false,
        };
    }
    // What follows matches the client libraries' own (English) words, not the server's:
    // rustls's certificate errors and tokio-postgres's "password missing" carry no code.
    let mut reason = error_chain(err);
    if reason.contains("certificate") && verify != Verify::Nothing {
        reason.push_str(
            " (the server's certificate is not trusted: name its CA with sslrootcert=FILE, or use sslmode=require to encrypt without checking)",
        );
    }
    if reason.contains("password missing") {
        reason.push_str(
            " (the server asks for a password: put it in the URL, --password-file, EAVPIVOT_PASSWORD, PGPASSWORD or ~/.pgpass)",
        );
    }
    Attempt::from_io_chain(err, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssl_options_are_taken_out_of_urls_and_libpq_strings() {
        let (rest, ssl) = take_ssl_options(
            "postgres://u@h:5/d?sslmode=verify-full&sslrootcert=/ca.pem&application_name=x",
        )
        .unwrap();
        assert_eq!(rest, "postgres://u@h:5/d?application_name=x");
        assert_eq!(ssl.mode.as_deref(), Some("verify-full"));
        assert_eq!(ssl.root.as_deref(), Some("/ca.pem"));
        let (rest, ssl) = take_ssl_options("host=h sslmode=require dbname='a b'").unwrap();
        assert_eq!(rest, "host=h dbname='a b'");
        assert_eq!(ssl.mode.as_deref(), Some("require"));
        assert!(parse_mode("verify").is_err());
    }

    /// Found by the 100M runs: a server option with a space lost it on the way through.
    #[test]
    fn kept_url_options_keep_their_encoding() {
        let (rest, ssl) = take_ssl_options(
            "postgres://u@h/d?options=-c%20effective_cache_size%3D16GB&sslmode=disable&x=a+b",
        )
        .unwrap();
        assert_eq!(
            rest,
            "postgres://u@h/d?options=-c%20effective_cache_size%3D16GB&x=a+b"
        );
        assert_eq!(ssl.mode.as_deref(), Some("disable"));
        let (rest, _) = take_ssl_options("postgres://u@h/d?sslmode=require").unwrap();
        assert_eq!(rest, "postgres://u@h/d");
    }
}
