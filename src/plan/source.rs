//! The job's source, turned once into the SQL pieces every query over its rows is rendered
//! from ([`SourceQuery`]): the dialects take that value and never read the job file's joins,
//! aliases and expressions themselves.

use crate::config::{Job, JoinKind, TableRef};
use crate::dialect::query::SourceQuery;

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
            attribute_key: None,
        }
    }
}

fn table_with_alias(table: &TableRef, alias: &Option<String>) -> String {
    match alias {
        Some(a) => format!("{table} {a}"),
        None => table.to_string(),
    }
}
