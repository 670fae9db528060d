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
    /// The database rejected a statement. Exit 1.
    #[error("{context}: {message}")]
    Database { context: String, message: String },
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

    pub fn database(context: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Database {
            context: context.into(),
            message: message.into(),
        }
    }

    /// The same error with more said about where it happened (`after CREATE TABLE …`).
    pub fn with_context(self, what: &str) -> Error {
        match self {
            Error::Database { context, message } => Error::Database {
                context: format!("{what}: {context}"),
                message,
            },
            Error::Job(m) => Error::Job(format!("{what}: {m}")),
            other => other,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
