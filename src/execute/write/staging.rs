//! Staging names, the per-table run lock, and what a crashed run left behind.
//!
//! A staging name is unique to its run (`<table>__eavpivot_<tag>`, the replaced table
//! `<table>__eavpivot_old_<tag>`), so a user's table can never be mistaken for one and two
//! runs never build into the same table. Where DDL is not transactional, a staging table is
//! visible and survives a crash; there the database's own lock (held by the connection, so a
//! killed run releases it) keeps a second run of the same table out, and while it is held
//! every table that carries a run mark of this job is a crashed run's leftover, dropped
//! before any work. A replaced table (moved aside by the swap's RENAME and dropped after it)
//! carries the user's table as it was, not a mark: it is recognised by the table that took
//! the target's name in the same RENAME, which carries the mark of the run whose tag the
//! replaced name has. A user's table that only looks like one is never touched.

use std::hash::{BuildHasher, Hasher};

use crate::config::TableRef;
use crate::dialect::Dialect;
use crate::error::{Error, Result};
use crate::value::Value;

use super::super::session::Session;

const STAGING: &str = "__eavpivot_";
const REPLACED: &str = "__eavpivot_old_";
const TAG_LEN: usize = 8;

/// This run's identity in the names and marks of the tables it builds.
pub struct Run {
    /// Random per run; table `i` of the run is tagged `seed + i` in hex, so that the tables
    /// of one run (split tables whose names were cut to the same base) never share a name.
    seed: u32,
    job: String,
}

impl Run {
    pub fn new(job: &str) -> Run {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            hasher.write_u128(t.as_nanos());
        }
        Run {
            seed: hasher.finish() as u32,
            job: job.to_string(),
        }
    }

    /// The tag of the run's `index`-th table.
    pub fn tag(&self, index: usize) -> String {
        format!("{:08x}", self.seed.wrapping_add(index as u32))
    }

    /// What a staging table created outside a transaction is marked with (a table comment
    /// where the database has them): the job and the run, so a later run can tell its own
    /// job's leftovers from anyone else's table.
    pub fn mark(&self, tag: &str) -> String {
        format!("{} run {tag}", job_mark(&self.job))
    }

    pub fn staging_name(&self, dialect: &dyn Dialect, table: &TableRef, tag: &str) -> TableRef {
        base(dialect, table).with_suffix(&format!("{STAGING}{tag}"))
    }

    /// Where the replaced target goes during a swap that cannot drop it in the same step.
    pub fn replaced_name(&self, dialect: &dyn Dialect, table: &TableRef, tag: &str) -> TableRef {
        base(dialect, table).with_suffix(&format!("{REPLACED}{tag}"))
    }

    /// Take the database's lock on writing `table`, where it has one; another run holding
    /// it is refused at once, naming who holds it. A holder the server is ending (a run
    /// killed a moment ago, its transaction still rolling back) releases the lock within
    /// seconds: that one is waited for, up to [`ENDING_HOLDER_WAIT`], saying so.
    pub async fn lock(
        &self,
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
        table: &TableRef,
    ) -> Result<()> {
        let Some(sql) = dialect.write_lock(table) else {
            return Ok(());
        };
        let started = std::time::Instant::now();
        let mut said = false;
        loop {
            let rows = session.inspect_target(&sql).await?;
            let row = rows.first().map(Vec::as_slice).unwrap_or_default();
            if row.first().and_then(Value::as_i64) == Some(1) {
                return Ok(());
            }
            let Some(id) = row.get(1).and_then(Value::as_i64) else {
                return Err(Error::Job(format!(
                    "another eavpivot run (another session) is writing {table} right now: wait for it to finish or stop it; nothing was written"
                )));
            };
            let (doing, ending) = holder_activity(session, dialect, id).await;
            if !ending || started.elapsed() >= ENDING_HOLDER_WAIT {
                return Err(Error::Job(format!(
                    "another eavpivot run (connection {id}{doing}) is writing {table} right now: wait for it to finish or stop it; if no run is going (a run killed with -9 leaves its statement running on the server until it ends), end it with KILL {id}; nothing was written"
                )));
            }
            if !said && !session.dry_run {
                eprintln!(
                    "waiting up to {} s for connection {id}, which the server is ending, to release its write lock on {table}",
                    ENDING_HOLDER_WAIT.as_secs()
                );
                said = true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    /// Drop what an earlier run of this job left behind for `table` (staging tables marked
    /// with this job, replaced tables a run of this job proved it made), saying so; only
    /// while holding the lock, so a run still going is never touched.
    pub async fn clean_leftovers(
        &self,
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
        table: &TableRef,
    ) -> Result<()> {
        let base = base(dialect, table);
        let prefix = format!("{}{STAGING}", base.name());
        // Listed from the base name: the target itself is among them, and its mark says
        // which run put it in place (and so moved the replaced table aside).
        let Some(sql) = dialect.leftover_tables(table, &base.name()) else {
            return Ok(());
        };
        let rows = session.inspect_target(&sql).await?;
        let text = |row: &Vec<Value>, i: usize| {
            row.get(i)
                .and_then(Value::as_text)
                .unwrap_or_default()
                .to_string()
        };
        let target_name = table.name();
        let target_mark = rows
            .iter()
            .find(|row| text(row, 0) == target_name)
            .or_else(|| {
                rows.iter()
                    .find(|row| text(row, 0).eq_ignore_ascii_case(&target_name))
            })
            .map(|row| text(row, 1))
            .unwrap_or_default();
        for row in &rows {
            let (name, comment) = (text(row, 0), text(row, 1));
            let Some(kind) = self.leftover_kind(&prefix, &name, &comment, &target_mark) else {
                continue;
            };
            let leftover = base.with_name_cut(0).with_suffix(&name);
            session
                .change(&dialect.drop_table(&leftover))
                .await
                .map_err(|e| e.with_context(&format!("dropping {leftover}, {kind}")))?;
            let done = if session.dry_run {
                "would drop"
            } else {
                "dropped"
            };
            eprintln!("{done} {leftover}: {kind}");
        }
        Ok(())
    }

    /// Why `name` (with its comment) is an earlier run's leftover, if it is one. A staging
    /// table carries its run's mark; a replaced table is proved by the target's mark: the
    /// table that took the target's name carries the run whose tag the replaced name has.
    fn leftover_kind(
        &self,
        prefix: &str,
        name: &str,
        comment: &str,
        target_mark: &str,
    ) -> Option<&'static str> {
        let rest = name.strip_prefix(prefix)?;
        let run_of = |mark: &str| {
            mark.strip_prefix(&job_mark(&self.job))
                .and_then(|r| r.strip_prefix(" run "))
                .filter(|tag| is_tag(tag))
                .map(str::to_string)
        };
        if let Some(tag) = rest.strip_prefix("old_") {
            return (is_tag(tag) && run_of(target_mark).as_deref() == Some(tag)).then_some(
                "the table an earlier run of this job replaced and did not get to drop",
            );
        }
        (run_of(comment).as_deref() == Some(rest))
            .then_some("the staging table of an earlier run of this job that did not finish")
    }
}

/// What the lock holder is doing, as the server says (`, running `INSERT INTO …` for 42 s
/// from 127.0.0.1:50312`), or nothing where it cannot say.
/// What the lock holder `id` is doing, for the message, and whether the server is ending it
/// (MariaDB's `Killed` command: the locks go once its rollback is done).
async fn holder_activity(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    id: i64,
) -> (String, bool) {
    let Some(sql) = dialect.session_activity(id) else {
        return (String::new(), false);
    };
    let Ok(rows) = session.inspect_target(&sql).await else {
        return (String::new(), false);
    };
    let Some(row) = rows.first() else {
        return (String::new(), false);
    };
    let text = |i: usize| row.get(i).and_then(Value::as_text).unwrap_or_default();
    let secs = row.get(1).and_then(Value::as_i64).unwrap_or(0);
    let doing = match text(3) {
        statement if !statement.is_empty() => {
            let statement: String = statement.split_whitespace().collect::<Vec<_>>().join(" ");
            format!("running `{statement}…`")
        }
        _ => format!("{} ({})", text(0), text(2)),
    };
    let ending = text(0).eq_ignore_ascii_case("killed");
    (format!(", {doing} for {secs} s, from {}", text(4)), ending)
}

/// How long a write lock held by a session the server is ending is waited for.
const ENDING_HOLDER_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The job part of a mark: plain characters only, so that it needs no escaping wherever the
/// database keeps it.
fn job_mark(job: &str) -> String {
    let job: String = job
        .chars()
        .take(64)
        .map(|c| match c.is_ascii_alphanumeric() || "_-. ".contains(c) {
            true => c,
            false => '_',
        })
        .collect();
    format!("eavpivot job {job}")
}

fn is_tag(text: &str) -> bool {
    text.len() == TAG_LEN && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The table's name, cut where needed so that the longest derived name fits the limit of
/// the database's own names (the naming plan's one-pass cut,
/// [`crate::dialect::IdentLimit::cut_to_fit`]; [`Dialect::own_name_limit`]).
fn base(dialect: &dyn Dialect, table: &TableRef) -> TableRef {
    let longest = format!("{REPLACED}{}", "0".repeat(TAG_LEN));
    dialect.own_name_limit().cut_table(table, &longest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::{MariaDb, MsSql, Postgres};

    fn table(text: &str) -> TableRef {
        TableRef::parse(text).expect("table name")
    }

    #[test]
    fn staging_names_are_unique_per_run_and_fit_the_identifier_limit() {
        let (a, b) = (Run::new("j"), Run::new("j"));
        let t = table("kv_wide");
        let (ta, tb) = (a.tag(0), b.tag(0));
        assert_ne!(
            a.staging_name(&MariaDb, &t, &ta),
            b.staging_name(&MariaDb, &t, &tb)
        );
        let long = table(&format!("`{}`", "é".repeat(60)));
        let staged = a.replaced_name(&MariaDb, &long, &ta);
        assert_eq!(staged.name().chars().count(), 64, "{staged}");
        assert!(staged.sql().starts_with('`') && staged.sql().ends_with('`'));
        // Split tables whose names differ only past the cut still get distinct names.
        let (p1, p2) = (
            table(&"n".repeat(63)),
            table(&format!("{}_2", "n".repeat(63))),
        );
        let (s1, s2) = (
            a.staging_name(&Postgres, &p1, &a.tag(0)),
            a.staging_name(&Postgres, &p2, &a.tag(1)),
        );
        assert!(s1.name().len() <= 63 && s2.name().len() <= 63);
        assert_ne!(s1, s2);
        // SQL Server's own names fit Babelfish's 63 bytes, under its 128-character limit.
        let m = table(&format!("[{}]", "m".repeat(60)));
        let (staged, replaced) = (
            a.staging_name(&MsSql, &m, &ta),
            a.replaced_name(&MsSql, &m, &ta),
        );
        assert!(staged.name().len() <= 63 && replaced.name().len() <= 63);
        assert!(staged.name().ends_with(&ta) && replaced.name().ends_with(&ta));
    }

    #[test]
    fn only_marked_staging_tables_of_this_job_and_proved_replaced_tables_are_leftovers() {
        let run = Run::new("j");
        let p = "kv_wide__eavpivot_";
        let other = Run::new("j");
        let tag = other.tag(3);
        let marked = other.mark(&tag);
        let name = format!("{p}{tag}");
        assert!(run.leftover_kind(p, &name, &marked, "").is_some());
        // A user's table of a similar name, or another job's staging table, is not.
        assert!(run
            .leftover_kind(p, "kv_wide__eavpivot_new", "", "")
            .is_none());
        assert!(run.leftover_kind(p, &name, "", "").is_none());
        assert!(Run::new("k").leftover_kind(p, &name, &marked, "").is_none());
        // A replaced table only when the target carries the mark of the run that named it.
        let old = format!("{p}old_{tag}");
        assert!(run.leftover_kind(p, &old, "", &marked).is_some());
        assert!(run.leftover_kind(p, &old, "", "").is_none());
        assert!(run
            .leftover_kind(p, "kv_wide__eavpivot_old_deadbeef", "", &marked)
            .is_none());
        assert!(Run::new("k").leftover_kind(p, &old, "", &marked).is_none());
        assert!(run
            .leftover_kind(p, "kv_wide__eavpivot_old_new", "", &marked)
            .is_none());
    }
}
