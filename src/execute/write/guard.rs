//! A run only ever reads its source: no table it writes may be the source or a joined table.
//!
//! Names alone cannot say whether two tables are the same (`kv`, `KV`, `public.kv` and a
//! search_path or default schema in between), so the database says: each table the run would
//! write that already exists is resolved to the database's own identity for it (PostgreSQL's
//! OID, SQL Server's OBJECT_ID, the catalog's schema and name elsewhere) and compared with the
//! source tables' identities. A table that does not exist yet cannot be the source.

use crate::config::TableRef;
use crate::dialect::Dialect;
use crate::error::{Error, Result};
use crate::value::Value;

use super::super::session::Session;
use super::Table;

/// Refuse (exit 2, before any write) when a table the run writes is one it reads.
pub async fn refuse_writing_sources(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    sources: &[TableRef],
    tables: &[Table],
) -> Result<()> {
    let existing: Vec<&Table> = tables.iter().filter(|t| t.exists).collect();
    // Across two databases a written table is never a read one; (two connection strings
    // naming one database are the operator's to avoid, like any other alias of a table).
    if existing.is_empty() || sources.is_empty() || session.across_databases() {
        return Ok(());
    }
    let mut source_ids = Vec::new();
    for source in sources {
        if let Some(id) = identity(session, dialect, source).await? {
            source_ids.push((source, id));
        }
    }
    for table in existing {
        let Some(id) = identity(session, dialect, &table.shape.table).await? else {
            continue;
        };
        if let Some((source, _)) = source_ids.iter().find(|(_, s)| *s == id) {
            return Err(Error::Usage(format!(
                "target table {} is the source table {source} (the run would overwrite what it reads): choose another target.table; nothing was written",
                table.shape.table
            )));
        }
    }
    Ok(())
}

async fn identity(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    table: &TableRef,
) -> Result<Option<Value>> {
    let rows = session
        .inspect_target(&dialect.table_identity(table))
        .await?;
    Ok(rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .filter(|v| !v.is_null()))
}
