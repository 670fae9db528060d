//! A backend that answers from a script instead of a database: discovery returns the given
//! attribute names (in the dialect's own key encoding), type probes return the dialect's
//! integer type, existence checks return "absent", and every other statement is recorded.
//! Where discovery is a scan aggregated in eavpivot (SQLite), the scan yields each attribute's
//! rows: its non-null values as 0-byte values, then its NULLs.
//! It lets golden tests render any dialect's exact statements with no server at hand.

use async_trait::async_trait;
use eavpivot::backend::{Backend, LoadTarget, RowPipeline};
use eavpivot::dialect::prelude::*;
use eavpivot::value::Value;
use eavpivot::Result;

pub struct ScriptedBackend {
    pub dialect: &'static dyn Dialect,
    /// (attribute name, rows, non-null values)
    pub attributes: Vec<(String, i64, i64)>,
    pub entity_keys: usize,
    pub log: Vec<String>,
}

impl ScriptedBackend {
    pub fn new(
        dialect: &'static dyn Dialect,
        attributes: Vec<(String, i64, i64)>,
        entity_keys: usize,
    ) -> Self {
        ScriptedBackend {
            dialect,
            attributes,
            entity_keys,
            log: Vec::new(),
        }
    }
}

#[async_trait]
impl Backend for ScriptedBackend {
    fn dialect(&self) -> &'static dyn Dialect {
        self.dialect
    }

    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Value>>> {
        self.log.push(sql.to_string());
        if sql.contains("AS n_rows") {
            return Ok(self
                .attributes
                .iter()
                .map(|(name, rows, values)| {
                    vec![
                        Value::Text(self.dialect.encode_attribute_key(name)),
                        Value::Int(*rows),
                        Value::Int(*values),
                    ]
                })
                .collect());
        }
        if sql.contains("AS table_options") {
            // A schema in utf8mb4, as a server's default is: created tables need no option.
            return Ok(vec![vec![Value::Null]]);
        }
        if sql.contains("GET_LOCK(") || sql.contains("DBMS_LOCK.REQUEST(") {
            // The run's write lock, taken at once.
            return Ok(vec![vec![Value::Int(1), Value::Int(7)]]);
        }
        Ok(vec![vec![Value::Int(0)]])
    }

    async fn execute(&mut self, sql: &str) -> Result<u64> {
        self.log.push(sql.to_string());
        Ok(0)
    }

    async fn execute_script(&mut self, sql: &str) -> Result<()> {
        self.log.push(sql.to_string());
        Ok(())
    }

    async fn column_types(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        self.log.push(sql.to_string());
        Ok(vec![
            Some(self.dialect.integer_type().to_string());
            self.entity_keys
        ])
    }

    async fn load_rows(&mut self, _target: &LoadTarget, rows: &[Vec<Value>]) -> Result<u64> {
        Ok(rows.len() as u64)
    }

    async fn stream_into(
        &mut self,
        read_sql: &str,
        pipeline: &mut dyn RowPipeline,
        targets: &[LoadTarget],
    ) -> Result<Vec<u64>> {
        self.log.push(read_sql.to_string());
        if targets.is_empty() && read_sql.contains(" AS null_e0") {
            for (name, rows, values) in &self.attributes {
                for i in 0..*rows {
                    let mut row = vec![
                        Value::Text(self.dialect.encode_attribute_key(name)),
                        if i < *values {
                            Value::Int(0)
                        } else {
                            Value::Null
                        },
                    ];
                    row.extend((0..self.entity_keys).map(|_| Value::Int(0)));
                    pipeline.push(row)?;
                }
            }
            pipeline.finish()?;
        }
        Ok(vec![0; targets.len()])
    }
}
