//! Citus: PostgreSQL whose tables may be sharded across worker nodes. The SQL dialect is
//! PostgreSQL's; what Citus adds is where a table lives. A table the run creates is
//! distributed like the source (same distribution column, co-located shards) right after
//! its `CREATE TABLE`, so the pivot's `INSERT … SELECT … GROUP BY entity` runs on the
//! workers, shard by shard, instead of pulling every row through the coordinator.
//!
//! Only SQL text here, as everywhere under `dialect/`; whether to distribute is decided in
//! `plan::distribute` from what these queries read.

use std::time::Duration;

use super::prelude::*;
use super::Postgres;
use crate::table_ref::TableRef;

/// Table names from this many bytes on get their shards created one at a time
/// ([`ScaleOut::distribute`]); measured safe at 54 and 55 bytes, a margin below.
pub const LONG_SHARDED_NAME: usize = 50;

/// A database that can spread one table over several servers.
pub trait ScaleOut: Send + Sync {
    /// One row, one integer: 1 when the engine is installed in this database, else 0. Runs
    /// on any server of the dialect (the catalogs it reads always exist).
    fn installed(&self) -> String;

    /// At most one row `(distribution column, colocation group)` when `table` is spread over
    /// the workers by a column (hash-distributed); no row for a local, reference or missing
    /// table. Only run where [`ScaleOut::installed`] said 1.
    fn distribution(&self, table: &TableRef) -> String;

    /// Spread the just-created, still empty `table` by `column` over the shards of
    /// `colocate_with`, so rows with the same key live on the same worker as the source's.
    fn distribute(&self, table: &TableRef, column: &str, colocate_with: &TableRef) -> String;

    /// Statements, run right after `BEGIN`, that make the transaction's statements give up
    /// after waiting `timeout` for a lock on every node, workers included.
    fn transaction_lock_timeout(&self, timeout: Duration) -> Vec<String>;

    /// A query giving rows `(table, holder, holder's program)` for what session `id` waits
    /// for anywhere in the cluster (a lock held on a worker included).
    fn cluster_lock_holders(&self, id: i64) -> String;
}

pub struct Citus;

/// The source column an entity expression names (`entity`, `kv.entity`, `"Entity"`), as
/// PostgreSQL stores it (unquoted names fold to lower case); None for any other expression.
/// A table can only be distributed like the source by a key that is its distribution column.
pub fn column_named(expr: &str) -> Option<String> {
    let expr = expr.trim();
    let last = match expr.rsplit_once('.') {
        Some((_, last)) if !expr.ends_with('"') || last.starts_with('"') => last,
        _ => expr,
    };
    if let Some(quoted) = last.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
        return Some(quoted.replace("\"\"", "\""));
    }
    let plain = !last.is_empty()
        && last
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    plain.then(|| last.to_ascii_lowercase())
}

impl ScaleOut for Citus {
    fn installed(&self) -> String {
        "SELECT count(*) FROM pg_catalog.pg_extension WHERE extname = 'citus'".into()
    }

    /// `partmethod = 'h'`: hash-distributed. Reference tables (`n`) have no column, and
    /// the deprecated append-distributed tables (`a`) cannot be co-located.
    fn distribution(&self, table: &TableRef) -> String {
        format!(
            "SELECT column_to_column_name(logicalrelid, partkey), colocationid \
             FROM pg_dist_partition \
             WHERE logicalrelid = to_regclass({}) AND partmethod = 'h'",
            Postgres.quote_literal(&table.sql())
        )
    }

    /// Citus reads the column argument as a plain name (`get_attnum`), not SQL: the name as
    /// stored, unquoted.
    ///
    /// A table name of [`LONG_SHARDED_NAME`] bytes or more makes each shard's name 63 bytes:
    /// its row type's array name is then cut to 63, and two shards on one worker whose ids
    /// differ in the last digit collide in `pg_type` when created in parallel in one
    /// transaction — a distributed deadlock (Citus 13.2, reproduced with 56–58-byte names in
    /// about half the tries). For such names the shards are created one at a time
    /// (`citus.multi_shard_modify_mode = sequential`, local to the transaction, set in the
    /// same statement: the `FROM` is evaluated first); shorter names keep parallel creation.
    fn distribute(&self, table: &TableRef, column: &str, colocate_with: &TableRef) -> String {
        let call = format!(
            "SELECT create_distributed_table({}, {}, colocate_with => {})",
            Postgres.quote_literal(&table.sql()),
            Postgres.quote_literal(column),
            Postgres.quote_literal(&colocate_with.sql())
        );
        match table.name().len() >= LONG_SHARDED_NAME {
            true => format!(
                "{call} FROM (SELECT set_config('citus.multi_shard_modify_mode', 'sequential', true)) sequential_shards"
            ),
            false => call,
        }
    }

    /// A session's `lock_timeout` stays on the coordinator; a `SET LOCAL` is sent on to the
    /// workers' connections of the same transaction when `citus.propagate_set_commands` is
    /// `local` (measured: a worker-side wait stopped at 1.1 s of a 1 s limit, against 7 s
    /// past it with the session setting alone).
    fn transaction_lock_timeout(&self, timeout: Duration) -> Vec<String> {
        vec![
            "SET LOCAL citus.propagate_set_commands = 'local'".into(),
            format!("SET LOCAL lock_timeout = {}", timeout.as_millis()),
        ]
    }

    /// `citus_lock_waits` pairs waiting and blocking distributed transactions by global
    /// pid (node id × 10¹⁰ + pid on that node); the waiting one is ours when its pid is `id`.
    fn cluster_lock_holders(&self, id: i64) -> String {
        format!(
            "SELECT COALESCE(substring(w.blocked_statement from \
             '(?i)(?:into|table|update|from)\\s+([^\\s(;]+)'), 'a lock on a worker'), \
             'global pid ' || w.blocking_gpid || ' (node ' || w.blocking_nodeid || ')', \
             COALESCE(left(w.current_statement_in_blocking_process, 200), '?') \
             FROM citus_lock_waits w WHERE w.waiting_gpid % 10000000000 = {id} LIMIT 1"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribute_names_the_table_column_and_colocation_as_literals() {
        let t = TableRef::parse("\"Wide\"").expect("table");
        let s = TableRef::parse("sales.kv").expect("table");
        assert_eq!(
            Citus.distribute(&t, "it's", &s),
            "SELECT create_distributed_table('\"Wide\"', 'it''s', colocate_with => 'sales.kv')"
        );
        let long = TableRef::parse(&"w".repeat(LONG_SHARDED_NAME)).expect("table");
        assert!(Citus.distribute(&long, "e", &s).ends_with(
            "FROM (SELECT set_config('citus.multi_shard_modify_mode', 'sequential', true)) sequential_shards"
        ));
        assert!(Citus
            .distribution(&s)
            .contains("to_regclass('sales.kv') AND partmethod = 'h'"));
    }
}
