//! `eavpivot script`: one standalone SQL script per database that discovers the attributes
//! server-side and pivots with dynamic SQL, for DBAs who review and run it without eavpivot.
//!
//! Each database has its own file because the scripting languages differ completely (T-SQL
//! batch, a PL/pgSQL `DO` block, a MariaDB compound statement); what they share lives here:
//! which jobs a script can do, the column order they promise, the attribute names a job lists,
//! and the dispatch from a dialect to its script. SQLite has no dynamic SQL, so it has none.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, Result};
use crate::table_ref::TableRef;
use crate::terms::{Aggregate, Distribute, EmptyNames, EntityKey, IfExists, Order};

use super::{Dialect, SourceQuery};

/// Options that only some scripts take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScriptOptions {
    /// SQL Server before 2017: FOR XML PATH instead of STRING_AGG.
    pub for_xml_path: bool,
}

/// What a standalone script is rendered from, made once from the job by
/// [`crate::plan::script_plan`]: the scripts know SQL, not job files.
#[derive(Debug, Clone)]
pub struct ScriptPlan {
    /// The job's name, for comments and messages.
    pub name: String,
    /// The rows the script reads (from-clause, entity/attribute/value, scope).
    pub source: SourceQuery,
    /// The source's table, for messages and Citus's distribution.
    pub source_table: TableRef,
    pub target: TableRef,
    pub entity: Vec<EntityKey>,
    /// The attribute names a `columns:` list keeps, in job order; `None` when discovered.
    pub columns: Option<Vec<String>>,
    pub exclude: BTreeSet<String>,
    pub rename: BTreeMap<String, String>,
    pub prefix: String,
    pub suffix: String,
    pub order: Order,
    pub empty_names: EmptyNames,
    /// The pivoted columns' SQL type when the job names one; `None`: the dialect's text type.
    pub column_type: Option<String>,
    pub aggregate: Aggregate,
    pub if_exists: IfExists,
    pub distribute: Distribute,
    /// What the job asks that needs eavpivot itself (`transforms`, `if_exists: merge`,
    /// `target.split`, `aggregate: error`): refused by every script.
    pub needs_eavpivot: Option<&'static str>,
}

/// The standalone script for `plan` in `dialect`, or why there is none.
pub fn render(dialect: &dyn Dialect, plan: &ScriptPlan, options: ScriptOptions) -> Result<String> {
    dialect.standalone_script(plan, options)
}

/// Renders one database's standalone script.
pub type Renderer = fn(&ScriptPlan) -> Result<String>;

/// What needs eavpivot itself ([`ScriptPlan::needs_eavpivot`]): refused with the language named.
pub fn refuse_unsupported(plan: &ScriptPlan, language: &str) -> Result<()> {
    match plan.needs_eavpivot {
        Some(what) => Err(Error::Usage(format!(
            "script for job {}: {what} cannot be done by a standalone {language} script; use eavpivot run",
            plan.name
        ))),
        None => Ok(()),
    }
}

/// How the script orders the columns, for its header.
pub fn order_text(plan: &ScriptPlan) -> &'static str {
    match (&plan.columns, plan.order) {
        (Some(_), _) => "in the order the job lists them",
        (_, Order::Frequency) => "most frequent first, then by binary name order",
        (_, Order::Natural) => "in binary name order (eavpivot run orders naturally: 2 before 10)",
        (_, Order::Alphabetical) => "in binary name order",
    }
}

/// The names a `columns:` list keeps after `exclude`, numbered from 1 in job order.
pub fn listed(plan: &ScriptPlan, names: &[String]) -> Vec<(usize, String)> {
    names
        .iter()
        .filter(|n| !plan.exclude.contains(*n))
        .enumerate()
        .map(|(i, n)| (i + 1, n.clone()))
        .collect()
}

/// The pivoted columns' SQL type and aggregate (`MAX` or `MIN`).
pub fn column_type_and_aggregate(d: &dyn Dialect, plan: &ScriptPlan) -> (String, &'static str) {
    let ty = match &plan.column_type {
        Some(ty) => ty.clone(),
        None => d.text_type().to_string(),
    };
    let agg = match plan.aggregate {
        Aggregate::Min => "MIN",
        Aggregate::Max | Aggregate::Error => "MAX",
    };
    (ty, agg)
}

/// `s.e0 AS <key>, …`: the entity keys under their target names, for a `CREATE TABLE … AS
/// SELECT … WHERE 1 = 0` that takes their types from the source.
pub fn key_probe(d: &dyn Dialect, plan: &ScriptPlan) -> String {
    let cols: Vec<String> = plan
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
pub fn rename_rows(plan: &ScriptPlan, row: impl Fn(&str, &str) -> String) -> Vec<String> {
    plan.rename.iter().map(|(f, t)| row(f, t)).collect()
}

/// The job's name on one line, for a comment.
pub fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// Why a script refuses a source whose entity keys differ in bytes but not to the collation.
pub const KEYS_ONE_UNDER_COLLATION: &str = "eavpivot: the source has entity keys that differ in bytes but are one key to the collation (case, accents or trailing spaces), so grouping by entity would make one row of them; nothing was written: give each entity one spelling, or compare the key by a binary collation";

/// Text placed inside a RAISERROR or RAISE format string literal: quotes doubled, `%`
/// escaped, on one line.
pub fn raise_text(text: &str) -> String {
    text.replace('%', "%%")
        .replace('\'', "''")
        .replace(['\n', '\r'], " ")
}
