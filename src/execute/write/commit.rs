//! The COMMIT and what is known after it: a COMMIT that fails (the connection lost on the
//! way, an error at commit) leaves its outcome unknown from the error alone, so the targets
//! are looked at again and the run says which — went through, did not happen, or unknown —
//! instead of claiming a rollback. Also the checks on an existing target before the run: a
//! view is refused, what a `replace` would leave behind is refused or noted, and the identity
//! is kept to judge an unknown COMMIT by.

use crate::config::{IfExists, TableRef};
use crate::dialect::Dialect;
use crate::error::{Error, Result};

use super::super::session::Session;
use super::Writes;
use crate::value::{first_int, Value};

impl Writes {
    /// The targets' names, for the messages: `kv_wide is the new table`, `a, b are the new
    /// tables`.
    pub(super) fn new_tables(&self) -> String {
        let names = self.table_names();
        match names.len() {
            1 => format!("{} is the new table", names[0]),
            _ => format!("{} are the new tables", names.join(", ")),
        }
    }

    /// The names every table of the run has once it is done.
    fn table_names(&self) -> Vec<String> {
        self.tables
            .all
            .iter()
            .map(|t| t.shape.table.to_string())
            .collect()
    }

    /// COMMIT. Where DDL is transactional and the COMMIT fails (the connection lost on the
    /// way, an error the server gave at commit), whether it happened is unknown from here:
    /// the transaction is ended, the targets are looked at again, and the run says which
    /// (`settled`). Where it is not, the swap has not happened: the target is as it was
    /// whatever became of the staging rows, and the ordinary rollback says so.
    pub(super) async fn commit(
        &mut self,
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
    ) -> Result<()> {
        let failed = match session.change(&dialect.commit()).await {
            Ok(_) => {
                self.began = false;
                self.committed = true;
                return Ok(());
            }
            Err(e) if !dialect.transactional_ddl() => return Err(e),
            Err(e) => e,
        };
        // Ends a transaction still open (a COMMIT refused by the server); harmless otherwise.
        let _ = session.backend.execute(&dialect.rollback()).await;
        self.began = false;
        let outcome = self.commit_outcome(session, dialect).await;
        self.settled = Some(format!(
            "the COMMIT failed, so whether it happened was checked again: {outcome}"
        ));
        Err(failed)
    }

    /// After a failed COMMIT: whether the tables that take their target's name in the
    /// commit (built under a staging name, or new) are in place, by the database's own
    /// identity of each target name.
    async fn commit_outcome(&self, session: &mut Session<'_>, dialect: &dyn Dialect) -> String {
        let names = self.table_names();
        let check = names.join(", ");
        let mut changed = Vec::new();
        for table in &self.tables.all {
            if table.append || (table.exists && !table.staged()) || table.merge.is_some() {
                // Rows added to a table that stays: its identity says nothing.
                return format!(
                    "unknown: check {check} (rows were added to a table that was there before)"
                );
            }
            match read_identity(session, dialect, &table.shape.table).await {
                Ok(now) => changed.push(now.is_some() && now != table.identity_before),
                Err(e) => {
                    return format!(
                        "unknown: check {check} (the database could not be asked: {e}; a COMMIT that never reached the server is rolled back by it)"
                    )
                }
            }
        }
        if changed.iter().all(|c| *c) {
            format!("the commit went through: {}", self.new_tables())
        } else if changed.iter().all(|c| !c) {
            format!("the commit did not happen and the transaction was rolled back: {check} is as it was")
        } else {
            format!("unknown: check {check} (some tables are new, some are not)")
        }
    }
}

/// A view is not a table to replace or merge into: replacing would drop it (or, where the
/// swap renames, move it aside under a staging name), whatever reads it.
pub(super) async fn refuse_a_view(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    table: &TableRef,
    if_exists: IfExists,
) -> Result<()> {
    let Some(sql) = dialect.view_exists(table) else {
        return Ok(());
    };
    if first_int(&session.backend.query(&sql).await?) == 0 {
        return Ok(());
    }
    let how = match if_exists {
        IfExists::Merge => "merge",
        _ => "replace",
    };
    Err(Error::Usage(format!(
        "target table {table} is a view: if_exists: {how} writes tables only, and would drop or rename the view; nothing was written: choose another target.table"
    )))
}

/// What the existing `table` has that `if_exists: replace` does not carry over to the table
/// it swaps in ([`crate::dialect::Catalog::replace_leaves`]). What the database would refuse
/// to drop or rename at the swap — after the whole load, with a hint to `DROP … CASCADE` —
/// is refused now, before any write; what would silently go with the replaced table (a
/// grant, an index, a trigger) is said in a note of the plan.
pub(super) async fn replace_leaves(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    table: &TableRef,
) -> Result<Option<String>> {
    let Some(sql) = dialect.replace_leaves(table) else {
        return Ok(None);
    };
    let (mut blocking, mut lost) = (Vec::new(), Vec::new());
    for row in session.inspect_target(&sql).await? {
        let Some(what) = row.first().and_then(Value::as_text) else {
            continue;
        };
        match row.get(1).and_then(Value::as_i64) {
            Some(1) => blocking.push(what),
            _ => lost.push(what),
        }
    }
    if !blocking.is_empty() {
        return Err(Error::Usage(format!(
            "cannot replace {table}: the database would refuse to drop or rename it from under what depends on it ({}), after the whole load; nothing was written: drop those before the run and create them again after it, or use if_exists: merge, which keeps the table",
            listed(&blocking)
        )));
    }
    Ok((!lost.is_empty()).then(|| {
        format!(
            "replacing {table}: the new table does not carry over the old one's {} (create them again after the run, or use if_exists: merge, which keeps the table and them)",
            listed(&lost)
        )
    }))
}

/// `a, b, c and 4 more`: at most ten named.
fn listed(items: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut text = items
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN {
        text.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    text
}

/// The database's identity of the table `table` names (None: no such table), read without
/// recording it (not part of what the run does, so not shown by a dry run).
pub(super) async fn read_identity(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    table: &TableRef,
) -> Result<Option<String>> {
    let rows = session
        .inspect_target(&dialect.table_identity(table))
        .await?;
    Ok(rows
        .first()
        .and_then(|row| row.first())
        .and_then(crate::value::Value::as_text))
}
