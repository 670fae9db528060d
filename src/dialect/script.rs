//! `eavpivot script`: one standalone SQL script per database that discovers the attributes
//! server-side and pivots with dynamic SQL, for DBAs who review and run it without eavpivot.
//!
//! Each database has its own file because the scripting languages differ completely (T-SQL
//! batch, a PL/pgSQL `DO` block, a MariaDB compound statement); what they share lives here:
//! which jobs a script can do, the column order they promise, the attribute names a job lists,
//! and the dispatch from a dialect to its script. SQLite has no dynamic SQL, so it has none.

use crate::config::{Aggregate, ColumnSelection, ColumnType, IfExists, Job, Order, Split};
use crate::error::{Error, Result};

use super::Dialect;

/// Options that only some scripts take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScriptOptions {
    /// SQL Server before 2017: FOR XML PATH instead of STRING_AGG.
    pub for_xml_path: bool,
}

/// The standalone script for `job` in `dialect`, or why there is none.
pub fn render(dialect: &dyn Dialect, job: &Job, options: ScriptOptions) -> Result<String> {
    dialect.standalone_script(job, options)
}

/// Renders one database's standalone script for a job.
pub type Renderer = fn(&Job) -> Result<String>;

/// Transforms and split need eavpivot itself: refused with the language named.
pub fn refuse_unsupported(job: &Job, language: &str) -> Result<()> {
    let refuse = |what: &str| {
        Err(Error::Usage(format!(
            "script for job {}: {what} cannot be done by a standalone {language} script; use eavpivot run",
            job.name
        )))
    };
    if !job.transforms.is_empty() {
        return refuse("transforms");
    }
    if job.target.if_exists == IfExists::Merge {
        return refuse("if_exists: merge");
    }
    if matches!(job.target.split, Split::Columns(_)) {
        return refuse("target.split");
    }
    Ok(())
}

/// How the script orders the columns, for its header.
pub fn order_text(job: &Job) -> &'static str {
    match (&job.pivot.columns, job.pivot.order) {
        (ColumnSelection::List(_), _) => "in the order the job lists them",
        (_, Order::Frequency) => "most frequent first, then by binary name order",
        (_, Order::Natural) => "in binary name order (eavpivot run orders naturally: 2 before 10)",
        (_, Order::Alphabetical) => "in binary name order",
    }
}

/// The names a `columns:` list keeps after `exclude`, numbered from 1 in job order.
pub fn listed(job: &Job, names: &[String]) -> Vec<(usize, String)> {
    names
        .iter()
        .filter(|n| !job.pivot.exclude.contains(*n))
        .enumerate()
        .map(|(i, n)| (i + 1, n.clone()))
        .collect()
}

/// The pivoted columns' SQL type and aggregate (`MAX` or `MIN`).
pub fn column_type_and_aggregate(d: &dyn Dialect, job: &Job) -> (String, &'static str) {
    let ty = match &job.pivot.column_type {
        // A script discovers attributes in SQL; typing them from the data is eavpivot's own
        // scan (`run`), so here infer means text.
        ColumnType::Text | ColumnType::Infer => d.text_type().to_string(),
        ColumnType::Sql(ty) => ty.clone(),
    };
    let agg = match job.pivot.aggregate {
        Aggregate::Min => "MIN",
        Aggregate::Max | Aggregate::Error => "MAX",
    };
    (ty, agg)
}

/// `s.e0 AS <key>, …`: the entity keys under their target names, for a `CREATE TABLE … AS
/// SELECT … WHERE 1 = 0` that takes their types from the source.
pub fn key_probe(d: &dyn Dialect, job: &Job) -> String {
    let cols: Vec<String> = job
        .entity
        .iter()
        .enumerate()
        .map(|(i, e)| {
            format!(
                "s.e{i} AS {}",
                d.quote_ident(&super::entity_column_name(d, e))
            )
        })
        .collect();
    cols.join(", ")
}

/// The job's renames, each as `row(from, to)`.
pub fn rename_rows(job: &Job, row: impl Fn(&str, &str) -> String) -> Vec<String> {
    job.pivot.rename.iter().map(|(f, t)| row(f, t)).collect()
}

/// The job's name on one line, for a comment.
pub fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// Text placed inside a RAISERROR or RAISE format string literal: quotes doubled, `%`
/// escaped, on one line.
pub fn raise_text(text: &str) -> String {
    text.replace('%', "%%")
        .replace('\'', "''")
        .replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Sqlite;

    #[test]
    fn sqlite_is_refused_with_the_dry_run_pointer() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/item_detail.yaml");
        let job = crate::config::load_job(&path).expect("bundled job");
        let err = render(&Sqlite, &job, ScriptOptions::default())
            .expect_err("sqlite has no script")
            .to_string();
        assert!(err.contains("dynamic SQL"), "{err}");
        assert!(err.contains("eavpivot run --dry-run"), "{err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }
}
