//! The typed tests' source tables and jobs, shared by `typed_conformance` and
//! `typed_infer_modes`: a key–value table `(id, attr, val)` filled from `(entity, attribute,
//! value)` rows in the dialect's text literals, the job pivoting it, and the declared types
//! of the target's columns as the catalog reports them. Declared next to `servers` at the
//! suite root, used as `crate::fixture`.
#![allow(dead_code)] // each test file uses its own subset

use std::collections::BTreeMap;
use std::path::Path;

use eavpivot::backend::Backend;
use eavpivot::config;

/// (entity, attribute, value): a source row.
pub type Row<'a> = (i64, &'a str, &'a str);

/// `s` as a text literal of `dialect`: SQL Server's `N'…'` (Unicode), else `'…'`; quotes
/// doubled.
pub fn literal(dialect: &str, s: &str) -> String {
    let prefix = if dialect == "mssql" { "N" } else { "" };
    format!("{prefix}'{}'", s.replace('\'', "''"))
}

/// Creates `table (id INT, attr VARCHAR(50), val VARCHAR(100))` anew (a table of that name
/// dropped first) holding `rows`; with `n`, one more column `n INT` holding the entity again
/// (a value column that is already INT).
pub async fn kv_table(
    db: &mut dyn Backend,
    dialect: &str,
    table: &str,
    n: bool,
    rows: &[Row<'_>],
) -> Result<(), String> {
    let _ = db.execute(&format!("DROP TABLE {table}")).await;
    let n_column = if n { ", n INT" } else { "" };
    db.execute(&format!(
        "CREATE TABLE {table} (id INT, attr VARCHAR(50), val VARCHAR(100){n_column})"
    ))
    .await
    .map_err(|e| format!("creating {table}: {e}"))?;
    insert_rows(db, dialect, table, n, rows).await
}

/// Adds `rows` to a table [`kv_table`] made (with `n` as it was made).
pub async fn insert_rows(
    db: &mut dyn Backend,
    dialect: &str,
    table: &str,
    n: bool,
    rows: &[Row<'_>],
) -> Result<(), String> {
    if rows.is_empty() {
        return Ok(());
    }
    let values: Vec<String> = rows
        .iter()
        .map(|(e, a, v)| {
            let (a, v) = (literal(dialect, a), literal(dialect, v));
            match n {
                true => format!("({e}, {a}, {v}, {e})"),
                false => format!("({e}, {a}, {v})"),
            }
        })
        .collect();
    let columns = if n {
        "id, attr, val, n"
    } else {
        "id, attr, val"
    };
    db.execute(&format!(
        "INSERT INTO {table} ({columns}) VALUES {}",
        values.join(", ")
    ))
    .await
    .map(|_| ())
    .map_err(|e| format!("filling {table}: {e}"))
}

/// The job `name` (file `<name>.yaml`) pivoting `source`'s `value` by `id` and `attr` into
/// `target` with `if_exists`; `pivot` is the inside of its `pivot: { … }`.
pub fn job(
    name: &str,
    source: &str,
    value: &str,
    pivot: &str,
    target: &str,
    if_exists: &str,
) -> config::Job {
    let text = format!(
        "name: {name}\nsource: {{ table: {source} }}\nentity: [id]\nattribute: attr\nvalue: {value}\n\
         pivot: {{ {pivot} }}\ntarget: {{ table: {target}, if_exists: {if_exists} }}\n"
    );
    config::parse_job(&text, Path::new(&format!("{name}.yaml"))).expect("job parses")
}

/// Each column's declared type as the catalog has it, lower-cased, with its precision and
/// scale or length: `numeric(18,2)`, `varchar(32)`, `integer`.
pub async fn catalog_types(
    db: &mut dyn Backend,
    dialect: &str,
    table: &str,
) -> BTreeMap<String, String> {
    let sql = match dialect {
        "sqlite" => {
            format!("SELECT name, type, NULL, NULL, NULL FROM pragma_table_info('{table}')")
        }
        _ => format!(
            "SELECT column_name, data_type, CAST(numeric_precision AS INT), \
             CAST(numeric_scale AS INT), CAST(character_maximum_length AS INT) \
             FROM information_schema.columns WHERE table_name = '{table}'{}",
            if dialect == "mariadb" {
                " AND table_schema = DATABASE()"
            } else {
                ""
            }
        ),
    };
    let rows = db.query(&sql).await.expect("catalog");
    let mut out = BTreeMap::new();
    for r in rows {
        let (Some(name), Some(ty)) = (r[0].as_text(), r[1].as_text()) else {
            continue;
        };
        let ty = ty.to_lowercase();
        let shown = if ty == "numeric" || ty == "decimal" {
            format!(
                "{ty}({},{})",
                r[2].as_i64().unwrap_or(-1),
                r[3].as_i64().unwrap_or(-1)
            )
        } else if ty.contains("char") && dialect != "postgres" {
            format!("{ty}({})", r[4].as_i64().unwrap_or(-1))
        } else {
            ty
        };
        out.insert(name, shown);
    }
    out
}
