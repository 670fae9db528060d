//! Identifier case: one rule for every name the job writes, on every database.
//!
//! Names the job writes (table names, entity key columns from `entity:` column references or
//! `name:`) behave exactly like unquoted identifiers in the operator's own SQL on that
//! database: `ITEM_WIDE` and `ITEM_ID` are `item_wide` and `item_id` on PostgreSQL, so
//! `SELECT item_id FROM item_wide` works there as it does everywhere else. A name written
//! quoted (`ID."ItemId"`), or one that could only be written quoted (`Item Code`), keeps its
//! exact spelling. Names from the data (attribute columns) are always kept exactly (quoted).
//! Table names are pasted into statements as written, so the database folds them itself;
//! entity column names are quoted like every column, so they are folded here first.

use crate::table_ref::TableRef;
use crate::terms::EntityKey;

use super::Dialect;

/// What a database does with an identifier written without quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnquotedCase {
    /// Kept as written (SQLite, MariaDB, SQL Server; they compare column names
    /// case-insensitively).
    Kept,
    /// Folded to lower case, ASCII letters only (PostgreSQL in a UTF-8 database).
    Lower,
    /// Folded to upper case, ASCII letters only (the SQL standard's rule, Oracle's).
    Upper,
}

impl UnquotedCase {
    /// The name the database stores for `name` written without quotes.
    pub fn fold(self, name: &str) -> String {
        match self {
            UnquotedCase::Kept => name.to_string(),
            UnquotedCase::Lower => name.to_ascii_lowercase(),
            UnquotedCase::Upper => name.to_ascii_uppercase(),
        }
    }
}

/// The target column of one entity key: its name folded as the database folds an unquoted
/// identifier, unless the job wrote it quoted or it can only be written quoted.
pub fn entity_column_name<D: Dialect + ?Sized>(dialect: &D, key: &EntityKey) -> String {
    let quoted = match TableRef::parse(&key.expr) {
        // A column reference: quoted as the job wrote its last part (`ID."ItemId"`).
        Ok(column) if column.name() == key.name => column.last_part() != key.name,
        // A `name:`: quoted unless it is one plain identifier.
        _ => {
            !matches!(TableRef::parse(&key.name), Ok(t) if t.sql() == t.name() && t.sql() == key.name)
        }
    };
    match quoted {
        true => key.name.clone(),
        false => dialect.unquoted_case().fold(&key.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::{MariaDb, MsSql, Postgres, Sqlite};

    fn key(expr: &str, name: &str) -> EntityKey {
        EntityKey {
            expr: expr.into(),
            name: name.into(),
        }
    }

    #[test]
    fn unquoted_names_fold_as_the_database_folds_them() {
        let plain = key("ID.ITEM_ID", "ITEM_ID");
        assert_eq!(entity_column_name(&Postgres, &plain), "item_id");
        for kept in [
            &Sqlite as &dyn Dialect,
            &MariaDb as &dyn Dialect,
            &MsSql as &dyn Dialect,
        ] {
            assert_eq!(
                entity_column_name(kept, &plain),
                "ITEM_ID",
                "{}",
                kept.name()
            );
        }
        // `name:` of an expression: a plain identifier folds; only ASCII letters fold.
        assert_eq!(
            entity_column_name(&Postgres, &key("UPPER(s.code)", "Code_É")),
            "code_É"
        );
        assert_eq!(UnquotedCase::Upper.fold("Item_id"), "ITEM_ID");
    }

    #[test]
    fn quoted_names_and_names_that_need_quotes_are_kept() {
        for k in [
            key("ID.\"ItemId\"", "ItemId"),
            key("[Item Id]", "Item Id"),
            key("`ItemId`", "ItemId"),
            key("s.a || s.b", "Item Code"),
            key("s.x", "Item-Id"),
        ] {
            assert_eq!(entity_column_name(&Postgres, &k), k.name, "{k:?}");
        }
    }
}
