//! A run only ever reads its source: no table it writes may be the source, a joined table, or
//! a table a source view reads.
//!
//! Names alone cannot say whether two tables are the same (`kv`, `KV`, `public.kv` and a
//! search_path or default schema in between), so the database says: each table the run would
//! write that already exists is resolved to the database's own identity for it (PostgreSQL's
//! OID, SQL Server's database and OBJECT_ID, the catalog's schema and name elsewhere) and
//! compared with the identities of the tables the run reads: the source tables and, through
//! the catalog, every table a source view reads (a view over a view too). A table that does
//! not exist yet cannot be read.
//!
//! With `target.connection` the two connections may still reach one database (the same URL,
//! `localhost` and `127.0.0.1`, `/x/../x.db` or a symlink to it): each server says which it
//! is ([`Identity::server_identity`]), and when both say the same the same guard applies.

use crate::config::TableRef;
use crate::dialect::{Dialect, Identity};
use crate::error::{Error, Result};
use crate::value::Value;

use super::super::session::Session;
use super::Table;

/// At most this many tables are followed through views (each is visited once, so a cycle
/// ends anyway): a bound on catalog queries, not a limit anyone reaches.
const MAX_TABLES_READ: usize = 10_000;

/// A table the run reads, with its identity on the source's connection.
struct Read {
    table: TableRef,
    /// The source (a view) this table is read through, if it is not a source itself.
    via: Option<TableRef>,
    id: Value,
}

/// Refuse (exit 2, before any write) when a table the run writes is one it reads.
pub async fn refuse_writing_sources(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    sources: &[TableRef],
    tables: &[Table],
) -> Result<()> {
    let existing: Vec<&Table> = tables.iter().filter(|t| t.exists).collect();
    if existing.is_empty() || sources.is_empty() {
        return Ok(());
    }
    if session.across_databases() && !one_database(session, dialect).await? {
        return Ok(());
    }
    let reads = tables_read(session, sources).await?;
    for table in existing {
        let Some(id) = identity(session, dialect, &table.shape.table, false).await? else {
            continue;
        };
        let Some(read) = reads.iter().find(|r| r.id == id) else {
            continue;
        };
        let target = &table.shape.table;
        let what = match &read.via {
            None => format!("is the source table {}", read.table),
            Some(view) => format!("is table {} that the source view {view} reads", read.table),
        };
        let across = match session.across_databases() {
            true => " (target.connection reaches the source's own database)",
            false => "",
        };
        return Err(Error::Usage(format!(
            "target table {target} {what}{across}: the run would overwrite what it reads: choose another target.table; nothing was written"
        )));
    }
    Ok(())
}

/// Whether the target's connection reaches the source's database: the first identity query
/// both servers can answer decides (one may lack a privilege the preferred query needs).
async fn one_database(session: &mut Session<'_>, target: &dyn Dialect) -> Result<bool> {
    let source = session.source_dialect();
    let (on_source, on_target) = (source.server_identity(), target.server_identity());
    for i in 0..on_source.len().max(on_target.len()) {
        let (Some(s), Some(t)) = (
            on_source.get(i).or(on_source.last()),
            on_target.get(i).or(on_target.last()),
        ) else {
            return Ok(false);
        };
        let (Ok(s_rows), Ok(t_rows)) = (session.inspect(s).await, session.inspect_target(t).await)
        else {
            continue;
        };
        let key = |d: &dyn Identity, rows: Vec<Vec<Value>>| {
            rows.into_iter().next().and_then(|row| d.server_key(&row))
        };
        let (s_key, t_key) = (key(source, s_rows), key(target, t_rows));
        return Ok(s_key.is_some() && s_key == t_key);
    }
    Ok(false)
}

/// The sources and every table a source view reads, each with its identity on the source's
/// connection (tables that do not exist are left out).
async fn tables_read(session: &mut Session<'_>, sources: &[TableRef]) -> Result<Vec<Read>> {
    let dialect = session.source_dialect();
    let mut pending: Vec<(TableRef, Option<TableRef>)> =
        sources.iter().rev().map(|s| (s.clone(), None)).collect();
    let mut reads: Vec<Read> = Vec::new();
    while let Some((table, via)) = pending.pop() {
        if reads.len() >= MAX_TABLES_READ {
            break;
        }
        let Some(id) = identity(session, dialect, &table, true).await? else {
            continue;
        };
        if reads.iter().any(|r| r.id == id) {
            continue;
        }
        if let Some(sql) = dialect.view_reads(&table) {
            let view = via.clone().unwrap_or_else(|| table.clone());
            for row in session.inspect(&sql).await? {
                if let Some(base) = qualified(dialect, &row) {
                    pending.push((base, Some(view.clone())));
                }
            }
        }
        reads.push(Read { table, via, id });
    }
    Ok(reads)
}

/// `(schema, name)` from the catalog as a table name; `None` for a name no job can write
/// (one holding a quote character cannot be a target).
fn qualified(dialect: &dyn Dialect, row: &[Value]) -> Option<TableRef> {
    let schema = row.first()?.as_text()?;
    let name = row.get(1)?.as_text()?;
    let text = format!(
        "{}.{}",
        dialect.quote_ident(&schema),
        dialect.quote_ident(&name)
    );
    TableRef::parse(&text).ok()
}

async fn identity(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    table: &TableRef,
    on_source: bool,
) -> Result<Option<Value>> {
    let sql = dialect.table_identity(table);
    let rows = match on_source {
        true => session.inspect(&sql).await?,
        false => session.inspect_target(&sql).await?,
    };
    Ok(rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .filter(|v| !v.is_null()))
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;

    use super::*;
    use crate::backend::{Backend, LoadTarget, RowPipeline};
    use crate::dialect::Postgres;

    /// A PostgreSQL that answers the identity queries: `cluster` is its system identifier
    /// (refused when `sysid_denied`, as for a role without EXECUTE on pg_control_system) and
    /// `started` its start time.
    struct Cluster {
        cluster: &'static str,
        started: &'static str,
        sysid_denied: bool,
    }

    #[async_trait]
    impl Backend for Cluster {
        fn dialect(&self) -> &'static dyn Dialect {
            &Postgres
        }
        async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Value>>> {
            let text = |s: &str| Value::Text(s.into());
            let rest = [text(self.started), text("5432"), text("test")];
            if sql.contains("pg_control_system") {
                if self.sysid_denied {
                    return Err(Error::Job("permission denied for function".into()));
                }
                let mut row = vec![text(self.cluster)];
                row.extend(rest);
                return Ok(vec![row]);
            }
            Ok(vec![rest.to_vec()])
        }
        async fn execute(&mut self, _sql: &str) -> Result<u64> {
            Ok(0)
        }
        async fn execute_script(&mut self, _sql: &str) -> Result<()> {
            Ok(())
        }
        async fn column_types(&mut self, _sql: &str) -> Result<Vec<Option<String>>> {
            Ok(Vec::new())
        }
        async fn load_rows(&mut self, _t: &LoadTarget, _rows: &[Vec<Value>]) -> Result<u64> {
            Ok(0)
        }
        async fn stream_into(
            &mut self,
            _sql: &str,
            _pipeline: &mut dyn RowPipeline,
            _targets: &[LoadTarget],
        ) -> Result<Vec<u64>> {
            Ok(Vec::new())
        }
    }

    fn same(a: (&'static str, &'static str, bool), b: (&'static str, &'static str, bool)) -> bool {
        let cluster = |(cluster, started, sysid_denied)| Cluster {
            cluster,
            started,
            sysid_denied,
        };
        let (mut source, mut target) = (cluster(a), cluster(b));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let mut session = Session::across(&mut source, &mut target, false);
        rt.block_on(one_database(&mut session, &Postgres))
            .expect("identity")
    }

    #[test]
    fn one_cluster_is_one_database_whoever_may_read_its_identifier() {
        assert!(same(("7714", "t0", false), ("7714", "t0", false)));
        // One role may not read the system identifier: both sides fall back to the start time.
        assert!(same(("7714", "t0", true), ("7714", "t0", false)));
        assert!(same(("7714", "t0", false), ("7714", "t0", true)));
    }

    #[test]
    fn two_clusters_are_two_databases() {
        assert!(!same(("7714", "t0", false), ("9001", "t0", false)));
        // A promoted copy shares the identifier, not the start time.
        assert!(!same(("7714", "t0", false), ("7714", "t1", false)));
        assert!(!same(("7714", "t0", true), ("9001", "t1", false)));
    }
}
