//! Which database a connection reaches, and which tables a view reads: what the guard needs to
//! tell that a run would write what it reads when two connection strings (`localhost` and
//! `127.0.0.1`, `/x/../x.db` and a symlink) name one database, or when the source is a view.
//!
//! Names cannot say it; the server can. Each dialect asks its server for what identifies it
//! (PostgreSQL's system identifier, MariaDB's host and port, SQL Server's server and service
//! names, SQLite's file) and, where a table name cannot reach beyond one database, the
//! database. SQL text only: the guard runs it through the session.

use super::{MariaDb, MsSql, Postgres, Sqlite};
use crate::dialect::prelude::*;
use crate::table_ref::TableRef;
use crate::value::Value;

/// Server identity and view dependencies, per dialect.
pub trait Identity {
    /// Queries, in order of preference, each returning one row that identifies the server a
    /// connection reaches (and the database, where a table name cannot name another one). Two
    /// connections reach one database when the first query both can run gives equal keys.
    fn server_identity(&self) -> Vec<String>;

    /// The comparable key of a [`Identity::server_identity`] row; `None` when it identifies
    /// nothing (an in-memory database).
    fn server_key(&self, row: &[Value]) -> Option<String> {
        let parts: Option<Vec<String>> = row.iter().map(Value::as_text).collect();
        parts.filter(|p| !p.is_empty()).map(|p| p.join("\u{1f}"))
    }

    /// A query listing `(schema, name)` of every table or view the view `view` reads directly
    /// (no rows when `view` is a table), or `None` where the catalog cannot say.
    fn view_reads(&self, _view: &TableRef) -> Option<String> {
        None
    }
}

impl Identity for Sqlite {
    fn server_identity(&self) -> Vec<String> {
        vec!["SELECT file FROM pragma_database_list WHERE name = 'main'".into()]
    }

    /// The file itself: its device and inode (a symlink, `/x/../x.db` or a hard link is the
    /// same file), or its canonical path where there are no inodes.
    fn server_key(&self, row: &[Value]) -> Option<String> {
        let path = row.first()?.as_text().filter(|p| !p.is_empty())?;
        let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone().into());
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if let Ok(meta) = std::fs::metadata(&canonical) {
                return Some(format!("sqlite file {}:{}", meta.dev(), meta.ino()));
            }
        }
        Some(format!("sqlite file {}", canonical.display()))
    }

    /// SQLite keeps no dependencies, only the view's text: every table or view of its schema
    /// whose name stands there as a whole word (a superset at worst, which can only refuse more).
    fn view_reads(&self, view: &TableRef) -> Option<String> {
        let schema = view.schema().unwrap_or_else(|| "main".into());
        let master = format!("{}.sqlite_master", self.quote_ident(&schema));
        Some(format!(
            "SELECT {}, t.name FROM {master} v JOIN {master} t \
             ON t.type IN ('table', 'view') AND t.name <> v.name \
             AND (' ' || lower(v.sql) || ' ') GLOB ('*[^a-z0-9_$]' || lower(t.name) || '[^a-z0-9_$]*') \
             WHERE v.type = 'view' AND v.name = {} COLLATE NOCASE",
            self.quote_literal(&schema),
            self.quote_literal(&view.name())
        ))
    }
}

impl Identity for Postgres {
    /// A cluster is its system identifier (readable by anyone unless revoked) and its start
    /// time (a promoted copy shares the identifier); a table name reaches one database only.
    fn server_identity(&self) -> Vec<String> {
        let rest =
            "pg_postmaster_start_time()::text, current_setting('port'), current_database()::text";
        vec![
            format!("SELECT (SELECT system_identifier FROM pg_control_system())::text, {rest}"),
            format!("SELECT {rest}"),
        ]
    }

    fn view_reads(&self, view: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT DISTINCT n.nspname::text, c.relname::text FROM pg_rewrite r \
             JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid \
             AND d.refclassid = 'pg_class'::regclass \
             JOIN pg_class c ON c.oid = d.refobjid AND c.oid <> r.ev_class \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE r.ev_class = to_regclass({})",
            self.quote_literal(&view.sql())
        ))
    }
}

impl Identity for MariaDb {
    /// A table name reaches every database of the server (`db.t`): the server is the key.
    fn server_identity(&self) -> Vec<String> {
        vec!["SELECT @@hostname, CAST(@@port AS CHAR)".into()]
    }

    /// MariaDB 10.x has no VIEW_TABLE_USAGE; the view's text names every table it reads
    /// fully qualified (`` `db`.`t` ``), so each table of the server whose qualified name it
    /// contains is one it reads (a superset at worst, which can only refuse more).
    fn view_reads(&self, view: &TableRef) -> Option<String> {
        let schema = match view.schema() {
            Some(s) => self.quote_literal(&s),
            None => "DATABASE()".into(),
        };
        Some(format!(
            "SELECT t.table_schema, t.table_name FROM information_schema.views v \
             JOIN information_schema.tables t ON LOCATE(CONCAT('`', REPLACE(t.table_schema, '`', '``'), \
             '`.`', REPLACE(t.table_name, '`', '``'), '`'), v.view_definition) > 0 \
             WHERE v.table_schema = {schema} AND v.table_name = {}",
            self.quote_literal(&view.name())
        ))
    }
}

impl Identity for MsSql {
    /// OBJECT_ID is unique within one database: the database goes with the server. (A name
    /// written `otherdb.dbo.t` from a connection to another database is not caught.)
    fn server_identity(&self) -> Vec<String> {
        vec!["SELECT @@SERVERNAME, @@SERVICENAME, DB_ID()".into()]
    }

    /// Babelfish's `sys.sql_expression_dependencies` is empty: there the swap's DROP fails
    /// on the dependent view instead (exit 1, rolled back). Names as NVARCHAR, as in
    /// `table_columns`.
    fn view_reads(&self, view: &TableRef) -> Option<String> {
        Some(format!(
            "SELECT CAST(COALESCE(d.referenced_schema_name, OBJECT_SCHEMA_NAME(d.referencing_id)) AS NVARCHAR(128)), \
             CAST(d.referenced_entity_name AS NVARCHAR(128)) FROM sys.sql_expression_dependencies d \
             WHERE d.referencing_id = OBJECT_ID({}) AND d.referenced_database_name IS NULL \
             AND d.referenced_entity_name IS NOT NULL",
            self.quote_literal(&view.sql())
        ))
    }
}
