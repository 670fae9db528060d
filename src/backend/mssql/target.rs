//! Where to connect: an `mssql://` URL or an ADO.NET string, turned into a tiberius [`Config`].
//!
//! Kept apart from the connection code so every rule about passwords lives in one place: the
//! password is read from the string or from `EAVPIVOT_PASSWORD` and goes only into the
//! [`Config`]; what may be shown (host, port, database, user) is held separately in [`Target`].

use tiberius::{AuthMethod, Config, EncryptionLevel};
use url::Url;

use crate::backend::credentials::{self, ado_pairs};
use crate::backend::ConnectOptions;
use crate::error::{Error, Result};

/// A parsed connection: the tiberius config (with the password) and a description without it.
#[derive(Clone)]
pub struct Target {
    pub config: Config,
    /// `host:port/database as user`, safe to print.
    pub shown: String,
    pub user: String,
    pub database: Option<String>,
    /// A password came from the string, a file or the environment (else the login may ask).
    pub password_given: bool,
}

/// Parse `text` (URL or ADO.NET string); the password falls back to `options.password`.
pub fn parse_target(text: &str, options: &ConnectOptions) -> Result<Target> {
    let lower = text.trim_start().to_ascii_lowercase();
    let mut target = if lower.starts_with("mssql://") || lower.starts_with("sqlserver://") {
        from_url(text.trim(), options)?
    } else if lower.starts_with("jdbc:") {
        from_jdbc(text.trim(), options)?
    } else {
        from_ado(text, options)?
    };
    target
        .config
        .handshake_timeout(Some(options.connect_timeout));
    target.config.application_name("eavpivot");
    Ok(target)
}

fn from_url(text: &str, options: &ConnectOptions) -> Result<Target> {
    // The URL crate's error names no part of the input, so it can never echo a password.
    let url = Url::parse(text)
        .map_err(|e| Error::Usage(format!("mssql connection URL is not valid: {e}")))?;
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| {
            Error::Usage("mssql connection URL has no host: use mssql://user@host:1433/db".into())
        })?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let mut config = Config::new();
    config.host(&host);
    let port = url.port().unwrap_or(1433);
    config.port(port);
    let user = decode(url.username(), "user name")?;
    let mut password = url.password().map(|p| decode(p, "password")).transpose()?;
    let database = url.path().trim_start_matches('/').to_string();
    let database = (!database.is_empty())
        .then(|| decode(&database, "database name"))
        .transpose()?;
    if let Some(db) = &database {
        config.database(db);
    }
    let mut encryption = EncryptionLevel::Required;
    for (key, value) in url.query_pairs() {
        match key.to_ascii_lowercase().as_str() {
            "trust_cert" | "trustservercertificate" => {
                if parse_bool(&key, &value)? {
                    config.trust_cert();
                }
            }
            "encrypt" => encryption = parse_encrypt(&value)?,
            "ca" | "trust_cert_ca" | "trustservercertificateca" | "sslrootcert" => {
                config.trust_cert_ca(&*value)
            }
            "hostname_in_certificate" | "hostnameincertificate" => {
                config.hostname_in_certificate(&*value)
            }
            "password" | "pwd" => password = Some(value.into_owned()),
            "instance" => config.instance_name(&*value),
            "app_name" | "application_name" => config.application_name(&*value),
            other => {
                return Err(Error::Usage(format!(
                    "mssql connection URL: unknown parameter '{other}' (known: trust_cert, encrypt, ca, hostname_in_certificate, password, instance, app_name)"
                )))
            }
        }
    }
    config.encryption(encryption);
    let password = password.or_else(|| fallback_password(options));
    if user.is_empty() {
        return Err(Error::Usage(
            "mssql connection URL has no user: use mssql://user@host:1433/db (password in EAVPIVOT_PASSWORD)".into(),
        ));
    }
    let password_given = password.is_some();
    config.authentication(AuthMethod::sql_server(&user, password.unwrap_or_default()));
    Ok(Target {
        shown: shown(&host, port, database.as_deref(), &user),
        config,
        user,
        database,
        password_given,
    })
}

fn from_ado(text: &str, options: &ConnectOptions) -> Result<Target> {
    let config = from_string(
        Config::from_ado_string(text),
        "ADO.NET",
        "Server=tcp:host,1433;Database=…;User Id=…;Password=…",
    )?;
    from_pairs(config, text, options, &["database", "initial catalog"])
}

/// `jdbc:sqlserver://host:1433;databaseName=…;user=…;password=…`, as Flyway and Liquibase
/// configurations hold it.
fn from_jdbc(text: &str, options: &ConnectOptions) -> Result<Target> {
    let config = from_string(
        Config::from_jdbc_string(text),
        "JDBC",
        "jdbc:sqlserver://host:1433;databaseName=…;user=…;password=…",
    )?;
    let props = text.split_once(';').map_or("", |(_, p)| p);
    from_pairs(config, props, options, &["databasename", "database"])
}

/// tiberius's own parse error could quote the offending part of the string (the password):
/// say only which form failed and what it should look like.
fn from_string(parsed: tiberius::Result<Config>, form: &str, expected: &str) -> Result<Config> {
    parsed.map_err(|_| {
        Error::Usage(format!(
            "mssql {form} connection string is not valid: expected {expected}"
        ))
    })
}

/// User and database from the `key=value` pairs (read as tiberius reads them, quotes and
/// all), and the fallback password when the string has none.
fn from_pairs(
    mut config: Config,
    pairs_text: &str,
    options: &ConnectOptions,
    database_keys: &[&str],
) -> Result<Target> {
    let keys = ado_pairs(pairs_text)
        .ok_or_else(|| Error::Usage("mssql connection string has an unterminated quote".into()))?;
    let get = |names: &[&str]| {
        keys.iter()
            .find(|(k, _, _)| names.contains(&k.to_ascii_lowercase().as_str()))
            .map(|(_, _, v)| v.clone())
    };
    let user = get(&["user id", "uid", "user", "username"]).unwrap_or_default();
    let mut password_given = get(&["password", "pwd"]).is_some();
    if !password_given && !user.is_empty() {
        if let Some(password) = fallback_password(options) {
            config.authentication(AuthMethod::sql_server(&user, password));
            password_given = true;
        }
    }
    let database = get(database_keys);
    let addr = config.get_addr();
    let shown = match &database {
        Some(db) => format!("{addr}/{db} as {user}"),
        None => format!("{addr} as {user}"),
    };
    Ok(Target {
        config,
        shown,
        user,
        database,
        password_given,
    })
}

/// `--password-file` or `EAVPIVOT_PASSWORD`, else sqlcmd's `SQLCMDPASSWORD`.
fn fallback_password(options: &ConnectOptions) -> Option<String> {
    options
        .password
        .clone()
        .or_else(|| credentials::fallback_password("SQLCMDPASSWORD"))
}

fn shown(host: &str, port: u16, database: Option<&str>, user: &str) -> String {
    match database {
        Some(db) => format!("{host}:{port}/{db} as {user}"),
        None => format!("{host}:{port} as {user}"),
    }
}

fn decode(text: &str, what: &str) -> Result<String> {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .ok_or_else(|| {
            Error::Usage(format!(
                "mssql connection URL: the {what} is not valid percent-encoding"
            ))
        })
}

fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "on" => Ok(true),
        "false" | "no" | "0" | "off" => Ok(false),
        other => Err(Error::Usage(format!(
            "mssql connection URL: {key}={other} is not true or false"
        ))),
    }
}

/// `encrypt=on` (TLS for everything, the default), `strict` (TDS 8: TLS before any TDS byte,
/// as Azure SQL and SQL Server 2022 can require), `off` (TLS for the login only),
/// `not_supported` (no TLS at all: only for test peers and trusted networks).
fn parse_encrypt(value: &str) -> Result<EncryptionLevel> {
    match value.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "required" | "mandatory" => Ok(EncryptionLevel::Required),
        "strict" => Ok(EncryptionLevel::Strict),
        "off" | "false" | "no" | "login" => Ok(EncryptionLevel::Off),
        "not_supported" | "none" | "plaintext" => Ok(EncryptionLevel::NotSupported),
        other => Err(Error::Usage(format!(
            "mssql connection URL: encrypt={other} is not one of on, strict, off, not_supported"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(password: Option<&str>) -> ConnectOptions {
        ConnectOptions {
            password: password.map(str::to_string),
            ..ConnectOptions::default()
        }
    }

    #[test]
    fn url_gives_host_port_database_and_user() {
        let t = parse_target(
            "mssql://sa:s3cret@db.example:1444/Migr?trust_cert=true&encrypt=off",
            &opts(None),
        )
        .unwrap();
        assert_eq!(t.config.get_addr(), "db.example:1444");
        assert_eq!(t.shown, "db.example:1444/Migr as sa");
        assert_eq!(t.database.as_deref(), Some("Migr"));
        assert!(!t.shown.contains("s3cret"));
    }

    #[test]
    fn url_defaults_and_errors() {
        let t = parse_target("mssql://sa@h/x", &opts(Some("pw"))).unwrap();
        assert_eq!(t.config.get_addr(), "h:1433");
        for bad in [
            "mssql://sa@h/x?encrypt=maybe",
            "mssql://sa@h/x?tls=1",
            "mssql://h/x",
            "mssql://sa@h/x?trust_cert=perhaps",
        ] {
            let err = parse_target(bad, &opts(None)).err().expect(bad).to_string();
            assert!(err.starts_with("mssql connection URL"), "{err}");
        }
    }

    #[test]
    fn percent_encoded_user_and_password() {
        let t = parse_target("mssql://dom%5Cme:p%40ss@h:1433/db", &opts(None)).unwrap();
        assert_eq!(t.user, "dom\\me");
    }

    #[test]
    fn ado_string_is_understood_and_never_echoed() {
        let text = "Server=tcp:sql1,1433;Database=Migr;User Id=sa;Password=s3cret;TrustServerCertificate=true";
        let t = parse_target(text, &opts(None)).unwrap();
        assert_eq!(t.shown, "sql1:1433/Migr as sa");
        let err = parse_target("Server=tcp:h,notaport;Password=s3cret", &opts(None))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(!err.contains("s3cret"));
    }
}
