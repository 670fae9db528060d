//! One error type for the library, sorted by what the user must do about it, which is also
//! the exit code: fix the job file or the command line (2), or look at the data/server (1).

use crate::config::ConfigError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The job file is invalid. Exit 2.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The command line or connection string is unusable. Exit 2.
    #[error("{0}")]
    Usage(String),
    /// Could not connect or log in. Exit 1.
    #[error("{0}")]
    Connect(String),
    /// The database rejected a statement. Exit 1. `kind` is what the server's error code
    /// says happened, for the callers that explain some errors further.
    #[error("{context}: {message}")]
    Database {
        context: String,
        message: String,
        kind: ErrorKind,
    },
    /// The data or the target's state makes the job impossible (conflicts, zero attributes,
    /// limits, verification mismatch, target exists). Exit 1.
    #[error("{0}")]
    Job(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
}

impl Error {
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Config(_) | Error::Usage(_) => 2,
            _ => 1,
        }
    }

    /// A database error of no kind eavpivot tells apart (or not from a server at all).
    pub fn database(context: impl Into<String>, message: impl Into<String>) -> Error {
        Error::database_of(ErrorKind::Other, context, message)
    }

    /// A database error whose kind the backend read from the driver's error code.
    pub fn database_of(
        kind: ErrorKind,
        context: impl Into<String>,
        message: impl Into<String>,
    ) -> Error {
        Error::Database {
            context: context.into(),
            message: message.into(),
            kind,
        }
    }

    /// What the server's error code said happened: [`ErrorKind::Other`] for every error that
    /// is not a database error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Database { kind, .. } => *kind,
            _ => ErrorKind::Other,
        }
    }

    /// The same error with more said about where it happened (`after CREATE TABLE …`).
    pub fn with_context(self, what: &str) -> Error {
        match self {
            Error::Database {
                context,
                message,
                kind,
            } => Error::Database {
                context: format!("{what}: {context}"),
                message,
                kind,
            },
            Error::Job(m) => Error::Job(format!("{what}: {m}")),
            other => other,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong in the database, read from the server's error *code* — SQLSTATE on
/// PostgreSQL, the error number on MariaDB and SQL Server, the extended result code on SQLite
/// — never from its message, which a server may speak in another language (MariaDB's
/// `lc_messages`, a localized SQL Server). Like sqlx's `ErrorKind`, but only the kinds
/// eavpivot acts on; each backend maps its driver's codes where it converts driver errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A unique or primary-key constraint refused a repeated key.
    UniqueViolation,
    /// A NOT NULL column (or primary-key column) was given NULL.
    NotNullViolation,
    /// A statement gave up waiting for a lock (the job's `lock_timeout`).
    LockTimeout,
    /// Anything else.
    Other,
}

impl ErrorKind {
    /// A constraint of a key refused the rows: a repeated or a NULL key.
    pub fn is_key_violation(self) -> bool {
        matches!(
            self,
            ErrorKind::UniqueViolation | ErrorKind::NotNullViolation
        )
    }
}

pub use crate::display::shown;
use crate::display::SHOWN_CHARS;

/// Bytes that are not text (not valid UTF-8), as an `x'…'` hex literal, cut like [`shown`].
pub fn shown_bytes(bytes: &[u8]) -> String {
    if bytes.len() <= SHOWN_CHARS / 2 {
        format!("x'{}'", crate::value::hex(bytes))
    } else {
        format!(
            "x'{}…' ({} bytes)",
            crate::value::hex(&bytes[..SHOWN_CHARS / 2]),
            bytes.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_with_their_length() {
        assert_eq!(shown("a'b\n"), "'a\\'b\\n'");
        let long = "N".repeat(10_485_760);
        let s = shown(&long);
        assert!(s.len() < 160 && s.ends_with("…' (10485760 bytes)"), "{s}");
        assert_eq!(shown_bytes(&[0x61, 0xFF]), "x'61FF'");
        assert!(shown_bytes(&[0xFF; 1000]).len() < 160);
        assert!(shown_bytes(&[0xFF; 1000]).ends_with("…' (1000 bytes)"));
    }
}
