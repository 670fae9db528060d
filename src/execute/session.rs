//! The one loop shared by real runs and `--dry-run` (sqlx-cli's pattern): every statement goes
//! through a [`Session`], which runs it or, in a dry run, only records it. What a dry run
//! prints is therefore exactly what a real run sends, in order.

use crate::backend::{read_ahead, Backend, LoadTarget, RowPipeline};
use crate::dialect::{Dialect, SourceQuery};
use crate::error::Result;
pub use crate::report::{Statement, StatementKind};
use crate::table_ref::TableRef;
use crate::value::Value;

/// Where statements run. A run reads its source and writes its target on one connection,
/// or, with `target.connection`, reads from one database and writes to another: then the
/// `inspect*` and `*_source*` methods go to the source and everything else to the target.
pub struct Session<'a> {
    /// The database the run writes to (and, unless `source` is set, reads from).
    pub backend: &'a mut dyn Backend,
    /// A separate database the source is read from, if any.
    source: Option<&'a mut dyn Backend>,
    pub dry_run: bool,
    pub log: Vec<Statement>,
}

impl<'a> Session<'a> {
    pub fn new(backend: &'a mut dyn Backend, dry_run: bool) -> Session<'a> {
        Session {
            backend,
            source: None,
            dry_run,
            log: Vec::new(),
        }
    }

    /// Read from `source`, write to `target`: two databases.
    pub fn across(
        source: &'a mut dyn Backend,
        target: &'a mut dyn Backend,
        dry_run: bool,
    ) -> Session<'a> {
        Session {
            backend: target,
            source: Some(source),
            dry_run,
            log: Vec::new(),
        }
    }

    /// The source is read from another database than the target's.
    pub fn across_databases(&self) -> bool {
        self.source.is_some()
    }

    /// How a float value is written into a text column by both strategies: the database's
    /// own spelling on one database; None across two, where the target's own conversion (or
    /// eavpivot's digits) writes it, as it always has (a SQLite target keeps its layout).
    pub fn float_text(
        &self,
        source: &crate::dialect::query::SourceQuery,
    ) -> Option<fn(f64) -> String> {
        match self.across_databases() {
            true => None,
            false => source.float_text(self.source_dialect()),
        }
    }

    /// The dialect the source is read in (the target's, on one connection).
    pub fn source_dialect(&self) -> &'static dyn Dialect {
        match &self.source {
            Some(source) => source.dialect(),
            None => self.backend.dialect(),
        }
    }

    fn reader(&mut self) -> &mut dyn Backend {
        match self.source.as_deref_mut() {
            Some(source) => source,
            None => &mut *self.backend,
        }
    }

    fn record(&mut self, kind: StatementKind, sql: &str, note: Option<String>) {
        self.push(kind, sql, note, false);
    }

    fn record_source(&mut self, kind: StatementKind, sql: &str, note: Option<String>) {
        let on_source = self.source.is_some();
        self.push(kind, sql, note, on_source);
    }

    fn push(&mut self, kind: StatementKind, sql: &str, note: Option<String>, on_source: bool) {
        self.log.push(Statement {
            kind,
            sql: sql.to_string(),
            note,
            on_source,
        });
    }

    /// A read-only query of the source that also runs in a dry run.
    pub async fn inspect(&mut self, sql: &str) -> Result<Vec<Vec<Value>>> {
        self.record_source(StatementKind::Inspect, sql, None);
        self.reader().query(sql).await
    }

    /// A read-only query of the target (existence, catalog, locks) that also runs in a dry run.
    pub async fn inspect_target(&mut self, sql: &str) -> Result<Vec<Vec<Value>>> {
        self.record(StatementKind::Inspect, sql, None);
        self.backend.query(sql).await
    }

    /// Whether `table` exists in the target database (a read-only check, run in a dry run too).
    pub async fn target_exists(&mut self, table: &TableRef) -> Result<bool> {
        let sql = self.backend.dialect().table_exists(table);
        Ok(crate::value::first_int(&self.inspect_target(&sql).await?) > 0)
    }

    /// A read-only query of the source whose rows go through `pipeline` one at a time instead
    /// of into memory (a scan aggregated here); runs in a dry run too.
    pub async fn inspect_scan(&mut self, sql: &str, pipeline: &mut dyn RowPipeline) -> Result<()> {
        self.record_source(StatementKind::Inspect, sql, None);
        self.reader()
            .stream_into(sql, pipeline, &[])
            .await
            .map(drop)
    }

    /// The result types of a read-only probe of the source, also in a dry run.
    pub async fn inspect_types(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        self.record_source(StatementKind::Inspect, sql, None);
        self.reader().column_types(sql).await
    }

    /// The type of `source`'s value as the source describes it, after reading the value as
    /// another type where its own would reach the stream unlike the database's text of it
    /// ([`crate::plan::source::read_value`]: `source.value` then changes).
    pub async fn describe_value(&mut self, source: &mut SourceQuery) -> Result<Option<String>> {
        let dialect = self.source_dialect();
        let mut types = self.inspect_types(&dialect.describe_value(source)).await?;
        let declared = types.first().and_then(Option::as_deref);
        if crate::plan::source::read_value(dialect, source, declared) {
            types = self.inspect_types(&dialect.describe_value(source)).await?;
        }
        Ok(types.into_iter().next().flatten())
    }

    /// The types of `source`'s entity keys as the source describes them, after reading each
    /// key as the value is read where its own type would reach the stream rounded
    /// ([`crate::plan::source::read_keys`]: `source.entity` then changes; the types do not).
    pub async fn describe_keys(&mut self, source: &mut SourceQuery) -> Result<Vec<Option<String>>> {
        let dialect = self.source_dialect();
        let types = self.inspect_types(&dialect.describe_entity(source)).await?;
        crate::plan::source::read_keys(dialect, source, &types);
        Ok(types)
    }

    /// A query of the source inside the load (verification's expected side); only recorded
    /// in a dry run, where it returns None.
    pub async fn query_source_in_load(
        &mut self,
        sql: &str,
        note: &str,
    ) -> Result<Option<Vec<Vec<Value>>>> {
        self.record_source(StatementKind::Change, sql, Some(note.to_string()));
        if self.dry_run {
            return Ok(None);
        }
        self.reader().query(sql).await.map(Some)
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

    /// The streaming load; in a dry run, the read's settings and query (with `read_note`)
    /// and one load statement are recorded. The settings run on the read's own connection.
    pub async fn stream(
        &mut self,
        (read_sql, read_note, read_settings): (&str, &str, &[String]),
        load_example: &[(String, &'static str)],
        pipeline: &mut dyn RowPipeline,
        targets: &[LoadTarget],
    ) -> Result<Vec<u64>> {
        for setting in read_settings {
            let note = "on the connection of the read below";
            self.record_source(StatementKind::Change, setting, Some(note.into()));
        }
        self.record_source(StatementKind::Change, read_sql, Some(read_note.into()));
        for (sql, note) in load_example {
            self.record(StatementKind::Change, sql, Some((*note).into()));
        }
        if self.dry_run {
            return Ok(vec![0; targets.len()]);
        }
        // For this read only: the settings describe how it reads the source.
        self.reader().set_read_settings(read_settings.to_vec())?;
        let loaded = self.stream_rows(read_sql, pipeline, targets).await;
        self.reader().set_read_settings(Vec::new())?;
        loaded
    }

    /// The read and the load of [`Session::stream`]: on one connection's backend, or read
    /// from the source database and loaded into the target.
    async fn stream_rows(
        &mut self,
        read_sql: &str,
        pipeline: &mut dyn RowPipeline,
        targets: &[LoadTarget],
    ) -> Result<Vec<u64>> {
        match self.source.as_deref_mut() {
            None => self.backend.stream_into(read_sql, pipeline, targets).await,
            Some(source) => {
                let rows = source.read_ahead(read_sql)?;
                let batch_rows = crate::backend::flush_rows(targets, self.backend.max_flush_rows());
                read_ahead::stream(&mut *self.backend, rows, pipeline, targets, batch_rows).await
            }
        }
    }
}
