//! MariaDB / MySQL. Backslash is an escape character in literals (unless NO_BACKSLASH_ESCAPES),
//! column names compare case-insensitively and may not end in a space, and DDL commits on its
//! own, so loads go into a staging table made visible by one atomic `RENAME TABLE`.

use super::{Dialect, IdentLimit};
use crate::config::TableRef;

pub struct MariaDb;

impl Dialect for MariaDb {
    fn name(&self) -> &'static str {
        "mariadb"
    }

    fn quote_ident(&self, name: &str) -> String {
        format!("`{}`", name.replace('`', "``"))
    }

    /// As a hex literal of the UTF-8 bytes: immune to sql_mode, charset and backslash rules.
    fn quote_literal(&self, text: &str) -> String {
        if text.is_empty() {
            return "''".into();
        }
        let hex: String = text.bytes().map(|b| format!("{b:02X}")).collect();
        format!("CONVERT(X'{hex}' USING utf8mb4)")
    }

    fn text_type(&self) -> &'static str {
        "LONGTEXT"
    }

    fn ident_limit(&self) -> IdentLimit {
        IdentLimit::Chars(64)
    }

    fn ident_key(&self, name: &str) -> String {
        name.to_lowercase()
    }

    fn column_name_problem(&self, name: &str) -> Option<&'static str> {
        if name.contains('\0') {
            Some("contains a NUL character")
        } else if name.ends_with(' ') {
            Some("ends with a space, which MariaDB does not allow in a column name")
        } else {
            None
        }
    }

    /// Bytes, not characters: the default collations ignore case and trailing spaces.
    fn attribute_key(&self, attribute_expr: &str) -> String {
        format!("CAST(CONVERT({attribute_expr} USING utf8mb4) AS BINARY)")
    }

    fn attribute_key_literal(&self, name: &str) -> String {
        let hex: String = name.bytes().map(|b| format!("{b:02X}")).collect();
        if hex.is_empty() {
            "CAST('' AS BINARY)".into()
        } else {
            format!("X'{hex}'")
        }
    }

    fn begin(&self) -> String {
        "START TRANSACTION".into()
    }

    fn transactional_ddl(&self) -> bool {
        false
    }

    fn table_exists(&self, table: &TableRef) -> String {
        let schema = match table.schema() {
            Some(s) => self.quote_literal(&s),
            None => "DATABASE()".into(),
        };
        format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = {schema} AND table_name = {}",
            self.quote_literal(&table.name())
        )
    }

    /// One atomic RENAME TABLE swaps both names: readers see the old table or the new, never none.
    fn swap_in(&self, staging: &TableRef, target: &TableRef, target_exists: bool) -> Vec<String> {
        if !target_exists {
            return vec![self.rename_table(staging, target)];
        }
        let old = target.with_suffix("__eavpivot_old");
        vec![
            format!("RENAME TABLE {target} TO {old}, {staging} TO {target}"),
            self.drop_table(&old),
        ]
    }

    fn rename_table(&self, from: &TableRef, to: &TableRef) -> String {
        format!("RENAME TABLE {from} TO {to}")
    }
}
