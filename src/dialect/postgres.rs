//! PostgreSQL. Quoted identifiers keep their case and compare exactly, but anything longer than
//! 63 bytes is silently truncated (only a NOTICE), so the byte limit is enforced before any DDL.

use super::{Dialect, IdentLimit, RowBudget};
use crate::config::TableRef;

pub struct Postgres;

impl Postgres {
    /// The bulk load: `COPY t (c…) FROM STDIN (FORMAT binary)`, fed by the backend.
    pub fn copy_in_binary(&self, table: &TableRef, columns: &[String]) -> String {
        let cols: Vec<String> = columns.iter().map(|c| self.quote_ident(c)).collect();
        format!(
            "COPY {table} ({}) FROM STDIN (FORMAT binary)",
            cols.join(", ")
        )
    }
}

impl Dialect for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn text_type(&self) -> &'static str {
        "text"
    }

    fn ident_limit(&self) -> IdentLimit {
        IdentLimit::Bytes(63)
    }

    /// `tables can have at most 1600 columns`.
    fn max_columns(&self) -> Option<usize> {
        Some(1_600)
    }

    /// Measured on PostgreSQL 15: `row is too big: size …, maximum size 8160`; a 23-byte
    /// tuple header (plus alignment) and at most an 18-byte TOAST pointer per non-null cell.
    fn row_budget(&self) -> Option<RowBudget> {
        Some(RowBudget {
            max_bytes: 8_160,
            overhead: 32,
            cell: 18,
            checked_at_create: false,
        })
    }

    /// Quoted identifiers are case-sensitive: only identical names collide.
    fn ident_key(&self, name: &str) -> String {
        name.to_string()
    }

    fn placeholder(&self, index: usize) -> String {
        format!("${index}")
    }

    fn table_exists(&self, table: &TableRef) -> String {
        // to_regclass parses the name exactly as the statements will (unquoted parts fold).
        format!(
            "SELECT CASE WHEN to_regclass({}) IS NULL THEN 0 ELSE 1 END",
            self.quote_literal(&table.sql())
        )
    }
}
