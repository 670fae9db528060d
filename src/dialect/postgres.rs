//! PostgreSQL. Quoted identifiers keep their case and compare exactly, but anything longer than
//! 63 bytes is silently truncated (only a NOTICE), so the byte limit is enforced before any DDL.

use super::{Dialect, IdentLimit};
use crate::config::TableRef;

pub struct Postgres;

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

    /// Quoted identifiers are case-sensitive: only identical names collide.
    fn ident_key(&self, name: &str) -> String {
        name.to_string()
    }

    fn table_exists(&self, table: &TableRef) -> String {
        // to_regclass parses the name exactly as the statements will (unquoted parts fold).
        format!(
            "SELECT CASE WHEN to_regclass({}) IS NULL THEN 0 ELSE 1 END",
            self.quote_literal(&table.sql())
        )
    }
}
