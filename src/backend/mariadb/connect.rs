//! Opening a MariaDB / MySQL connection the way the `mysql` client does: `ssl-mode`
//! (DISABLED, PREFERRED — the default —, REQUIRED, VERIFY_CA, VERIFY_IDENTITY), `ssl-ca`,
//! `ssl-cert`/`ssl-key`, `MYSQL_PWD` where the URL has no password, and connect + TLS +
//! login bounded by `--connect-timeout`, transient failures retried until then.
//!
//! mysql_async knows none of the `ssl-*` names, so they are taken out of the URL's query
//! here and turned into its [`SslOpts`] (rustls, as for the other servers).

use std::path::PathBuf;
use std::time::Duration;

use mysql_async::{ClientIdentity, Conn, DriverError, Opts, OptsBuilder, SslOpts};

use crate::backend::connection::{error_chain, with_retry, Attempt, PasswordLogin};
use crate::backend::{credentials, ConnectOptions};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Disabled,
    Preferred,
    Required,
    VerifyCa,
    VerifyIdentity,
}

/// Options for this connection and its reopening (the streaming read's second connection).
#[derive(Clone)]
pub struct MyTarget {
    pub opts: Opts,
    /// PREFERRED: TLS was asked for; without it when the server has none.
    preferred: bool,
    shown: String,
    pub timeout: Duration,
}

/// Parse `url` (`mysql://` or `mariadb://`), its `ssl-*` options and the fallback password.
pub fn parse(url: &str, options: &ConnectOptions, session_setup: Vec<String>) -> Result<MyTarget> {
    let mut url = url::Url::parse(url.trim())
        .map_err(|e| Error::Usage(format!("mariadb connection URL is not valid: {e}")))?;
    if url.scheme().eq_ignore_ascii_case("mariadb") {
        // `set_scheme` refuses some changes between special and non-special schemes; neither is.
        url.set_scheme("mysql")
            .map_err(|_| Error::Usage("mariadb connection URL: cannot read the scheme".into()))?;
    }
    // `ssl-*` and `password` (README "Where the password comes from"), which mysql_async
    // does not read from the query.
    let mut ssl: [Option<String>; 5] = Default::default();
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, v)| {
            let slot = match k.to_ascii_lowercase().replace('_', "-").as_str() {
                "ssl-mode" | "sslmode" => 0,
                "ssl-ca" => 1,
                "ssl-cert" => 2,
                "ssl-key" => 3,
                "password" => 4,
                _ => return true,
            };
            ssl[slot] = Some(v.to_string());
            false
        })
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if kept.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(kept);
    }
    // mysql_async's own messages name parameters, never the password.
    let opts = Opts::from_url(url.as_str())
        .map_err(|e| Error::Usage(format!("mariadb connection string is not valid: {e}")))?;
    let [mode, ca, cert, key, query_password] = ssl;
    let mode = match mode.as_deref().map(str::to_ascii_uppercase).as_deref() {
        None if opts.ssl_opts().is_some() => None,
        None | Some("PREFERRED") => Some(Mode::Preferred),
        Some("DISABLED") => Some(Mode::Disabled),
        Some("REQUIRED") => Some(Mode::Required),
        Some("VERIFY_CA") => Some(Mode::VerifyCa),
        Some("VERIFY_IDENTITY") => Some(Mode::VerifyIdentity),
        Some(other) => {
            return Err(Error::Usage(format!(
                "mariadb ssl-mode={other} is not one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY"
            )))
        }
    };
    let mut builder = OptsBuilder::from_opts(opts.clone()).init(session_setup);
    // Over TCP to 127.0.0.1 mysql_async would by default ask the server for its @@socket and
    // reconnect through that file here: through an SSH tunnel or proxy on this machine, that
    // may be another server than the one named. The host and port given are what is used,
    // unless the string itself asks for `prefer_socket`.
    if !url.query_pairs().any(|(k, _)| k == "prefer_socket") {
        builder = builder.prefer_socket(false);
    }
    if let Some(mode) = mode {
        builder = builder.ssl_opts(ssl_opts(mode, ca, cert, key)?);
    }
    if opts.pass().is_none() && query_password.is_some() {
        builder = builder.pass(query_password);
    } else if opts.pass().is_none() {
        let password = options
            .password
            .clone()
            .or_else(|| credentials::fallback_password("MYSQL_PWD"));
        builder = builder.pass(password);
    }
    let shown = format!(
        "{}:{}/{} as {}",
        opts.ip_or_hostname(),
        opts.tcp_port(),
        opts.db_name().unwrap_or(""),
        opts.user().unwrap_or("?")
    );
    Ok(MyTarget {
        opts: builder.into(),
        preferred: mode == Some(Mode::Preferred),
        shown,
        timeout: options.connect_timeout,
    })
}

fn ssl_opts(
    mode: Mode,
    ca: Option<String>,
    cert: Option<String>,
    key: Option<String>,
) -> Result<Option<SslOpts>> {
    // Like the mysql client: REQUIRED checks the chain only when a CA is named.
    let check_chain = match mode {
        Mode::Disabled => return Ok(None),
        Mode::Preferred | Mode::Required => ca.is_some(),
        Mode::VerifyCa | Mode::VerifyIdentity => true,
    };
    let mut ssl = SslOpts::default()
        .with_danger_accept_invalid_certs(!check_chain)
        .with_danger_skip_domain_validation(mode != Mode::VerifyIdentity);
    if let Some(ca) = ca {
        ssl = ssl
            .with_root_certs(vec![PathBuf::from(ca).into()])
            .with_disable_built_in_roots(true);
    }
    match (cert, key) {
        (Some(cert), Some(key)) => Ok(Some(ssl.with_client_identity(Some(ClientIdentity::new(
            PathBuf::from(cert).into(),
            PathBuf::from(key).into(),
        ))))),
        (None, None) => Ok(Some(ssl)),
        _ => Err(Error::Usage(
            "a mariadb client certificate needs both ssl-cert and ssl-key".into(),
        )),
    }
}

#[async_trait::async_trait]
impl PasswordLogin for MyTarget {
    type Conn = Conn;
    fn shown(&self) -> &str {
        &self.shown
    }
    /// ER_ACCESS_DENIED_ERROR (1045) with no password sent, known by the number [`attempt`]
    /// writes (`ERROR 1045 (28000): …`): the server's text ("using password: NO") follows
    /// its `lc_messages`.
    fn wants_password(&self, line: &str) -> bool {
        self.opts.pass().is_none() && line.contains(": ERROR 1045 (")
    }
    fn set_password(&mut self, password: String) {
        self.opts = OptsBuilder::from_opts(self.opts.clone())
            .pass(Some(password))
            .into();
    }
    async fn open(&self) -> Result<Conn> {
        open(self).await
    }
}

/// Connect and log in within the timeout, without TLS when PREFERRED meets a server that
/// has none.
pub async fn open(target: &MyTarget) -> Result<Conn> {
    let timeout = target.timeout;
    let outcome = with_retry(timeout, |remaining| async move {
        match attempt(target.opts.clone(), remaining).await {
            Err((_, true)) if target.preferred => {
                let plain = OptsBuilder::from_opts(target.opts.clone()).ssl_opts(None);
                attempt(plain.into(), remaining).await.map_err(|(a, _)| a)
            }
            other => other.map_err(|(a, _)| a),
        }
    })
    .await;
    outcome.map_err(|failure| failure.into_error(&format!("mariadb {}", target.shown), timeout))
}

/// One try; the flag says the server offers no TLS.
async fn attempt(opts: Opts, remaining: Duration) -> Result<Conn, (Attempt, bool)> {
    match tokio::time::timeout(remaining, Conn::new(opts)).await {
        Err(_) => Err((Attempt::timeout(), false)),
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(mysql_async::Error::Driver(DriverError::NoClientSslFlagFromServer))) => Err((
            Attempt::fatal("the server offers no TLS (ssl-mode=REQUIRED or stronger asks for it)"),
            true,
        )),
        Ok(Err(mysql_async::Error::Server(e))) => Err((
            Attempt {
                reason: format!("ERROR {} ({}): {}", e.code, e.state, e.message),
                // ER_CON_COUNT_ERROR: too many connections, for now.
                transient: e.code == 1040,
                timed_out: false,
            },
            false,
        )),
        Ok(Err(e)) => {
            let mut reason = error_chain(&e);
            // The TLS library's own (English) words, not the server's: it gives no code.
            if reason.contains("certificate") {
                reason.push_str(
                    " (the server's certificate is not trusted: name its CA with ssl-ca=FILE, or use ssl-mode=REQUIRED to encrypt without checking)",
                );
            }
            Err((Attempt::from_io_chain(&e, reason), false))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The password prompt follows the error number, so a server speaking German
    /// (`lc_messages`) still gets one; a login that sent a password, or another error, not.
    #[test]
    fn a_refused_login_without_password_is_known_by_its_number() {
        let options = ConnectOptions::default();
        let target = parse("mariadb://u@127.0.0.1:3306/db", &options, Vec::new()).expect("url");
        let german = "cannot connect to mariadb 127.0.0.1:3306/db as u: ERROR 1045 (28000): \
                      Benutzer 'u'@'localhost' hat keine Zugriffsberechtigung (verwendetes Passwort: nein)";
        assert!(target.wants_password(german));
        let other = "cannot connect to mariadb 127.0.0.1:3306/db as u: ERROR 1049 (42000): Unknown database 'db'";
        assert!(!target.wants_password(other));
        let with_password =
            parse("mariadb://u:pw@127.0.0.1:3306/db", &options, Vec::new()).expect("url");
        assert!(!with_password.wants_password(german));
    }
}
