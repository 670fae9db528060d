//! The job's source, turned once into the SQL pieces every query over its rows is rendered
//! from ([`SourceQuery`]): the dialects take that value and never read the job file's joins,
//! aliases and expressions themselves.

use crate::config::{ColumnSelection, ColumnType, IfExists, Job, JoinKind, Split, TableRef};
use crate::dialect::query::SourceQuery;
use crate::dialect::script::ScriptPlan;
use crate::dialect::Types;
use crate::terms::Aggregate;

/// The source query of `job`: its tables and joins, entity/attribute/value expressions, its
/// scope (`source.where`) and a merge's delta (`source.changed`).
pub fn source_query(job: &Job) -> SourceQuery {
    SourceQuery::from(job)
}

impl From<&Job> for SourceQuery {
    fn from(job: &Job) -> SourceQuery {
        let mut from = format!(
            "FROM {}",
            table_with_alias(&job.source.table, &job.source.alias)
        );
        for join in &job.source.joins {
            let kind = match join.kind {
                JoinKind::Inner => "JOIN",
                JoinKind::Left => "LEFT JOIN",
            };
            from.push_str(&format!(
                "\n  {kind} {} ON {}",
                table_with_alias(&join.table, &join.alias),
                join.on
            ));
        }
        SourceQuery {
            from,
            entity: job.entity.iter().map(|e| e.expr.clone()).collect(),
            attribute: job.attribute.clone(),
            value: job.value.clone(),
            filter: job.source.filter.clone(),
            changed: job.source.changed.clone(),
            changed_by_key: job.source.changed.as_deref().is_some_and(|c| {
                let keys: Vec<String> = job.entity.iter().map(|e| e.expr.clone()).collect();
                super::delta::tests_only_entity_keys(c, &keys)
            }),
            attribute_key: None,
            value_order: None,
            value_type: None,
        }
    }
}

/// Reads the source's value as both strategies must see it where its type `declared` (as the
/// source described it) would reach the stream otherwise ([`Types::read_value`]): true when
/// `source`'s value expression changed, and its type is to be described again.
pub fn read_value(
    dialect: &(impl Types + ?Sized),
    source: &mut SourceQuery,
    declared: Option<&str>,
) -> bool {
    match declared.and_then(|d| dialect.read_value(&source.value, d)) {
        Some(read) => {
            source.value = read;
            true
        }
        None => false,
    }
}

/// Reads each entity key as the value is read ([`Types::read_key`]) where its type
/// `declared` (as the source described it) would reach the stream otherwise: a MONEY or a
/// MariaDB FLOAT key was written back rounded. The target keeps the described type.
pub fn read_keys(
    dialect: &(impl Types + ?Sized),
    source: &mut SourceQuery,
    declared: &[Option<String>],
) {
    for (expr, declared) in source.entity.iter_mut().zip(declared) {
        if let Some(read) = declared.as_deref().and_then(|d| dialect.read_key(expr, d)) {
            *expr = read;
        }
    }
}

/// What `eavpivot script` renders a standalone script from: the source query and the job's
/// choices, made once here so the dialects' scripts never read the job.
pub fn script_plan(job: &Job) -> ScriptPlan {
    let needs_eavpivot = if !job.transforms.is_empty() {
        Some("transforms")
    } else if job.target.if_exists == IfExists::Merge {
        Some("if_exists: merge")
    } else if matches!(job.target.split, Split::Columns(_)) {
        Some("target.split")
    } else if job.pivot.aggregate == Aggregate::Error {
        // A script cannot stop before writing and list the conflicting pairs as run does;
        // taking MAX instead would keep one value where the job asked to be told.
        Some("aggregate: error")
    } else {
        None
    };
    ScriptPlan {
        name: job.name.clone(),
        source: source_query(job),
        source_table: job.source.table.clone(),
        target: job.target.table.clone(),
        entity: job.entity.clone(),
        columns: match &job.pivot.columns {
            ColumnSelection::List(list) => Some(list.clone()),
            ColumnSelection::Discover => None,
        },
        exclude: job.pivot.exclude.clone(),
        rename: job.pivot.rename.clone(),
        prefix: job.pivot.prefix.clone(),
        suffix: job.pivot.suffix.clone(),
        order: job.pivot.order,
        empty_names: job.pivot.empty_names,
        // A script discovers attributes in SQL; typing them from the data is eavpivot's own
        // scan (`run`), so here infer means text.
        column_type: match &job.pivot.column_type {
            ColumnType::Text | ColumnType::Infer => None,
            ColumnType::Sql(ty) => Some(ty.clone()),
        },
        aggregate: job.pivot.aggregate,
        if_exists: job.target.if_exists,
        distribute: job.target.distribute,
        needs_eavpivot,
    }
}

fn table_with_alias(table: &TableRef, alias: &Option<String>) -> String {
    match alias {
        Some(a) => format!("{table} {a}"),
        None => table.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::script::{render, ScriptOptions};
    use crate::dialect::Sqlite;

    #[test]
    fn sqlite_is_refused_with_the_dry_run_pointer() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/item_detail.yaml");
        let job = crate::config::load_job(&path).expect("bundled job");
        let err = render(&Sqlite, &script_plan(&job), ScriptOptions::default())
            .expect_err("sqlite has no script")
            .to_string();
        assert!(err.contains("dynamic SQL"), "{err}");
        assert!(err.contains("eavpivot run --dry-run"), "{err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }

    #[test]
    fn aggregate_error_is_refused_by_every_script() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/item_detail.yaml");
        let mut job = crate::config::load_job(&path).expect("bundled job");
        job.pivot.aggregate = Aggregate::Error;
        let plan = script_plan(&job);
        let dialects: [&dyn crate::dialect::Dialect; 4] = [
            &crate::dialect::Oracle,
            &crate::dialect::Postgres,
            &crate::dialect::MariaDb,
            &crate::dialect::MsSql,
        ];
        for d in dialects {
            let err = render(d, &plan, ScriptOptions::default())
                .expect_err("aggregate: error needs run")
                .to_string();
            assert!(err.contains("aggregate: error"), "{err}");
            assert!(err.contains("use eavpivot run"), "{err}");
        }
    }
}
