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

/// How the run's tables are distributed (None: not at all), and the plan's note saying why
/// (None: nothing to say, no engine).
pub type Decision = (Option<Distribution>, Option<String>);

/// The decision, or why
/// the run cannot work with the existing target at all.
pub fn decide(job: &Job, facts: &Facts) -> Result<Decision, String> {
    if !facts.installed {
        return Ok((None, None));
    }
    if job.target.distribute == Distribute::Off {
        return off(job, facts);
    }
    if let Some(kept) = keep_distributed_target(job, facts)? {
        return Ok(kept);
    }
    Ok(by_source(job, facts))
}

fn no(why: String) -> Decision {
    (None, Some(format!("target not distributed: {why}")))
}

/// `target.distribute: off` keeps the tables a run creates local, except where the run must
/// join them with an existing distributed target (`merge`, `append`): Citus refuses to join a
/// local table with a distributed one, so those go with the target, and the note says so.
fn off(job: &Job, facts: &Facts) -> Result<Decision, String> {
    let kept = keeps_target(job);
    let Some(old) = facts
        .target
        .as_ref()
        .filter(|_| kept && facts.target_exists)
    else {
        return Ok(no("target.distribute: off".into()));
    };
    let target = &job.target.table;
    let entity = entity_named(job, &old.column).ok_or_else(|| not_joinable(job, &old.column))?;
    Ok((
        Some(Distribution {
            entity,
            colocate_with: target.clone(),
        }),
        Some(format!(
            "target.distribute: off, but the existing target {target} is distributed by {}: the run's tables are distributed like it and co-located with it, since the {} joins them with it",
            job.entity[entity].name,
            if_exists_word(job.target.if_exists)
        )),
    ))
}

/// The job's entity key whose name is `column` (exactly, else ignoring ASCII case).
fn entity_named(job: &Job, column: &str) -> Option<usize> {
    job.entity
        .iter()
        .position(|key| key.name == column)
        .or_else(|| {
            job.entity
                .iter()
                .position(|key| key.name.eq_ignore_ascii_case(column))
        })
}

/// A `merge`/`append` into a target distributed by a column that is no entity key: its
/// statements join the run's rows with the target by the entity, which Citus runs only on
/// the distribution column; refused before anything is written.
fn not_joinable(job: &Job, column: &str) -> String {
    let target = &job.target.table;
    format!(
        "cannot {} into {target}: it is distributed by {column}, which no entity column is, and Citus joins the run's rows with it only by its distribution column; distribute {target} by an entity column (undistribute_table, then create_distributed_table), or load it with if_exists: replace",
        if_exists_word(job.target.if_exists)
    )
}

/// No existing distributed target decides: the source's own distribution does.
fn by_source(job: &Job, facts: &Facts) -> Decision {
    let source = &job.source.table;
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
    let kept = keeps_target(job);
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
fn keep_distributed_target(job: &Job, facts: &Facts) -> Result<Option<Decision>, String> {
    let Some(old) = facts.target.as_ref() else {
        return Ok(None);
    };
    let kept = keeps_target(job);
    if !(kept || job.target.if_exists == IfExists::Replace) || !facts.target_exists {
        return Ok(None);
    }
    let source = &job.source.table;
    let by_entity = facts.source.as_ref().filter(|spread| {
        facts.same_database && job.entity.iter().any(|key| is_column(key, &spread.column))
    });
    // A new table only needs the source; one the run meets in joins needs both.
    let by_source = by_entity.is_some_and(|spread| !kept || spread.colocation == old.colocation);
    if by_source {
        return Ok(None); // co-located with the source: the pivot runs on the workers
    }
    let target = &job.target.table;
    let Some(entity) = entity_named(job, &old.column) else {
        if kept {
            return Err(not_joinable(job, &old.column));
        }
        return Ok(Some(no(format!(
            "the existing target {target} is distributed by {}, which no entity column is; the new one is a local table",
            old.column
        ))));
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
    Ok(Some((
        Some(Distribution {
            entity,
            colocate_with: target.clone(),
        }),
        Some(why),
    )))
}

/// `merge` and `append` keep the existing target and join the run's tables with it.
fn keeps_target(job: &Job) -> bool {
    matches!(job.target.if_exists, IfExists::Append | IfExists::Merge)
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
        let (how, note) = decide(&job(""), &facts(Some("entity"))).expect("decided");
        assert_eq!(how.map(|d| d.entity), Some(0));
        assert!(note.unwrap_or_default().contains("runs on the workers"));
        let (how, note) =
            decide(&job("  distribute: off\n"), &facts(Some("entity"))).expect("decided");
        assert_eq!(how, None);
        assert!(note.unwrap_or_default().contains("target.distribute: off"));
        let (how, note) = decide(&job(""), &facts(Some("other"))).expect("decided");
        assert_eq!(how, None);
        assert!(note.unwrap_or_default().contains("distributed by other"));
        assert_eq!(decide(&job(""), &facts(None)).expect("decided").0, None);
        let plain = Facts {
            installed: false,
            ..facts(Some("entity"))
        };
        assert_eq!(decide(&job(""), &plain).expect("decided"), (None, None));
    }

    #[test]
    fn a_merge_distributes_only_into_a_target_co_located_with_the_source() {
        let merge = job("  if_exists: merge\n");
        let mut f = facts(Some("entity"));
        f.target_exists = true;
        assert_eq!(
            decide(&merge, &f).expect("decided").0,
            None,
            "a local target"
        );
        f.target = Some(Spread {
            column: "entity".into(),
            colocation: 7,
        });
        assert!(decide(&merge, &f).expect("decided").0.is_some());
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
                    let (how, note) = decide(&kept, &f).expect("decided");
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
        assert!(decide(&job("  if_exists: replace\n"), &f)
            .expect("decided")
            .0
            .is_some());
    }

    #[test]
    fn a_replace_keeps_a_distributed_target_distributed_whatever_the_source() {
        let replace = job("  if_exists: replace\n");
        let mut f = facts(None);
        f.target_exists = true;
        assert_eq!(
            decide(&replace, &f).expect("decided").0,
            None,
            "a local target stays local"
        );
        f.target = Some(Spread {
            column: "entity".into(),
            colocation: 9,
        });
        let (how, note) = decide(&replace, &f).expect("decided");
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
        let how = decide(&replace, &f)
            .expect("decided")
            .0
            .expect("distributed");
        assert_eq!(how.colocate_with.sql(), "kv");
        // Another database: the target's own distribution is all there is.
        f.same_database = false;
        let how = decide(&replace, &f)
            .expect("decided")
            .0
            .expect("kept distributed");
        assert_eq!(how.colocate_with.sql(), "wide");
        // Distributed by a column that no entity is: said, not guessed.
        f.target = Some(Spread {
            column: "other".into(),
            colocation: 9,
        });
        let (how, note) = decide(&replace, &f).expect("decided");
        assert_eq!(how, None);
        assert!(note.unwrap_or_default().contains("distributed by other"));
        assert_eq!(
            decide(&job("  if_exists: replace\n  distribute: off\n"), &f)
                .expect("decided")
                .0,
            None
        );
    }
    #[test]
    fn off_leaves_new_tables_local_but_a_kept_distributed_target_is_joined_like_itself() {
        let mut f = facts(Some("entity"));
        f.target_exists = true;
        f.target = Some(Spread {
            column: "entity".into(),
            colocation: 7,
        });
        for kept in ["merge", "append"] {
            let job = job(&format!("  if_exists: {kept}\n  distribute: off\n"));
            let (how, note) = decide(&job, &f).expect("decided");
            let how = how.expect("the run's tables go with the target");
            assert_eq!((how.entity, how.colocate_with.sql()), (0, "wide".into()));
            let note = note.unwrap_or_default();
            assert!(note.contains("target.distribute: off, but"), "{note}");
            assert!(note.contains(&format!("the {kept} joins them")), "{note}");
        }
        // replace makes a new table: off keeps it local.
        let replace = job("  if_exists: replace\n  distribute: off\n");
        assert_eq!(decide(&replace, &f).expect("decided").0, None);
        // No target yet: nothing to join.
        f.target_exists = false;
        let merge = job("  if_exists: merge\n  distribute: off\n");
        assert_eq!(decide(&merge, &f).expect("decided").0, None);
    }

    #[test]
    fn a_kept_target_distributed_by_no_entity_column_is_refused_before_any_write() {
        let other = Spread {
            column: "tenant".into(),
            colocation: 9,
        };
        for (source, extra) in [
            (Some("entity"), ""),
            (None, ""),
            (None, "  distribute: off\n"),
        ] {
            let f = Facts {
                target_exists: true,
                target: Some(other.clone()),
                ..facts(source)
            };
            let err =
                decide(&job(&format!("  if_exists: merge\n{extra}")), &f).expect_err("refused");
            for part in [
                "cannot merge into wide",
                "distributed by tenant",
                "if_exists: replace",
            ] {
                assert!(err.contains(part), "{part:?} not in {err}");
            }
            // replace builds a new table: local unless the source is distributed by entity.
            if source.is_some() {
                continue;
            }
            let (how, note) =
                decide(&job(&format!("  if_exists: replace\n{extra}")), &f).expect("decided");
            assert_eq!(how, None);
            assert!(note.unwrap_or_default().contains("not distributed"));
        }
    }
}
