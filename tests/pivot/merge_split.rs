//! `if_exists: merge` into split targets on SQLite, PostgreSQL and MariaDB, both strategies
//! ([`crate::merge_split_case`]; SQL Server: tests/mssql). One test per database, so that
//! they run side by side.

use crate::merge_split_case::split_case;
use crate::servers::*;

fn both_strategies(db: Db) {
    runtime().block_on(async {
        split_case(&db, "pushdown").await;
        split_case(&db, "stream").await;
    });
}

#[test]
fn sqlite_merges_into_split_targets() {
    both_strategies(sqlite());
}

#[test]
fn postgres_merges_into_split_targets() {
    both_strategies(postgres());
}

#[test]
fn mariadb_merges_into_split_targets() {
    both_strategies(mariadb());
}
