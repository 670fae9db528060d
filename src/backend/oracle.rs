//! Oracle has a dialect but no backend in this build: no Oracle driver is linked, and no
//! Oracle server runs where eavpivot is built and tested. An `oracle://` connection is
//! understood (and its password hidden) so that what it cannot do is said clearly:
//! - a run is refused before anything is sent ([`connect`]);
//! - a dry run goes through the same loop as a run, with this stand-in as its connection. It
//!   takes the session's setup statements, and stops at the first query whose answer the plan
//!   needs (discovery: which attributes exist, and the entity key's types). The statements it
//!   was given are kept ([`DryRunLog`]) for the command to print before it says why it stopped.

use async_trait::async_trait;

use super::{Backend, DryRunLog, LoadTarget, RowPipeline};
use crate::dialect::{Dialect, Oracle};
use crate::error::{Error, Result};
use crate::value::Value;

/// What a run against Oracle does: refuses, before connecting.
pub fn connect() -> Result<Box<dyn Backend>> {
    Err(Error::Usage(
        "oracle: this build has no Oracle backend, so it cannot connect to Oracle; it renders Oracle SQL: eavpivot script JOB --dialect oracle (a standalone script), or run --dry-run"
            .into(),
    ))
}

/// The dry run's connection to Oracle: takes statements, answers none.
pub struct Unconnected {
    asked: DryRunLog,
}

impl Unconnected {
    /// The stand-in of a new session, which runs [`Oracle::session_setup`] first.
    pub fn new(asked: &DryRunLog) -> Unconnected {
        for sql in Oracle.session_setup() {
            asked.push(&sql);
        }
        Unconnected {
            asked: asked.clone(),
        }
    }

    fn unanswerable(&self, sql: &str) -> Error {
        self.asked.push(sql);
        Error::Usage(
            "run --dry-run on oracle stopped at its first query (printed with what came before it, except with --json): the statements after it depend on the server's answer (the value's and the entity key's types, the attributes), and this build has no Oracle backend to ask; eavpivot script JOB --dialect oracle renders a script that discovers them on the server"
                .into(),
        )
    }
}

#[async_trait]
impl Backend for Unconnected {
    fn dialect(&self) -> &'static dyn Dialect {
        &Oracle
    }

    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Value>>> {
        Err(self.unanswerable(sql))
    }

    /// Session setup only: a dry run sends no change.
    async fn execute(&mut self, sql: &str) -> Result<u64> {
        self.asked.push(sql);
        Ok(0)
    }

    async fn execute_script(&mut self, sql: &str) -> Result<()> {
        Err(self.unanswerable(sql))
    }

    async fn column_types(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        Err(self.unanswerable(sql))
    }

    async fn load_rows(&mut self, target: &LoadTarget, _rows: &[Vec<Value>]) -> Result<u64> {
        Err(self.unanswerable(&format!("-- load into {}", target.table)))
    }

    async fn stream_into(
        &mut self,
        read_sql: &str,
        _pipeline: &mut dyn RowPipeline,
        _targets: &[LoadTarget],
    ) -> Result<Vec<u64>> {
        Err(self.unanswerable(read_sql))
    }
}
