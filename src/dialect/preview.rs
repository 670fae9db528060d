//! The read-back of a finished table shown after a run (the preview): SQL text only, run by
//! [`crate::execute`] and formatted by [`crate::report`].

use super::{entity_order, Quoting, TableShape};
use crate::table_ref::TableRef;

/// The first `n` rows of `shape`'s table, `columns` (as the table has them) in entity order.
pub fn first_rows<D: Quoting + ?Sized>(
    dialect: &D,
    shape: &TableShape,
    columns: &[String],
    n: u64,
) -> String {
    let list: Vec<String> = columns.iter().map(|c| dialect.quote_ident(c)).collect();
    let query = format!(
        "SELECT {} FROM {} ORDER BY {}",
        list.join(", "),
        shape.table,
        entity_order(dialect, shape)
    );
    dialect.limit(&query, n)
}

/// The rows `table` holds (a merge's target holds more than the run wrote).
pub fn count_rows(table: &TableRef) -> String {
    format!("SELECT COUNT(*) FROM {table}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::{EntityColumn, Sqlite};

    #[test]
    fn first_rows_orders_by_the_entity_and_limits() {
        let table = TableRef::parse("t").expect("table name");
        let shape = TableShape {
            table: table.clone(),
            entity: vec![EntityColumn {
                name: "id".into(),
                sql_type: None,
            }],
            columns: Vec::new(),
            column_type: "TEXT".into(),
            primary_key: true,
        };
        let columns = ["id".to_string(), "a b".to_string()];
        assert_eq!(
            first_rows(&Sqlite, &shape, &columns, 5),
            Sqlite.limit("SELECT \"id\", \"a b\" FROM t ORDER BY \"id\"", 5)
        );
        assert_eq!(count_rows(&table), "SELECT COUNT(*) FROM t");
    }
}
