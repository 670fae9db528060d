//! `if_exists: merge` into split targets on SQLite, PostgreSQL and MariaDB, both strategies
//! ([`crate::merge_split_case`]; SQL Server: tests/mssql).

use crate::merge_split_case::split_case;
use crate::servers::*;

#[test]
fn merges_into_split_targets_keep_each_attribute_in_its_table() {
    runtime().block_on(async {
        for db in [sqlite(), postgres(), mariadb()] {
            split_case(&db, "pushdown").await;
            split_case(&db, "stream").await;
        }
    });
}
