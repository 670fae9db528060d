//! The one loop shared by real runs and `--dry-run` (sqlx-cli's pattern): every statement goes
//! through a [`Session`], which runs it or, in a dry run, only records it. What a dry run
//! prints is therefore exactly what a real run sends, in order.

use crate::backend::{Backend, LoadTarget, RowPipeline};
use crate::error::Result;
pub use crate::report::{Statement, StatementKind};
use crate::value::Value;

pub struct Session<'a> {
    pub backend: &'a mut dyn Backend,
    pub dry_run: bool,
    pub log: Vec<Statement>,
}

impl<'a> Session<'a> {
    pub fn new(backend: &'a mut dyn Backend, dry_run: bool) -> Session<'a> {
        Session {
            backend,
            dry_run,
            log: Vec::new(),
        }
    }

    fn record(&mut self, kind: StatementKind, sql: &str, note: Option<String>) {
        self.log.push(Statement {
            kind,
            sql: sql.to_string(),
            note,
        });
    }

    /// A read-only query that also runs in a dry run.
    pub async fn inspect(&mut self, sql: &str) -> Result<Vec<Vec<Value>>> {
        self.record(StatementKind::Inspect, sql, None);
        self.backend.query(sql).await
    }

    /// A read-only query whose rows go through `pipeline` one at a time instead of into
    /// memory (a scan aggregated here); runs in a dry run too.
    pub async fn inspect_scan(&mut self, sql: &str, pipeline: &mut dyn RowPipeline) -> Result<()> {
        self.record(StatementKind::Inspect, sql, None);
        self.backend.stream_into(sql, pipeline, &[]).await.map(drop)
    }

    /// The result types of a read-only probe, also in a dry run.
    pub async fn inspect_types(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        self.record(StatementKind::Inspect, sql, None);
        self.backend.column_types(sql).await
    }

    /// A statement that changes something; only recorded in a dry run.
    pub async fn change(&mut self, sql: &str) -> Result<u64> {
        self.record(StatementKind::Change, sql, None);
        if self.dry_run {
            return Ok(0);
        }
        self.backend.execute(sql).await
    }

    /// A query inside the load (verification); only recorded in a dry run, where it returns None.
    pub async fn query_in_load(
        &mut self,
        sql: &str,
        note: &str,
    ) -> Result<Option<Vec<Vec<Value>>>> {
        self.record(StatementKind::Change, sql, Some(note.to_string()));
        if self.dry_run {
            return Ok(None);
        }
        self.backend.query(sql).await.map(Some)
    }

    /// Rows for a companion table, loaded in batches; in a dry run only the statement shape
    /// (one row's worth of parameters) is recorded.
    pub async fn load_rows(
        &mut self,
        target: &LoadTarget,
        rows: &[Vec<Value>],
        statement_shape: &str,
    ) -> Result<u64> {
        self.record(
            StatementKind::Change,
            statement_shape,
            Some("companion table rows loaded in batches, statement shape for one row".into()),
        );
        if self.dry_run {
            return Ok(0);
        }
        self.backend.load_rows(target, rows).await
    }

    /// The streaming load; in a dry run, the read query and one load statement are recorded.
    pub async fn stream(
        &mut self,
        read_sql: &str,
        load_example: &[(String, &'static str)],
        pipeline: &mut dyn RowPipeline,
        targets: &[LoadTarget],
    ) -> Result<Vec<u64>> {
        self.record(
            StatementKind::Change,
            read_sql,
            Some("stream: read key-value rows in entity order, pivot in eavpivot".into()),
        );
        for (sql, note) in load_example {
            self.record(StatementKind::Change, sql, Some((*note).into()));
        }
        if self.dry_run {
            return Ok(vec![0; targets.len()]);
        }
        self.backend.stream_into(read_sql, pipeline, targets).await
    }
}
