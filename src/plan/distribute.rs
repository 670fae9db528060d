//! Whether the tables a run creates are distributed like its source (Citus), and why or why
//! not, from facts read before any write. Pure: the catalog reads are in
//! `execute::write::distribute`, the SQL in `dialect::citus`.
//!
//! Distributing pays only when the source is spread by the very column the target is keyed
//! by: then `INSERT … SELECT … GROUP BY entity` into a co-located table runs on each worker
//! against its own shards, and no wide row crosses the coordinator.

use crate::config::{Distribute, EntityKey, IfExists, Job, TableRef};

/// A table spread over the workers: by which column, in which colocation group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spread {
    pub column: String,
    pub colocation: i64,
}

/// What the catalogs said, read before any write.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The scale-out engine is installed in the target's database.
    pub installed: bool,
    /// The source is reached on the target's connection (not `target.connection`).
    pub same_database: bool,
    /// The source table, if it is distributed.
    pub source: Option<Spread>,
    /// The target, if it exists already and is distributed (read only when it exists and
    /// the run keeps it, or `replace` builds its successor).
    pub target: Option<Spread>,
    pub target_exists: bool,
}

/// The decision: distribute the created target tables by the entity column `entity` (its
/// index in the job's entity list), co-located with `colocate_with`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Distribution {
    pub entity: usize,
    pub colocate_with: TableRef,
}

/// The decision and the plan's note saying why (None: nothing to say, no engine).
pub fn decide(job: &Job, facts: &Facts) -> (Option<Distribution>, Option<String>) {
    if !facts.installed {
        return (None, None);
    }
    let source = &job.source.table;
    let no = |why: String| (None, Some(format!("target not distributed: {why}")));
    if job.target.distribute == Distribute::Off {
        return no("target.distribute: off".into());
    }
    if let Some(kept) = keep_distributed_target(job, facts) {
        return kept;
    }
    if !facts.same_database {
        return no("the source is in another database (target.connection)".into());
    }
    let Some(spread) = &facts.source else {
        return no(format!("the source {source} is not a distributed table"));
    };
    let Some(entity) = job
        .entity
        .iter()
        .position(|key| is_column(key, &spread.column))
    else {
        return no(format!(
            "the source {source} is distributed by {}, which no entity column is",
            spread.column
        ));
    };
    let name = &job.entity[entity].name;
    let kept = matches!(job.target.if_exists, IfExists::Append | IfExists::Merge);
    if facts.target_exists && kept {
        // A distributed target the source is not co-located with went with the target
        // (keep_distributed_target): one here shares the source's colocation group.
        return match &facts.target {
            Some(_) => (
                Some(Distribution {
                    entity,
                    colocate_with: source.clone(),
                }),
                Some(format!(
                    "target {} is distributed and co-located with the source {source}: the run's tables are too, by {name}, so the {} runs on the workers",
                    job.target.table,
                    if_exists_word(job.target.if_exists)
                )),
            ),
            None => no(format!(
                "the existing target {} is a local table (distribute it by {name}, colocate_with => '{source}', to run the {} on the workers)",
                job.target.table,
                if_exists_word(job.target.if_exists)
            )),
        };
    }
    (
        Some(Distribution {
            entity,
            colocate_with: source.clone(),
        }),
        Some(format!(
            "target distributed by {name}, co-located with the source {source} (distributed by {}): the pivot runs on the workers",
            spread.column
        )),
    )
}

/// An existing distributed target that the source cannot be co-located with: the run's
/// tables are distributed like it — by the same column, co-located with it.
/// - `replace` whose source is local, distributed by another column or in another database:
///   the replace does not silently turn a distributed table into a local one.
/// - `merge`/`append` whose source is not co-located with the target as well: their
///   statements join the staging table with the target, which Citus refuses between a local
///   and a distributed table (and between two that are not co-located); co-located with the
///   target they run on the workers, and only the pivot reads the source through the
///   coordinator.
fn keep_distributed_target(
    job: &Job,
    facts: &Facts,
) -> Option<(Option<Distribution>, Option<String>)> {
    let old = facts.target.as_ref()?;
    let kept = matches!(job.target.if_exists, IfExists::Append | IfExists::Merge);
    if !(kept || job.target.if_exists == IfExists::Replace) || !facts.target_exists {
        return None;
    }
    let source = &job.source.table;
    let by_entity = facts.source.as_ref().filter(|spread| {
        facts.same_database && job.entity.iter().any(|key| is_column(key, &spread.column))
    });
    // A new table only needs the source; one the run meets in joins needs both.
    let by_source = by_entity.is_some_and(|spread| !kept || spread.colocation == old.colocation);
    if by_source {
        return None; // co-located with the source: the pivot runs on the workers
    }
    let target = &job.target.table;
    let entity = job
        .entity
        .iter()
        .position(|key| key.name == old.column)
        .or_else(|| {
            job.entity
                .iter()
                .position(|key| key.name.eq_ignore_ascii_case(&old.column))
        });
    let Some(entity) = entity else {
        let local = match kept {
            true => "the run's tables are local",
            false => "the new one is a local table",
        };
        return Some((
            None,
            Some(format!(
                "target not distributed: the existing target {target} is distributed by {}, which no entity column is; {local}",
                old.column
            )),
        ));
    };
    let why = match kept {
        true => format!(
            "the run's tables are distributed by {} and co-located with the existing {target} (the source {source} is not co-located with it): the {} runs on the workers, the pivot reads the source through the coordinator",
            job.entity[entity].name,
            if_exists_word(job.target.if_exists)
        ),
        false => format!(
            "target kept distributed by {}, co-located with the existing {target} it replaces (the source {source} is not distributed by an entity column: the pivot reads it through the coordinator)",
            job.entity[entity].name
        ),
    };
    Some((
        Some(Distribution {
            entity,
            colocate_with: target.clone(),
        }),
        Some(why),
    ))
}

fn if_exists_word(if_exists: IfExists) -> &'static str {
    match if_exists {
        IfExists::Merge => "merge",
        IfExists::Append => "append",
        _ => "load",
    }
}

/// The entity expression is the source's column `column`.
fn is_column(key: &EntityKey, column: &str) -> bool {
    crate::dialect::citus::column_named(&key.expr).as_deref() == Some(column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(expr: &str) -> EntityKey {
        EntityKey {
            expr: expr.into(),
            name: "e".into(),
        }
    }

    #[test]
    fn an_entity_expression_is_the_distribution_column_only_when_it_names_it() {
        assert!(is_column(&key("entity"), "entity"));
        assert!(is_column(&key("kv.Entity"), "entity"));
        assert!(is_column(&key("s.kv.\"Ent\""), "Ent"));
        assert!(!is_column(&key("\"Ent\""), "ent"));
        assert!(!is_column(&key("Ent"), "Ent"));
        assert!(!is_column(&key("entity + 1"), "entity"));
        assert!(!is_column(&key("lower(entity)"), "entity"));
    }
}

#[cfg(test)]
mod decide_tests {
    use super::*;

    fn job(extra: &str) -> Job {
        let text = format!(
            "name: t\nsource: {{ table: kv, alias: k }}\nentity: [k.entity]\nattribute: k.a\nvalue: k.v\ntarget:\n  table: wide\n{extra}"
        );
        crate::config::parse_job(&text, std::path::Path::new("job.yaml")).expect("valid job")
    }

    fn facts(source: Option<&str>) -> Facts {
        Facts {
            installed: true,
            same_database: true,
            source: source.map(|c| Spread {
                column: c.into(),
                colocation: 7,
            }),
            target: None,
            target_exists: false,
        }
    }

    #[test]
    fn a_source_distributed_by_the_entity_distributes_the_target_unless_off() {
        let (how, note) = decide(&job(""), &facts(Some("entity")));
        assert_eq!(how.map(|d| d.entity), Some(0));
        assert!(note.unwrap_or_default().contains("runs on the workers"));
        let (how, note) = decide(&job("  distribute: off\n"), &facts(Some("entity")));
        assert_eq!(how, None);
        assert!(note.unwrap_or_default().contains("target.distribute: off"));
        let (how, note) = decide(&job(""), &facts(Some("other")));
        assert_eq!(how, None);
        assert!(note.unwrap_or_default().contains("distributed by other"));
        assert_eq!(decide(&job(""), &facts(None)).0, None);
        let plain = Facts {
            installed: false,
            ..facts(Some("entity"))
        };
        assert_eq!(decide(&job(""), &plain), (None, None));
    }

    #[test]
    fn a_merge_distributes_only_into_a_target_co_located_with_the_source() {
        let merge = job("  if_exists: merge\n");
        let mut f = facts(Some("entity"));
        f.target_exists = true;
        assert_eq!(decide(&merge, &f).0, None, "a local target");
        f.target = Some(Spread {
            column: "entity".into(),
            colocation: 7,
        });
        assert!(decide(&merge, &f).0.is_some());
        f.target = Some(Spread {
            column: "entity".into(),
            colocation: 8,
        });
        // Another colocation group, a local source, another database: the run's tables go
        // with the target, whose joins with them Citus would refuse otherwise.
        for source in [Some("entity"), None] {
            for same_database in [true, false] {
                let f = Facts {
                    source: source.map(|c| Spread {
                        column: c.into(),
                        colocation: 7,
                    }),
                    same_database,
                    ..f.clone()
                };
                for kept in [merge.clone(), job("  if_exists: append\n")] {
                    let (how, note) = decide(&kept, &f);
                    let how = how.unwrap_or_else(|| panic!("{source:?} {same_database}: {note:?}"));
                    assert_eq!((how.entity, how.colocate_with.sql()), (0, "wide".into()));
                    assert!(note
                        .unwrap_or_default()
                        .contains("co-located with the existing wide"));
                }
            }
        }
        // replace builds a new table: distributed whatever the old one was.
        f.target = None;
        assert!(decide(&job("  if_exists: replace\n"), &f).0.is_some());
    }

    #[test]
    fn a_replace_keeps_a_distributed_target_distributed_whatever_the_source() {
        let replace = job("  if_exists: replace\n");
        let mut f = facts(None);
        f.target_exists = true;
        assert_eq!(decide(&replace, &f).0, None, "a local target stays local");
        f.target = Some(Spread {
            column: "entity".into(),
            colocation: 9,
        });
        let (how, note) = decide(&replace, &f);
        let how = how.expect("kept distributed");
        assert_eq!((how.entity, how.colocate_with.sql()), (0, "wide".into()));
        assert!(note
            .unwrap_or_default()
            .contains("kept distributed by entity"));
        // A source distributed by the entity still wins: co-located with the source.
        f.source = Some(Spread {
            column: "entity".into(),
            colocation: 7,
        });
        let how = decide(&replace, &f).0.expect("distributed");
        assert_eq!(how.colocate_with.sql(), "kv");
        // Another database: the target's own distribution is all there is.
        f.same_database = false;
        let how = decide(&replace, &f).0.expect("kept distributed");
        assert_eq!(how.colocate_with.sql(), "wide");
        // Distributed by a column that no entity is: said, not guessed.
        f.target = Some(Spread {
            column: "other".into(),
            colocation: 9,
        });
        let (how, note) = decide(&replace, &f);
        assert_eq!(how, None);
        assert!(note.unwrap_or_default().contains("distributed by other"));
        assert_eq!(
            decide(&job("  if_exists: replace\n  distribute: off\n"), &f).0,
            None
        );
    }
}
