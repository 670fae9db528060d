//! SQL text of `if_exists: merge`: the source's entities, pivoted into a staging table, are
//! upserted into the existing target. The statements are standard SQL where they can be; the
//! upsert itself is each database's native form ([`super::Dialect::upsert`]).

use super::query;
use super::Dialect;
use crate::table_ref::TableRef;

/// The columns of one merge, quoted per dialect by the caller's [`Dialect`].
pub struct MergeColumns<'a> {
    /// The entity key columns (the target's primary key).
    pub keys: &'a [String],
    /// Columns set from the staging table for every touched entity.
    pub set: &'a [String],
    /// Target columns the source has no attribute for: NULL for every touched entity.
    pub cleared: &'a [String],
    /// The key and set columns whose target type may hold text. A collation that ignores case
    /// or trailing spaces counts `acme` and `ACME` (`Red` and `red`) as one: these are compared
    /// by their bytes for "unchanged", and the keys among them are set from the staging row
    /// too, so the target takes the source's spelling as a `replace` would.
    pub spelled: &'a [String],
    /// The set columns of a floating-point type: equal by value is not the same cell (`-0`
    /// and `0`), so "unchanged" also compares their text.
    pub floats: &'a [String],
}

/// `t.k1 = s.k1 AND …`: the staging row `s` of target row `t`.
fn keys_match<D: Dialect + ?Sized>(d: &D, keys: &[String], t: &str, s: &str) -> String {
    keys.iter()
        .map(|k| {
            let k = d.quote_ident(k);
            format!("{t}.{k} = {s}.{k}")
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// Column list `k…, c…` of the staging rows that go into the target.
fn insert_list<D: Dialect + ?Sized>(d: &D, cols: &MergeColumns) -> String {
    cols.keys
        .iter()
        .chain(cols.set)
        .map(|c| d.quote_ident(c))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How a database upserts natively: data of each dialect ([`super::Schema::upsert_style`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpsertStyle {
    /// `UPDATE … FROM` the staging table for entities already in the target, then
    /// `INSERT … WHERE NOT EXISTS` for new ones (SQL Server: MERGE is avoided for its race
    /// and trigger issues; both run inside the load's transaction under `XACT_ABORT`).
    UpdateThenInsert,
    /// `INSERT … ON CONFLICT (key) DO UPDATE SET c = excluded.c` (PostgreSQL, SQLite).
    OnConflict,
    /// `UPDATE t JOIN s … SET t.c = s.c` for entities already in the target, then
    /// `INSERT … WHERE NOT EXISTS` for new ones (MariaDB: its `ON DUPLICATE KEY UPDATE` takes
    /// any unique key and fires the target's UPDATE triggers even for a row left as it is).
    UpdateJoinThenInsert,
    /// `MERGE INTO target t USING staging s ON (…) WHEN MATCHED … WHEN NOT MATCHED …`
    /// (Oracle: no `UPDATE … FROM`, no upsert clause on INSERT).
    MergeInto,
}

/// The statements that upsert the staging table's rows into `target`. A row that already is
/// its staging row ([`unchanged`]) is not written: no new row version, no UPDATE trigger, no
/// `ON UPDATE` column touched — a re-run of an unchanged source changes nothing.
pub fn upsert<D: Dialect + ?Sized>(
    d: &D,
    target: &TableRef,
    staging: &TableRef,
    cols: &MergeColumns,
) -> Vec<String> {
    let list = insert_list(d, cols);
    let rows = prefixed(d, cols, "s");
    match d.upsert_style() {
        style @ (UpsertStyle::UpdateThenInsert | UpsertStyle::UpdateJoinThenInsert) => {
            let sets = assignments(d, cols, &respelled_keys(cols), |c| format!("s.{c}"));
            let keys = keys_match(d, cols.keys, "t", "s");
            let changed = changed(d, cols, "t", "s");
            let update = (!sets.is_empty()).then(|| match style {
                UpsertStyle::UpdateThenInsert => format!(
                    "UPDATE t SET {} FROM {target} AS t JOIN {staging} AS s ON {keys}\nWHERE {changed}",
                    sets.join(", ")
                ),
                // Qualified: a multi-table UPDATE sees the names of both tables.
                _ => format!(
                    "UPDATE {target} AS t JOIN {staging} AS s ON {keys}\nSET t.{}\nWHERE {changed}",
                    sets.join(", t.")
                ),
            });
            let insert = format!(
                "INSERT INTO {target} ({list})\nSELECT {rows} FROM {staging} AS s WHERE NOT EXISTS (SELECT 1 FROM {target} AS t WHERE {keys})"
            );
            update.into_iter().chain([insert]).collect()
        }
        UpsertStyle::OnConflict => {
            let sets = assignments(d, cols, &respelled_keys(cols), |c| format!("excluded.{c}"));
            let keys: Vec<String> = cols.keys.iter().map(|k| d.quote_ident(k)).collect();
            let action = match sets.is_empty() {
                true => "DO NOTHING".to_string(),
                false => format!(
                    "DO UPDATE SET {}\nWHERE {}",
                    sets.join(", "),
                    changed(d, cols, "t", "excluded")
                ),
            };
            // `WHERE true`: SQLite's parser needs it to tell ON CONFLICT from a join constraint.
            vec![format!(
                "INSERT INTO {target} AS t ({list})\nSELECT {rows} FROM {staging} AS s WHERE true\nON CONFLICT ({}) {action}",
                keys.join(", ")
            )]
        }
        UpsertStyle::MergeInto => {
            // A MERGE cannot set the columns of its ON clause (Oracle compares keys by bytes).
            let sets = assignments(d, cols, &[], |c| format!("s.{c}"));
            let matched = match sets.is_empty() {
                true => String::new(),
                false => format!(
                    "\nWHEN MATCHED THEN UPDATE SET {} WHERE {}",
                    sets.join(", "),
                    changed(d, cols, "t", "s")
                ),
            };
            vec![format!(
                "MERGE INTO {target} t USING {staging} s ON ({}){matched}\nWHEN NOT MATCHED THEN INSERT ({list}) VALUES ({rows})",
                keys_match(d, cols.keys, "t", "s")
            )]
        }
    }
}

/// The key columns that may be respelled ([`MergeColumns::spelled`]).
fn respelled_keys(cols: &MergeColumns) -> Vec<String> {
    cols.keys
        .iter()
        .filter(|k| cols.spelled.contains(k))
        .cloned()
        .collect()
}

/// `c = <new value of c>` for every `keys` column and every set column, then `c = NULL` for
/// every cleared one.
fn assignments<D: Dialect + ?Sized>(
    d: &D,
    cols: &MergeColumns,
    keys: &[String],
    new_value: impl Fn(&str) -> String,
) -> Vec<String> {
    keys.iter()
        .chain(cols.set)
        .map(|c| {
            let c = d.quote_ident(c);
            format!("{c} = {}", new_value(&c))
        })
        .chain(
            cols.cleared
                .iter()
                .map(|c| format!("{} = NULL", d.quote_ident(c))),
        )
        .collect()
}

/// `s.k…, s.c…`.
fn prefixed<D: Dialect + ?Sized>(d: &D, cols: &MergeColumns, alias: &str) -> String {
    cols.keys
        .iter()
        .chain(cols.set)
        .map(|c| format!("{alias}.{}", d.quote_ident(c)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether target row `t` already is staging row `s`: every set column equal, NULL-safe,
/// every cleared column already NULL; text keys and cells spelled with the same bytes, and
/// floating-point cells with the same text too (`-0` equals `0`). TRUE only when so: the
/// generic NULL-safe equality is NULL, not FALSE, when one side is NULL.
fn unchanged<D: Dialect + ?Sized>(d: &D, cols: &MergeColumns, t: &str, s: &str) -> String {
    let equal = |c: &String| {
        let q = d.quote_ident(c);
        let (t, s) = (format!("{t}.{q}"), format!("{s}.{q}"));
        let by_value = d.null_safe_eq(&t, &s);
        let by_bytes = query::same_bytes(d, &t, &s);
        match (cols.spelled.contains(c), cols.floats.contains(c)) {
            (true, _) => by_bytes,
            (false, true) => format!("({by_value}) AND ({by_bytes})"),
            (false, false) => by_value,
        }
    };
    let same: Vec<String> = respelled_keys(cols)
        .iter()
        .chain(cols.set)
        .map(equal)
        .chain(
            cols.cleared
                .iter()
                .map(|c| format!("{t}.{} IS NULL", d.quote_ident(c))),
        )
        .collect();
    match same.is_empty() {
        true => "1 = 1".to_string(),
        false => same.join(" AND "),
    }
}

/// `CASE WHEN <unchanged> THEN 0 ELSE 1 END = 1`: the upsert's filter, exactly the rows the
/// survey does not count as unchanged (a NULL comparison counts as changed, not skipped).
fn changed<D: Dialect + ?Sized>(d: &D, cols: &MergeColumns, t: &str, s: &str) -> String {
    format!(
        "CASE WHEN {} THEN 0 ELSE 1 END = 1",
        unchanged(d, cols, t, s)
    )
}

/// Counts before the merge, in one row: staging rows whose entity is new to the target,
/// and staging rows identical to their target row ([`unchanged`]: those the upsert leaves
/// as they are).
pub fn survey<D: Dialect + ?Sized>(
    d: &D,
    target: &TableRef,
    staging: &TableRef,
    cols: &MergeColumns,
) -> String {
    let keys = keys_match(d, cols.keys, "t", "s");
    let same = unchanged(d, cols, "t", "s");
    format!(
        "SELECT (SELECT COUNT(*) FROM {staging} AS s WHERE NOT EXISTS (SELECT 1 FROM {target} AS t WHERE {keys})), \
         (SELECT COUNT(*) FROM {staging} AS s JOIN {target} AS t ON {keys} WHERE {same})"
    )
}

/// Rows and non-null cells per column of the target rows the merge does not touch.
pub fn untouched_counts<D: Dialect + ?Sized>(
    d: &D,
    target: &TableRef,
    staging: &TableRef,
    keys: &[String],
    columns: &[String],
) -> String {
    let counts: Vec<String> = std::iter::once("COUNT(*)".to_string())
        .chain(
            columns
                .iter()
                .map(|c| format!("COUNT(t.{})", d.quote_ident(c))),
        )
        .collect();
    format!(
        "SELECT {} FROM {target} AS t WHERE NOT EXISTS (SELECT 1 FROM {staging} AS s WHERE {})",
        counts.join(", "),
        keys_match(d, keys, "t", "s")
    )
}

/// `target.on_missing: delete`: the target's entities the source no longer has.
pub fn delete_missing<D: Dialect + ?Sized>(
    d: &D,
    target: &TableRef,
    staging: &TableRef,
    keys: &[String],
) -> String {
    let matched: Vec<String> = keys
        .iter()
        .map(|k| {
            let k = d.quote_ident(k);
            format!("s.{k} = {target}.{k}")
        })
        .collect();
    format!(
        "DELETE FROM {target} WHERE NOT EXISTS (SELECT 1 FROM {staging} AS s WHERE {})",
        matched.join(" AND ")
    )
}

/// Where DDL is not transactional: every row of `target` into its `copy`, `columns` (the
/// entity keys and the target's attribute columns) as they are.
pub fn copy_rows<D: Dialect + ?Sized>(
    d: &D,
    copy: &TableRef,
    target: &TableRef,
    columns: &[String],
) -> String {
    let list: Vec<String> = columns.iter().map(|c| d.quote_ident(c)).collect();
    let list = list.join(", ");
    format!("INSERT INTO {copy} ({list}) SELECT {list} FROM {target}")
}

/// Mark the merge's `copy` with the run that made it ([`crate::dialect::Schema::mark_created`]), as a
/// staging table created outside the transaction is marked.
pub fn mark_copy<D: Dialect + ?Sized>(d: &D, copy: &TableRef, mark: &str) -> String {
    d.mark_created(format!("ALTER TABLE {copy}"), mark)
}

/// One row: per target column, the cells of touched entities that hold a value and are NULL
/// after the merge. `columns` pairs each target column with its staging column, None where
/// the merge clears it.
pub fn nulled_counts<D: Dialect + ?Sized>(
    d: &D,
    target: &TableRef,
    staging: &TableRef,
    keys: &[String],
    columns: &[(String, Option<String>)],
) -> String {
    let sums: Vec<String> = columns
        .iter()
        .map(|(t, s)| format!("SUM(CASE WHEN {} THEN 1 ELSE 0 END)", nulled_when(d, t, s)))
        .collect();
    format!(
        "SELECT {} FROM {target} AS t JOIN {staging} AS s ON {}",
        sums.join(", "),
        keys_match(d, keys, "t", "s")
    )
}

/// The cells of one target column that the merge sets from a value to NULL: `k…, value`.
pub fn nulled_cells<D: Dialect + ?Sized>(
    d: &D,
    target: &TableRef,
    staging: &TableRef,
    keys: &[String],
    column: &(String, Option<String>),
) -> String {
    let (t, s) = column;
    let list: Vec<String> = keys
        .iter()
        .chain(std::iter::once(t))
        .map(|c| format!("t.{}", d.quote_ident(c)))
        .collect();
    format!(
        "SELECT {} FROM {target} AS t JOIN {staging} AS s ON {} WHERE {}",
        list.join(", "),
        keys_match(d, keys, "t", "s"),
        nulled_when(d, t, s)
    )
}

fn nulled_when<D: Dialect + ?Sized>(d: &D, target: &str, staged: &Option<String>) -> String {
    let t = d.quote_ident(target);
    match staged {
        Some(s) => format!("t.{t} IS NOT NULL AND s.{} IS NULL", d.quote_ident(s)),
        None => format!("t.{t} IS NOT NULL"),
    }
}

/// The merge's guard where `source.where` may be used as a delta (a merge without
/// `source.changed`): `e…, a, v` for every attribute that an entity in the scope has a value
/// for only outside the scope (same joins, no `where`): a cell the merge would set to NULL
/// although the source still holds it.
pub fn outside_scope<D: Dialect + ?Sized>(d: &D, source: &query::SourceQuery) -> String {
    let n = source.entity.len();
    let same = |alias: &str| -> String {
        (0..n)
            .map(|i| format!("{alias}.e{i} = u.e{i}"))
            .collect::<Vec<_>>()
            .join(" AND ")
    };
    let scope = query::source_rows(d, source);
    let refs = super::entity_refs(source, "u");
    format!(
        "SELECT {refs}, u.a, MAX(u.v) FROM ({}) u\nWHERE u.v IS NOT NULL\n  AND EXISTS (SELECT 1 FROM ({scope}) f WHERE {})\n  AND NOT EXISTS (SELECT 1 FROM ({scope}) g WHERE {} AND g.a = u.a AND g.v IS NOT NULL)\nGROUP BY {refs}, u.a",
        query::source_rows_filtered(d, source, None),
        same("f"),
        same("g"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::MariaDb;

    #[test]
    fn the_copy_takes_every_target_row_column_for_column() {
        let copy = TableRef::parse("t_copy").expect("table name");
        let target = TableRef::parse("t").expect("table name");
        let columns = ["id".to_string(), "a`b".to_string()];
        assert_eq!(
            copy_rows(&MariaDb, &copy, &target, &columns),
            "INSERT INTO t_copy (`id`, `a``b`) SELECT `id`, `a``b` FROM t"
        );
    }
}
