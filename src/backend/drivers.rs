//! The one registry of database drivers (like sqlx's `URL_SCHEMES`, dbcrossbar's
//! `KNOWN_DRIVERS`): what each reads in a connection string, the dialect it speaks, how it
//! connects, whether its database is a local file, and the Cargo feature that compiles it in.
//! Choosing a driver, connecting, the embedded-file checks and the error for a string no
//! driver reads all go through [`DRIVERS`]; adding a database is one row here.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use super::connection::{redact, ConnectOptions, EMBEDDED_DEFAULT};
use super::Backend;
use crate::dialect::{Dialect, MariaDb, MsSql, Oracle, Postgres, Sqlite};
use crate::error::{Error, Result};

/// An open connection, on its way.
pub type Connecting<'a> = Pin<Box<dyn Future<Output = Result<Box<dyn Backend>>> + Send + 'a>>;

/// Opens a connection to a target (a file path or a connection string, as given).
type ConnectFn = for<'a> fn(&'a str, &'a ConnectOptions) -> Connecting<'a>;

/// Opens a file database's empty in-memory stand-in.
type InMemoryFn = fn() -> Result<Box<dyn Backend>>;

/// A connection string a driver reads without one of its prefixes (libpq, ADO.NET).
#[derive(Clone, Copy)]
pub struct OtherForm {
    pub reads: fn(&str) -> bool,
    /// How an error names the form.
    pub shown: &'static str,
}

/// One database eavpivot connects to.
pub struct Driver {
    /// The SQL it speaks; its [`crate::dialect::Quoting::name`] names the driver.
    pub dialect: &'static dyn Dialect,
    /// The Cargo feature that compiles it in.
    pub feature: &'static str,
    /// Connection-string prefixes it reads, lowercase (`postgres://`, `sqlite:`).
    pub schemes: &'static [&'static str],
    /// Strings without one of those prefixes that are still its own.
    pub other_form: Option<OtherForm>,
    /// The database is a local file (the target is its path), not a server.
    pub file: bool,
    /// None when this build left the driver out (its feature was off).
    connect: Option<ConnectFn>,
    /// A file database's empty in-memory stand-in (a dry run, a file that is missing).
    in_memory: Option<InMemoryFn>,
    /// Its SQL is rendered but this build has no backend for it (Oracle): a run is refused
    /// before connecting, a dry run records what it would send ([`super::oracle`]).
    pub sql_only: bool,
}

/// Each driver's connect, or None where its feature left it out of this build.
#[cfg(feature = "sqlite")]
const SQLITE: Option<ConnectFn> = Some(sqlite_connect);
#[cfg(not(feature = "sqlite"))]
const SQLITE: Option<ConnectFn> = None;
#[cfg(feature = "postgres")]
const POSTGRES: Option<ConnectFn> = Some(postgres_connect);
#[cfg(not(feature = "postgres"))]
const POSTGRES: Option<ConnectFn> = None;
#[cfg(feature = "mariadb")]
const MARIADB: Option<ConnectFn> = Some(mariadb_connect);
#[cfg(not(feature = "mariadb"))]
const MARIADB: Option<ConnectFn> = None;
#[cfg(feature = "mssql")]
const MSSQL: Option<ConnectFn> = Some(mssql_connect);
#[cfg(not(feature = "mssql"))]
const MSSQL: Option<ConnectFn> = None;
#[cfg(feature = "sqlite")]
const SQLITE_IN_MEMORY: Option<InMemoryFn> = Some(sqlite_in_memory);
#[cfg(not(feature = "sqlite"))]
const SQLITE_IN_MEMORY: Option<InMemoryFn> = None;

/// Every driver, in the order a connection string is matched against them.
pub static DRIVERS: [Driver; 5] = [
    Driver {
        dialect: &Sqlite,
        feature: "sqlite",
        schemes: &["sqlite:"],
        other_form: None,
        file: true,
        connect: SQLITE,
        in_memory: SQLITE_IN_MEMORY,
        sql_only: false,
    },
    Driver {
        dialect: &Postgres,
        feature: "postgres",
        schemes: &["postgres://", "postgresql://"],
        other_form: Some(OtherForm {
            reads: super::credentials::is_libpq,
            shown: "a libpq string (host=… dbname=…)",
        }),
        file: false,
        connect: POSTGRES,
        in_memory: None,
        sql_only: false,
    },
    Driver {
        dialect: &MariaDb,
        feature: "mariadb",
        schemes: &["mysql://", "mariadb://"],
        other_form: None,
        file: false,
        connect: MARIADB,
        in_memory: None,
        sql_only: false,
    },
    Driver {
        dialect: &MsSql,
        feature: "mssql",
        schemes: &["mssql://", "sqlserver://", "jdbc:sqlserver://"],
        other_form: Some(OtherForm {
            reads: is_ado_net,
            shown: "an ADO.NET string (Server=…;Database=…)",
        }),
        file: false,
        connect: MSSQL,
        in_memory: None,
        sql_only: false,
    },
    Driver {
        dialect: &Oracle,
        // Always built: it links no driver crate.
        feature: "",
        schemes: &["oracle:"],
        other_form: None,
        file: false,
        connect: Some(oracle_connect),
        in_memory: None,
        sql_only: true,
    },
];

/// The driver of the embedded default (no connection given): SQLite, the first row.
pub fn embedded() -> &'static Driver {
    &DRIVERS[0]
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Driver {
    pub fn name(&self) -> &'static str {
        self.dialect.name()
    }

    /// The driver that reads `text` (trimmed) and the target it opens: the path after
    /// `sqlite:` for a file database, else the string as given.
    pub fn for_connection(text: &str) -> Option<(&'static Driver, &str)> {
        let lower = text.to_ascii_lowercase();
        DRIVERS.iter().find_map(|d| {
            let scheme = d.schemes.iter().find(|s| lower.starts_with(*s));
            match (scheme, d.other_form) {
                (Some(s), _) if d.file => Some((d, text[s.len()..].trim_start_matches("//"))),
                (Some(_), _) => Some((d, text)),
                (None, Some(form)) if (form.reads)(text) => Some((d, text)),
                _ => None,
            }
        })
    }

    /// The forms every driver reads, for an error about a string none of them reads:
    /// `sqlite:PATH, postgres://…, … or an ADO.NET string (…)`.
    pub fn known_forms() -> String {
        let forms: Vec<String> = DRIVERS
            .iter()
            .flat_map(|d| {
                let tail = if d.file { "PATH" } else { "…" };
                d.schemes
                    .iter()
                    .map(move |s| format!("{s}{tail}"))
                    .chain(d.other_form.map(|form| form.shown.to_string()))
            })
            .collect();
        match forms.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }

    /// Open `target` (a path or a connection string).
    pub async fn connect(
        &self,
        target: &str,
        options: &ConnectOptions,
    ) -> Result<Box<dyn Backend>> {
        match self.connect {
            Some(connect) => connect(target, options).await,
            None => Err(self.left_out()),
        }
    }

    /// A dry run's connection for a driver this build renders SQL for but cannot connect
    /// with ([`Driver::sql_only`]): it records what it is sent into `log` and stops at the
    /// first query whose answer the plan needs. None for every driver that connects.
    pub fn dry_run_stand_in(&self, log: &super::DryRunLog) -> Option<Box<dyn Backend>> {
        self.sql_only
            .then(|| Box::new(super::oracle::Unconnected::new(log)) as Box<dyn Backend>)
    }

    /// The empty in-memory stand-in of a file database.
    pub fn in_memory(&self) -> Result<Box<dyn Backend>> {
        match (self.in_memory, self.connect) {
            (Some(open), Some(_)) => open(),
            (_, None) => Err(self.left_out()),
            (None, Some(_)) => Err(Error::Usage(format!(
                "{} databases are servers: there is no in-memory one",
                self.name()
            ))),
        }
    }

    fn left_out(&self) -> Error {
        Error::Usage(format!(
            "this eavpivot was built without the {} feature: {} connections need it (cargo build --features {})",
            self.feature,
            self.name(),
            self.feature
        ))
    }
}

/// `Server=…` / `Data Source=…`: an ADO.NET string (SQL Server's own form).
fn is_ado_net(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("server=") || lower.contains("data source=")
}

#[cfg(feature = "sqlite")]
fn sqlite_connect<'a>(path: &'a str, _: &'a ConnectOptions) -> Connecting<'a> {
    Box::pin(async move {
        let opened = super::sqlite::SqliteBackend::open(std::path::Path::new(path))?;
        Ok(Box::new(opened) as Box<dyn Backend>)
    })
}

#[cfg(feature = "sqlite")]
fn sqlite_in_memory() -> Result<Box<dyn Backend>> {
    Ok(Box::new(super::sqlite::SqliteBackend::in_memory()?))
}

#[cfg(feature = "postgres")]
fn postgres_connect<'a>(url: &'a str, options: &'a ConnectOptions) -> Connecting<'a> {
    Box::pin(super::postgres::connect(url, options))
}

#[cfg(feature = "mariadb")]
fn mariadb_connect<'a>(url: &'a str, options: &'a ConnectOptions) -> Connecting<'a> {
    Box::pin(super::mariadb::connect(url, options))
}

#[cfg(feature = "mssql")]
fn mssql_connect<'a>(config: &'a str, options: &'a ConnectOptions) -> Connecting<'a> {
    Box::pin(super::mssql::connect(config, options))
}

/// Refused before connecting: the dialect only ([`super::oracle::connect`]).
fn oracle_connect<'a>(_: &'a str, _: &'a ConnectOptions) -> Connecting<'a> {
    Box::pin(async { super::oracle::connect() })
}

/// A connection string read: which registry row, what it opens, and how it is shown.
#[derive(Debug, Clone)]
pub struct ConnectionSpec {
    /// The registry row that reads the string ([`DRIVERS`]).
    pub driver: &'static Driver,
    /// What the driver opens: the file's path for a file database, else the connection
    /// string as given.
    pub target: String,
    /// True when nothing was given and the embedded SQLite file is used.
    pub embedded: bool,
    shown: String,
}

impl ConnectionSpec {
    /// `None` means the embedded default: `eavpivot.db` in the working directory.
    pub fn parse(text: Option<&str>) -> Result<ConnectionSpec> {
        let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
            return Ok(ConnectionSpec {
                driver: embedded(),
                target: EMBEDDED_DEFAULT.into(),
                embedded: true,
                shown: format!("sqlite:{EMBEDDED_DEFAULT} (embedded default)"),
            });
        };
        let shown = redact(text);
        refuse_fragment(text, &shown)?;
        let Some((driver, target)) = Driver::for_connection(text) else {
            return Err(Error::Usage(format!(
                "connection '{shown}' is not understood: use {}",
                Driver::known_forms()
            )));
        };
        if driver.file && target.is_empty() {
            return Err(Error::Usage(format!(
                "{}: needs a file path, e.g. {}data.db",
                driver.name(),
                driver.schemes[0]
            )));
        }
        // A file path holds no password: shown as given (the redacting parsers are for
        // server strings, and would not understand a path).
        let shown = match driver.file {
            true => format!("{}{target}", driver.schemes[0]),
            false => shown,
        };
        Ok(ConnectionSpec {
            driver,
            target: target.into(),
            embedded: false,
            shown,
        })
    }

    /// The file a file database (SQLite) opens, when it does not exist yet: the one check
    /// every command makes before it connects (create it, or use an in-memory stand-in).
    pub fn missing_file(&self) -> Option<&Path> {
        let path = Path::new(&self.target);
        (self.driver.file && !path.exists()).then_some(path)
    }

    /// The connection as it may be shown anywhere: passwords replaced by `***`.
    pub fn display(&self) -> &str {
        &self.shown
    }
}

/// A server URL never has a fragment: a `#` there is a password's raw `#` (or `@`, `%`, `/`,
/// `?` cut the URL elsewhere), and the login would fail unexplained with half a password.
fn refuse_fragment(text: &str, shown: &str) -> Result<()> {
    let lower = text.trim_start().to_ascii_lowercase();
    // A SQLite path may hold `#`; JDBC's properties follow `;`, not `?`.
    let is_url =
        text.contains("://") && !lower.starts_with("jdbc:") && !lower.starts_with("sqlite:");
    // Before the host, a `#` leaves no URL to parse at all; after it, a fragment.
    if !is_url || !text.contains('#') {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "connection '{shown}' has a raw '#', which ends a URL: a '#', '@', '%', '/' or '?' \
         in a URL password must be percent-encoded (%23, %40, %25, %2F, %3F)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver(text: &str) -> Option<(&'static str, &str)> {
        Driver::for_connection(text).map(|(d, target)| (d.name(), target))
    }

    #[test]
    fn each_form_finds_its_driver() {
        assert_eq!(driver("sqlite:a.db"), Some(("sqlite", "a.db")));
        assert_eq!(driver("SQLite:///tmp/a.db"), Some(("sqlite", "/tmp/a.db")));
        assert_eq!(driver("sqlite:"), Some(("sqlite", "")));
        for text in ["postgres://h/d", "PostgreSQL://h/d", "host=h dbname=d"] {
            assert_eq!(driver(text), Some(("postgres", text)));
        }
        for text in ["mysql://h/d", "mariadb://h/d"] {
            assert_eq!(driver(text), Some(("mariadb", text)));
        }
        for text in [
            "mssql://h/d",
            "sqlserver://h",
            "jdbc:sqlserver://h;databaseName=d",
            "Server=tcp:h,1433;Database=d",
            "Data Source=h;Initial Catalog=d",
        ] {
            assert_eq!(driver(text), Some(("mssql", text)));
        }
        assert_eq!(driver("oracle://h/d"), Some(("oracle", "oracle://h/d")));
        assert_eq!(driver("db2://h/d"), None);
    }

    #[test]
    fn the_error_lists_every_driver_s_forms() {
        let forms = Driver::known_forms();
        for d in &DRIVERS {
            for s in d.schemes {
                assert!(forms.contains(s), "{forms} lacks {s}");
            }
        }
        assert!(forms.starts_with("sqlite:PATH, postgres://…"), "{forms}");
        assert!(
            forms.ends_with(", an ADO.NET string (Server=…;Database=…) or oracle:…"),
            "{forms}"
        );
    }

    #[test]
    fn the_embedded_default_is_a_file_database() {
        assert!(embedded().file);
        assert_eq!(embedded().in_memory.is_some(), cfg!(feature = "sqlite"));
    }

    #[test]
    fn a_driver_left_out_says_which_feature_it_needs() {
        for d in DRIVERS.iter().filter(|d| !d.sql_only) {
            let built = match d.feature {
                "sqlite" => cfg!(feature = "sqlite"),
                "postgres" => cfg!(feature = "postgres"),
                "mariadb" => cfg!(feature = "mariadb"),
                "mssql" => cfg!(feature = "mssql"),
                other => panic!("{} names an unknown feature {other}", d.name()),
            };
            assert_eq!(d.connect.is_some(), built, "{}", d.name());
            assert_eq!(
                d.left_out().to_string(),
                format!(
                    "this eavpivot was built without the {0} feature: {1} connections need it (cargo build --features {0})",
                    d.feature,
                    d.name()
                )
            );
        }
    }

    #[test]
    fn driver_names_are_their_dialects_and_unique() {
        let names: std::collections::BTreeSet<&str> = DRIVERS.iter().map(Driver::name).collect();
        assert_eq!(names.len(), DRIVERS.len());
        for d in &DRIVERS {
            assert_eq!(
                crate::dialect::by_name(d.name()).map(|x| x.name()),
                Some(d.name())
            );
        }
    }

    #[test]
    fn a_sqlite_path_is_shown_as_given() {
        let shown = |s: &str| {
            ConnectionSpec::parse(Some(s))
                .map(|c| c.display().to_string())
                .unwrap_or_default()
        };
        assert_eq!(shown("sqlite:/tmp/a b/x.db"), "sqlite:/tmp/a b/x.db");
        assert_eq!(shown("sqlite:data.db"), "sqlite:data.db");
    }

    #[test]
    fn schemes_choose_the_driver() {
        let d = |s: &str| ConnectionSpec::parse(Some(s)).unwrap().driver.name();
        assert_eq!(d("sqlite:x.db"), "sqlite");
        assert_eq!(d("postgresql://u@h/db"), "postgres");
        assert_eq!(d("mariadb://u@h/db"), "mariadb");
        assert_eq!(d("host=h dbname=d password='a;b'"), "postgres");
        assert_eq!(d("jdbc:sqlserver://h:1433;databaseName=d"), "mssql");
        assert_eq!(d("Server=tcp:h,1433;Database=x"), "mssql");
        // Oracle is understood (its SQL is rendered), though this build cannot connect to it.
        assert_eq!(d("oracle://u@h:1521/svc"), "oracle");
        assert!(ConnectionSpec::parse(Some("db2://x")).is_err());
        assert!(ConnectionSpec::parse(None).unwrap().embedded);
    }
}
