//! Attribute names → column names. The attribute itself wherever the dialect allows it;
//! otherwise (collisions, over-long names, characters the database refuses) a deterministic,
//! disambiguated name, or an error before any DDL under `on_collision: error`.
//! Two attributes never share a column and no attribute is silently dropped.

use std::collections::{HashMap, HashSet};

use crate::config::{Job, OnCollision};
use crate::dialect::{entity_column_name, Dialect, IdentLimit, PivotColumn, TableShape};
use crate::error::{shown, shown_bytes, Error, Result};
use crate::value::Value;

/// A column whose name is not the attribute's own (prefix/suffix/rename aside), and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Renamed {
    pub attribute: String,
    pub column: String,
    pub reason: String,
}

/// What each attribute's column is called before any problem or collision is resolved: the
/// job's `pivot.prefix`, its `pivot.rename` or the attribute itself, and `pivot.suffix`.
#[derive(Debug, Clone, Default)]
pub struct NaturalNames {
    prefix: String,
    rename: std::collections::BTreeMap<String, String>,
    suffix: String,
}

impl NaturalNames {
    pub fn of(job: &Job) -> NaturalNames {
        NaturalNames {
            prefix: job.pivot.prefix.clone(),
            rename: job.pivot.rename.clone(),
            suffix: job.pivot.suffix.clone(),
        }
    }

    pub fn name(&self, attribute: &str) -> String {
        let own = self.rename.get(attribute).map_or(attribute, String::as_str);
        format!("{}{own}{}", self.prefix, self.suffix)
    }
}

/// The question to the target database of which planned names are one identifier to it
/// ([`crate::dialect::Catalog::identifier_classes`]), where its rule is not the dialect's
/// key: run `sql` where the target is, hand the rows to [`ClassQuery::classes`], and plan
/// with them ([`super::PlanOptions::identifier_classes`]).
pub struct ClassQuery {
    names: Vec<String>,
    pub sql: String,
}

impl ClassQuery {
    /// None where the dialect's key is the database's rule for these names.
    pub fn of(
        job: &Job,
        dialect: &dyn Dialect,
        attributes: &[super::Discovered],
    ) -> Option<ClassQuery> {
        let names = natural_column_names(job, dialect, attributes);
        let sql = dialect.identifier_classes(&names)?;
        Some(ClassQuery { names, sql })
    }

    /// The query's rows, by name.
    pub fn classes(&self, rows: &[Vec<Value>]) -> Result<std::sync::Arc<HashMap<String, u64>>> {
        classes_by_name(&self.names, rows).map(std::sync::Arc::new)
    }
}

/// The names a plan of `job` can give its columns before any disambiguation: the entity
/// columns and every discovered attribute's natural name, sorted, once each.
fn natural_column_names(
    job: &Job,
    dialect: &dyn Dialect,
    attributes: &[super::Discovered],
) -> Vec<String> {
    let natural = NaturalNames::of(job);
    let mut names: Vec<String> = job
        .entity
        .iter()
        .map(|e| entity_column_name(dialect, e))
        .chain(attributes.iter().map(|a| natural.name(&a.name)))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Rows `(index into names, class)` as [`identifier_classes`] returns them, by name.
///
/// [`identifier_classes`]: crate::dialect::Catalog::identifier_classes
fn classes_by_name(names: &[String], rows: &[Vec<Value>]) -> Result<HashMap<String, u64>> {
    rows.iter()
        .map(|row| {
            let index = row.first().and_then(Value::as_i64);
            let class = row.get(1).and_then(Value::as_i64);
            match (index.and_then(|i| usize::try_from(i).ok()), class) {
                (Some(i), Some(class)) if i < names.len() => {
                    Ok((names[i].clone(), class.unsigned_abs()))
                }
                _ => Err(Error::Job(format!(
                    "the target's comparison of column names returned an unexpected row: {row:?}"
                ))),
            }
        })
        .collect()
}

/// Name every attribute's column, in the order given.
pub fn name_columns(
    job: &Job,
    dialect: &dyn Dialect,
    attributes: &[String],
) -> Result<(Vec<PivotColumn>, Vec<Renamed>)> {
    name_columns_in(job, dialect, attributes, None)
}

/// [`name_columns`], where the target database said which names are one identifier to it
/// (`classes`, by natural name: [`crate::dialect::Catalog::identifier_classes`]); a name it
/// was not asked about (a disambiguated one) takes the dialect's key.
pub fn name_columns_in(
    job: &Job,
    dialect: &dyn Dialect,
    attributes: &[String],
    classes: Option<&HashMap<String, u64>>,
) -> Result<(Vec<PivotColumn>, Vec<Renamed>)> {
    let limit = dialect.ident_limit();
    // A class and a key cannot be equal: a class key starts with NUL, which no column name holds.
    let key = |name: &str| match classes.and_then(|c| c.get(name)) {
        Some(class) => format!("\0{class}"),
        None => dialect.ident_key(name),
    };
    let mut taken: HashSet<String> = job
        .entity
        .iter()
        .map(|e| key(&entity_column_name(dialect, e)))
        .collect();
    let mut columns = Vec::with_capacity(attributes.len());
    let mut renamed = Vec::new();
    let natural = NaturalNames::of(job);
    for attribute in attributes {
        let base = natural.name(attribute);
        let problem = if let Some(p) = dialect.column_name_problem(&base) {
            Some(p.to_string())
        } else if !limit.fits(&base) {
            let units = match limit {
                IdentLimit::None => String::new(),
                IdentLimit::Chars(n) => format!(" of {n} characters"),
                IdentLimit::Utf16(n) => format!(" of {n} UTF-16 units"),
                IdentLimit::Bytes(n) => format!(" of {n} bytes"),
            };
            Some(format!(
                "is longer than {}'s identifier limit{units}",
                dialect.name()
            ))
        } else if taken.contains(&key(&base)) {
            Some(match classes.is_some_and(|c| c.contains_key(&base)) {
                true => "is the same identifier as another column to the target database (its collation compares them equal)".to_string(),
                false => format!(
                    "collides with another column as a {} identifier",
                    dialect.name()
                ),
            })
        } else {
            None
        };
        let column = match problem {
            None => base,
            Some(reason) if job.pivot.on_collision == OnCollision::Error => {
                return Err(Error::Job(format!(
                    "attribute {} cannot be a column as it is: its name {reason} \
                     (pivot.on_collision: error); rename or exclude it",
                    shown(attribute)
                )));
            }
            Some(reason) => {
                let column = disambiguate(dialect, &base, attribute, &taken, &[]);
                renamed.push(Renamed {
                    attribute: attribute.clone(),
                    column: column.clone(),
                    reason,
                });
                column
            }
        };
        taken.insert(key(&column));
        columns.push(PivotColumn {
            attribute: attribute.clone(),
            column,
            typed: None,
            longest: None,
        });
    }
    Ok((columns, renamed))
}

/// An existing target's key columns, for `append` and `merge`: each planned entity column
/// takes the target's column of exactly its name, else one whose name folds to it as an
/// unquoted identifier would (a table built before key columns were folded: PostgreSQL
/// `"ITEM_ID"` for `item_id`), so older targets still take new rows. One note per key
/// matched the second way.
pub fn match_existing_keys(
    dialect: &dyn Dialect,
    shape: &mut TableShape,
    existing: &[String],
) -> Vec<String> {
    let fold = dialect.unquoted_case();
    let mut notes = Vec::new();
    for key in &mut shape.entity {
        if existing.contains(&key.name) {
            continue;
        }
        if let Some(column) = existing.iter().find(|c| fold.fold(c) == key.name) {
            notes.push(format!(
                "{}: entity column {} is the existing column {} (created with its case kept by an earlier eavpivot); new tables name it {}",
                shape.table,
                key.name,
                dialect.quote_ident(column),
                key.name
            ));
            key.name = column.clone();
        }
    }
    notes
}

/// An existing target's attribute columns, for `merge`: a planned column is the existing
/// column of exactly its name; a planned column that collides as an
/// identifier with an existing column of another attribute (`Color` beside the target's
/// `color`) is disambiguated as [`name_columns`] resolves collisions, and takes the existing
/// column of that name where an earlier merge made it (the `~hash` is the attribute's own).
/// So a merge never puts one attribute's values into another attribute's column.
pub fn match_existing_columns(
    dialect: &dyn Dialect,
    shape: &mut TableShape,
    existing: &[String],
    (natural, on_collision): (&NaturalNames, OnCollision),
) -> Result<Vec<Renamed>> {
    let key = |c: &str| dialect.ident_key(c);
    // Every catalog lists names as they were created (SQL Server's through a view that keeps
    // the case Babelfish's `sys.columns` drops): the planned name itself.
    let same = |a: &str, b: &str| a == b;
    let owned = |c: &str| existing.iter().any(|e| same(e, c));
    let mut renamed = Vec::new();
    // First the columns the target already has: the planned name, or the name before this
    // run's own collisions (`color` planned as `color~…` beside `Color` takes `color`). Only
    // the attribute's own natural name: the stem of a name made legal (`a ` on MariaDB or
    // SQL Server, planned `a~…`, has the stem `a`; so has a NUL replaced, or a long name cut)
    // is another attribute's column.
    let mut claimed = vec![false; shape.columns.len()];
    for (i, claim) in claimed.iter_mut().enumerate() {
        let planned = shape.columns[i].column.clone();
        if owned(&planned) {
            *claim = true;
            continue;
        }
        let stem = strip_tag(&planned, &shape.columns[i].attribute).to_string();
        let free = !shape.columns.iter().any(|c| same(&c.column, &stem));
        let own_name = stem == natural.name(&shape.columns[i].attribute);
        if stem != planned && own_name && owned(&stem) && free {
            *claim = true;
            shape.columns[i].column = stem;
        }
    }
    // Then a planned name that is another attribute's existing column as an identifier.
    for (i, claim) in claimed.into_iter().enumerate() {
        let planned = shape.columns[i].column.clone();
        if claim || !existing.iter().any(|e| key(e) == key(&planned)) {
            continue;
        }
        let others = shape.columns.iter().enumerate().filter(|(j, _)| *j != i);
        let taken: HashSet<String> = shape
            .entity
            .iter()
            .map(|e| e.name.as_str())
            .chain(existing.iter().map(String::as_str))
            .chain(others.clone().map(|(_, c)| c.column.as_str()))
            .map(key)
            .collect();
        // Existing columns no other planned column is: one may be this attribute's own.
        let free: Vec<String> = existing
            .iter()
            .filter(|e| !others.clone().any(|(_, c)| same(e, &c.column)))
            .cloned()
            .collect();
        let attribute = shape.columns[i].attribute.clone();
        if on_collision == OnCollision::Error {
            let other = existing.iter().find(|e| key(e) == key(&planned));
            return Err(Error::Job(format!(
                "attribute {} cannot be a column of {} as it is: its name {} collides with the \
                 existing column {} of another attribute as a {} identifier \
                 (pivot.on_collision: error); rename or exclude it; nothing was written",
                shown(&attribute),
                shape.table,
                shown(&planned),
                shown(other.map_or("", String::as_str)),
                dialect.name()
            )));
        }
        let stem = strip_tag(&planned, &attribute);
        let column = disambiguate(dialect, stem, &attribute, &taken, &free);
        renamed.push(Renamed {
            attribute,
            column: column.clone(),
            reason: format!(
                "collides with another attribute's existing column of {} as a {} identifier",
                shape.table,
                dialect.name()
            ),
        });
        shape.columns[i].column = column;
    }
    Ok(renamed)
}

/// The columns that `unplanned` attributes (ones this run did not read, so did not name) have
/// in a merge's target: named after the run's own columns exactly as a run that read them
/// would name them ([`name_columns`], then [`match_existing_columns`] with the target's
/// columns `existing`), in the order given. A renamed attribute (`a ` on MariaDB is `a~…`, a
/// case twin, a name cut to the limit) is found in its own column, not under its name.
pub fn columns_of_unplanned(
    job: &Job,
    dialect: &dyn Dialect,
    shape: &TableShape,
    existing: &[String],
    unplanned: &[String],
) -> Result<Vec<String>> {
    // Renamed, never refused: this names columns that exist, it creates none.
    let mut job = job.clone();
    job.pivot.on_collision = OnCollision::Rename;
    let mut attributes: Vec<String> = shape.columns.iter().map(|c| c.attribute.clone()).collect();
    attributes.extend(unplanned.iter().cloned());
    let (columns, _) = name_columns(&job, dialect, &attributes)?;
    let mut all = TableShape {
        columns,
        ..shape.clone()
    };
    let natural = NaturalNames::of(&job);
    match_existing_columns(dialect, &mut all, existing, (&natural, OnCollision::Rename))?;
    Ok(all
        .columns
        .split_off(shape.columns.len())
        .into_iter()
        .map(|c| c.column)
        .collect())
}

/// A planned column without the `~hash` [`disambiguate`] gave it, to disambiguate again.
fn strip_tag<'a>(column: &'a str, attribute: &str) -> &'a str {
    let tag = format!("~{:016x}", fnv1a(attribute.as_bytes()));
    [16usize, 10, 6]
        .iter()
        .find_map(|&n| column.strip_suffix(&tag[..=n]))
        .unwrap_or(column)
}

/// Why an attribute whose name is not valid UTF-8 cannot be pivoted: a column name must be
/// text. Worded once, for discovery (which finds the entity by a look-up) and the stream
/// (which has it in hand), so both strategies refuse alike.
pub fn not_text(bytes: &[u8], entity: Option<&[Value]>) -> Error {
    let of = match entity {
        Some([key]) => format!(" of entity {}", shown_value(key)),
        Some(keys) => format!(
            " of entity ({})",
            keys.iter().map(shown_value).collect::<Vec<_>>().join(", ")
        ),
        None => String::new(),
    };
    Error::Job(format!(
        "attribute name {}{of} is not valid UTF-8, and a column name must be text; \
         fix the data or leave those rows out with source.where",
        shown_bytes(bytes)
    ))
}

fn shown_value(v: &Value) -> String {
    match v {
        Value::Text(s) => shown(s),
        Value::Bytes(b) | Value::TextBytes(b) => shown_bytes(b),
        other => other.to_string(),
    }
}

/// `base` made legal, cut to fit, plus `~` and a hash of the attribute: stable across runs
/// whatever else the data holds. A longer hash is used in the unlikely case it still collides.
/// A candidate that is exactly one of `own` (an existing column, named so by an earlier run)
/// is taken even though it is `taken`.
fn disambiguate(
    dialect: &dyn Dialect,
    base: &str,
    attribute: &str,
    taken: &HashSet<String>,
    own: &[String],
) -> String {
    let clean: String = base.replace('\0', "_").trim_end_matches(' ').to_string();
    let hash = fnv1a(attribute.as_bytes());
    for hex_len in [6usize, 10, 16] {
        let tag = format!("~{:016x}", hash);
        let tag = &tag[..=hex_len];
        let stem = dialect.ident_limit().cut_to_fit(&clean, tag);
        let candidate = format!("{}{tag}", stem.trim_end_matches(' '));
        if (own.contains(&candidate) || !taken.contains(&dialect.ident_key(&candidate)))
            && dialect.column_name_problem(&candidate).is_none()
        {
            return candidate;
        }
    }
    // 64 bits of hash and a counter: reachable only by a deliberate collision.
    let mut n = 2u64;
    loop {
        let candidate = format!("col~{hash:016x}_{n}");
        if !taken.contains(&dialect.ident_key(&candidate)) {
            return candidate;
        }
        n += 1;
    }
}

/// 64-bit FNV-1a: stable across releases and platforms, as a name that must match the
/// next run's needs (std's `DefaultHasher` promises neither).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(bytes);
    hasher.finish()
}

#[cfg(test)]
mod tests;
