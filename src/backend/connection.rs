//! What every driver's connect shares: the options, retrying a refused or timed-out connect,
//! asking for a password once, one-line error chains, and how a connection string is shown
//! without its password ([`crate::secrets::redact`] reads each form with its own grammar).
//! Which driver reads a string is the registry's ([`super::drivers::ConnectionSpec`]).

use std::time::Duration;

use super::credentials;
use crate::error::{Error, Result};
pub use crate::secrets::redact_or_kind as redact;

/// The file the embedded default uses when no connection is given.
pub const EMBEDDED_DEFAULT: &str = "eavpivot.db";

#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub connect_timeout: Duration,
    /// Password from `EAVPIVOT_PASSWORD`, used when the connection string has none.
    pub password: Option<String>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            connect_timeout: Duration::from_secs(15),
            password: None,
        }
    }
}

/// An error and everything under it, each cause once: drivers wrap an OS error in a message
/// that already quotes it (`Is a directory (os error 21): Is a directory`), and their Debug
/// forms (`Tcp("h")`) are never shown.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut line = err.to_string();
    let mut cause = err.source();
    while let Some(e) = cause {
        let text = e.to_string();
        if !line.contains(&text) {
            line = if text.contains(&line) {
                text
            } else {
                format!("{line}: {text}")
            };
        }
        cause = e.source();
    }
    // Some drivers repeat their own prefix at two levels (`Input/output error: Input/output
    // error: …`): one is enough.
    let mut parts: Vec<&str> = line.split(": ").collect();
    parts.dedup();
    parts.join(": ")
}

/// Why one connection attempt failed, and whether another may succeed.
#[derive(Debug)]
pub struct Attempt {
    pub reason: String,
    /// A reset, an aborted handshake, a server starting up or full: worth another try.
    pub transient: bool,
    /// The attempt used up the time it was given.
    pub timed_out: bool,
}

impl Attempt {
    pub fn fatal(reason: impl Into<String>) -> Attempt {
        Attempt {
            reason: reason.into(),
            transient: false,
            timed_out: false,
        }
    }

    pub fn timeout() -> Attempt {
        Attempt {
            reason: "timed out".into(),
            transient: false,
            timed_out: true,
        }
    }

    /// `reason`, transient when an OS error under `err` says the connection broke or was
    /// reset (not refused: a wrong port should fail at once).
    pub fn from_io_chain(err: &(dyn std::error::Error + 'static), reason: String) -> Attempt {
        use std::io::ErrorKind::*;
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
        let mut transient = false;
        while let Some(e) = cause {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                transient |= matches!(
                    io.kind(),
                    ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof
                );
            }
            cause = e.source();
        }
        Attempt {
            reason,
            transient,
            timed_out: false,
        }
    }
}

impl Attempt {
    /// The one line a failed connection gives: `cannot connect to {server}: {why}`, where a
    /// timeout says what was waited for and how long.
    pub fn into_error(self, server: &str, timeout: Duration) -> Error {
        let reason = if self.timed_out {
            format!(
                "no TCP connection, TLS handshake and login within {} s (raise --connect-timeout, or check host, port and firewall)",
                timeout.as_secs()
            )
        } else {
            self.reason
        };
        Error::Connect(format!("cannot connect to {server}: {reason}"))
    }
}

/// A connection target that can ask for a password when the server wants one.
#[async_trait::async_trait]
pub trait PasswordLogin: Send + Sync {
    type Conn: Send;
    /// `host:port/db as user`, for the prompt.
    fn shown(&self) -> &str;
    /// The login failed (`line`) because no password was given.
    fn wants_password(&self, line: &str) -> bool;
    fn set_password(&mut self, password: String);
    async fn open(&self) -> Result<Self::Conn>;
}

/// Open `target`; when the server asks for a password none was given, ask the person at the
/// terminal (if there is one, [`credentials::prompt_password`]) and try once more. The
/// password stays in `target` for later connections (the streaming read's).
pub async fn open_asking<T: PasswordLogin>(target: &mut T) -> Result<T::Conn> {
    match target.open().await {
        Err(Error::Connect(line)) if target.wants_password(&line) => {
            let Some(password) = credentials::prompt_password(target.shown()) else {
                return Err(Error::Connect(line));
            };
            target.set_password(password);
            target.open().await
        }
        other => other,
    }
}

/// What [`with_retry`] needs to know of a failed attempt.
pub trait RetryFailure {
    fn transient(&self) -> bool;
    fn reason(&self) -> String;
}

impl RetryFailure for Attempt {
    fn transient(&self) -> bool {
        self.transient
    }
    fn reason(&self) -> String {
        self.reason.clone()
    }
}

/// Run `attempt` (given the time left) until it succeeds, fails for good, or `timeout` has
/// passed; transient failures wait 0.2 s, 0.4 s, … (at most 2 s) before the next try. Only
/// connecting and logging in are retried, never a statement.
pub async fn with_retry<T, E, F, Fut>(timeout: Duration, mut attempt: F) -> Result<T, E>
where
    E: RetryFailure + From<Attempt>,
    F: FnMut(Duration) -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = Duration::from_millis(200);
    loop {
        let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
        if remaining.is_zero() {
            return Err(Attempt::timeout().into());
        }
        match attempt(remaining).await {
            Err(failure) if failure.transient() => {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                if left <= pause {
                    return Err(failure);
                }
                eprintln!(
                    "connecting: {}; trying again in {:.1} s",
                    failure.reason(),
                    pause.as_secs_f64()
                );
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_shown() {
        let cases = [
            ("postgres://me:s3cret@db:5432/x", "postgres://me:***@db:5432/x"),
            ("mysql://root:s3cret@127.0.0.1/test", "mysql://root:***@127.0.0.1/test"),
            ("mssql://sa@h:1433/db?password=s3cret&trust_cert=true", "mssql://sa@h:1433/db?password=***&trust_cert=true"),
            (
                "Server=tcp:h,1433;Database=M;User Id=sa;Password=s3cret;TrustServerCertificate=true",
                "Server=tcp:h,1433;Database=M;User Id=sa;Password=***;TrustServerCertificate=true",
            ),
            ("Server=h;PWD=s3cret", "Server=h;PWD=***"),
        ];
        for (given, shown) in cases {
            assert_eq!(redact(given), shown);
            assert!(!redact(given).contains("s3cret"));
        }
    }

    #[derive(Debug)]
    struct Wrapped(&'static str, std::io::Error);
    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{}{}", self.0, self.1)
        }
    }
    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.1)
        }
    }

    #[test]
    fn error_chains_say_each_cause_once() {
        let os = || std::io::Error::from_raw_os_error(21);
        // The driver already quotes its cause: not repeated.
        let quoted = Wrapped("error connecting to server: ", os());
        assert_eq!(
            error_chain(&quoted),
            "error connecting to server: Is a directory (os error 21)"
        );
        // A driver that names only its kind gets the cause appended, once.
        let bare = Wrapped(
            "",
            std::io::Error::other(Wrapped("Input/output error: ", os())),
        );
        assert_eq!(
            error_chain(&bare),
            "Input/output error: Is a directory (os error 21)"
        );
    }
}
