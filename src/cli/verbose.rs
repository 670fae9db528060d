//! `--verbose`: every statement on stderr as it is sent, then its time and row count.
//!
//! A wrapper around the connection rather than a hook in the executor, so what is printed is
//! exactly what reaches the database, in order, on every path (discovery, DDL, load, verify).

use std::time::Instant;

use async_trait::async_trait;

use crate::backend::read_ahead::ReadAhead;
use crate::backend::{Backend, LoadTarget, RowPipeline};
use crate::dialect::Dialect;
use crate::error::Result;
use crate::value::Value;

pub struct Logged(pub Box<dyn Backend>);

fn start(what: &str, sql: &str) -> Instant {
    eprintln!("-- {what}:\n{};", sql.trim_end());
    Instant::now()
}

/// The session settings a connection was given (lock timeout, its id), as `-v` shows
/// statements.
pub fn echo_session(sent: &[String]) {
    for sql in sent {
        eprintln!("-- session:\n{};", sql.trim_end());
    }
}

fn done(started: Instant, outcome: &str) {
    eprintln!(
        "-- {outcome} in {:.1} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
}

#[async_trait]
impl Backend for Logged {
    fn dialect(&self) -> &'static dyn Dialect {
        self.0.dialect()
    }

    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Value>>> {
        let t = start("query", sql);
        let rows = self.0.query(sql).await?;
        done(t, &format!("{} rows", rows.len()));
        Ok(rows)
    }

    async fn execute(&mut self, sql: &str) -> Result<u64> {
        let t = start("execute", sql);
        let n = self.0.execute(sql).await?;
        // Not the affected-row count: some drivers repeat the previous statement's for DDL.
        done(t, "done");
        Ok(n)
    }

    /// Forwarded, not re-done: the backend's own settings (SQLite's busy timeout, the server
    /// session id that names lock holders) must happen on the wrapped connection.
    async fn set_lock_timeout(&mut self, timeout: std::time::Duration) -> Result<Vec<String>> {
        let t = Instant::now();
        let sent = self.0.set_lock_timeout(timeout).await?;
        echo_session(&sent);
        done(t, "session settings");
        Ok(sent)
    }

    async fn execute_script(&mut self, sql: &str) -> Result<()> {
        eprintln!("-- script of {} lines", sql.lines().count());
        let t = Instant::now();
        self.0.execute_script(sql).await?;
        done(t, "script ran");
        Ok(())
    }

    async fn column_types(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        let t = start("column types of", sql);
        let types = self.0.column_types(sql).await?;
        done(t, &format!("{} columns", types.len()));
        Ok(types)
    }

    async fn load_rows(&mut self, target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
        let t = Instant::now();
        let n = self.0.load_rows(target, rows).await?;
        done(t, &format!("loaded {n} rows into {}", target.table));
        Ok(n)
    }

    fn read_ahead(&mut self, read_sql: &str) -> Result<ReadAhead> {
        eprintln!(
            "-- read on a connection of its own:\n{};",
            read_sql.trim_end()
        );
        self.0.read_ahead(read_sql)
    }

    fn max_flush_rows(&self) -> usize {
        self.0.max_flush_rows()
    }

    fn set_read_settings(&mut self, settings: Vec<String>) -> Result<()> {
        for setting in &settings {
            eprintln!("-- each later read's connection runs first:\n{setting};");
        }
        self.0.set_read_settings(settings)
    }

    async fn stream_into(
        &mut self,
        read_sql: &str,
        pipeline: &mut dyn RowPipeline,
        targets: &[LoadTarget],
    ) -> Result<Vec<u64>> {
        let t = start("read row by row", read_sql);
        let loaded = self.0.stream_into(read_sql, pipeline, targets).await?;
        let tables: Vec<String> = targets
            .iter()
            .zip(&loaded)
            .map(|(target, n)| format!("{n} rows loaded into {}", target.table))
            .collect();
        done(
            t,
            format!("read; {}", tables.join(", ")).trim_end_matches("; "),
        );
        Ok(loaded)
    }
}
