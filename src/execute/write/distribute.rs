//! The scale-out engine's facts for [`crate::plan::distribute::decide`], read before any
//! write, and the statements that follow from the decision: each created table distributed
//! right after its `CREATE TABLE`, and lock timeouts that reach the workers.

use std::time::Duration;

use crate::config::{IfExists, Job, TableRef};
use crate::dialect::ScaleOut;
use crate::error::{Error, Result};
use crate::plan::distribute::{self, Distribution, Facts, Spread};
use crate::value::Value;

use super::super::first_int;
use super::super::session::Session;
use super::Writes;

/// What the run does on a scale-out engine: how created tables are spread, and what runs
/// right after `BEGIN`.
pub(super) struct ScaledOut {
    engine: &'static dyn ScaleOut,
    how: Option<Distribution>,
    lock_timeout: Duration,
}

impl ScaledOut {
    /// The statement distributing `table` (just created with `entity` as its key columns).
    pub(super) fn distribute(&self, table: &TableRef, entity: &[String]) -> Option<String> {
        let how = self.how.as_ref()?;
        let column = entity.get(how.entity)?;
        Some(self.engine.distribute(table, column, &how.colocate_with))
    }

    pub(super) fn after_begin(&self) -> Vec<String> {
        self.engine.transaction_lock_timeout(self.lock_timeout)
    }
}

impl Writes {
    /// Ask the target's database whether it is a scale-out engine and how the source is
    /// spread, decide, and remember the decision for the tables [`Writes::run`] creates.
    /// Returns the plan's note (None on a database without such an engine).
    pub async fn plan_distribution(
        &mut self,
        session: &mut Session<'_>,
        job: &Job,
    ) -> Result<Option<String>> {
        let dialect = session.backend.dialect();
        let Some(engine) = dialect.scale_out() else {
            return Ok(None);
        };
        if first_int(&session.inspect_target(&engine.installed()).await?) == 0 {
            return Ok(None);
        }
        let target_exists = self.tables.targets().iter().any(|t| t.exists);
        let mut facts = Facts {
            installed: true,
            same_database: !session.across_databases(),
            target_exists,
            ..Facts::default()
        };
        if facts.same_database {
            facts.source = spread(session, engine, &job.source.table).await?;
        }
        let kept = matches!(job.target.if_exists, IfExists::Append | IfExists::Merge);
        let replaced = job.target.if_exists == IfExists::Replace;
        // A kept target is read whatever the source: the run's tables meet it in joins.
        if target_exists && (replaced || kept) {
            facts.target = spread(session, engine, &job.target.table).await?;
        }
        let (how, note) = distribute::decide(job, &facts).map_err(Error::Job)?;
        self.scaled_out = Some(ScaledOut {
            engine,
            how,
            lock_timeout: job.lock_timeout,
        });
        Ok(note)
    }
}

async fn spread(
    session: &mut Session<'_>,
    engine: &dyn ScaleOut,
    table: &TableRef,
) -> Result<Option<Spread>> {
    let rows = session
        .inspect_target(&engine.distribution(table))
        .await
        .map_err(|e| e.with_context(&format!("reading how {table} is distributed")))?;
    Ok(rows.first().and_then(|row| {
        Some(Spread {
            column: row.first().and_then(Value::as_text)?.to_string(),
            colocation: row.get(1).and_then(Value::as_i64)?,
        })
    }))
}
