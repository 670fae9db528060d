//! Connection strings: which driver, where, and how to show it without its password.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};

/// The file the embedded default uses when no connection is given.
pub const EMBEDDED_DEFAULT: &str = "eavpivot.db";

#[derive(Debug, Clone)]
pub enum Driver {
    Sqlite {
        path: PathBuf,
    },
    Postgres {
        url: String,
    },
    MariaDb {
        url: String,
    },
    /// An ADO.NET string (`Server=tcp:host,1433;…`) or an `mssql://` URL, as given.
    MsSql {
        config: String,
    },
}

#[derive(Debug, Clone)]
pub struct ConnectionSpec {
    pub driver: Driver,
    /// True when nothing was given and the embedded SQLite file is used.
    pub embedded: bool,
    shown: String,
}

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

impl ConnectionSpec {
    /// `None` means the embedded default: `eavpivot.db` in the working directory.
    pub fn parse(text: Option<&str>) -> Result<ConnectionSpec> {
        let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
            return Ok(ConnectionSpec {
                driver: Driver::Sqlite {
                    path: PathBuf::from(EMBEDDED_DEFAULT),
                },
                embedded: true,
                shown: format!("sqlite:{EMBEDDED_DEFAULT} (embedded default)"),
            });
        };
        let shown = redact(text);
        let lower = text.to_ascii_lowercase();
        let driver = if let Some(path) = lower
            .starts_with("sqlite:")
            .then(|| text["sqlite:".len()..].trim_start_matches("//"))
        {
            if path.is_empty() {
                return Err(Error::Usage(
                    "sqlite: needs a file path, e.g. sqlite:data.db".into(),
                ));
            }
            Driver::Sqlite {
                path: PathBuf::from(path),
            }
        } else if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            Driver::Postgres { url: text.into() }
        } else if lower.starts_with("mysql://") || lower.starts_with("mariadb://") {
            Driver::MariaDb { url: text.into() }
        } else if lower.starts_with("mssql://")
            || lower.starts_with("sqlserver://")
            || lower.contains("server=")
            || lower.contains("data source=")
        {
            Driver::MsSql {
                config: text.into(),
            }
        } else {
            return Err(Error::Usage(format!(
                "connection '{shown}' is not understood: use sqlite:PATH, postgres://…, \
                 mysql://…/mariadb://…, mssql://… or an ADO.NET string (Server=…;Database=…)"
            )));
        };
        Ok(ConnectionSpec {
            driver,
            embedded: false,
            shown,
        })
    }

    /// The connection as it may be shown anywhere: passwords replaced by `***`.
    pub fn display(&self) -> &str {
        &self.shown
    }
}

/// Hide the password of a URL (`user:secret@`) or an ADO.NET string (`Password=secret;`).
pub fn redact(text: &str) -> String {
    if let Some(scheme_end) = text.find("://") {
        let rest = &text[scheme_end + 3..];
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        if let Some(at) = rest[..authority_end].rfind('@') {
            let userinfo = &rest[..at];
            if let Some(colon) = userinfo.find(':') {
                return format!(
                    "{}{}:***{}",
                    &text[..scheme_end + 3],
                    &userinfo[..colon],
                    &rest[at..]
                );
            }
        }
        return redact_query_password(text);
    }
    text.split(';')
        .map(|part| match part.split_once('=') {
            Some((key, _)) if is_password_key(key) => format!("{key}=***"),
            _ => part.to_string(),
        })
        .collect::<Vec<_>>()
        .join(";")
}

fn redact_query_password(url: &str) -> String {
    let Some(q) = url.find('?') else {
        return url.to_string();
    };
    let params: Vec<String> = url[q + 1..]
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if is_password_key(k) => format!("{k}=***"),
            _ => kv.to_string(),
        })
        .collect();
    format!("{}?{}", &url[..q], params.join("&"))
}

fn is_password_key(key: &str) -> bool {
    matches!(
        key.trim().to_ascii_lowercase().as_str(),
        "password" | "pwd" | "pass"
    )
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

    #[test]
    fn schemes_choose_the_driver() {
        let d = |s: &str| ConnectionSpec::parse(Some(s)).unwrap().driver;
        assert!(matches!(d("sqlite:x.db"), Driver::Sqlite { .. }));
        assert!(matches!(d("postgresql://u@h/db"), Driver::Postgres { .. }));
        assert!(matches!(d("mariadb://u@h/db"), Driver::MariaDb { .. }));
        assert!(matches!(
            d("Server=tcp:h,1433;Database=x"),
            Driver::MsSql { .. }
        ));
        assert!(ConnectionSpec::parse(Some("oracle://x")).is_err());
        assert!(ConnectionSpec::parse(None).unwrap().embedded);
    }
}
