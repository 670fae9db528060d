//! Attribute names → column names. The attribute itself wherever the dialect allows it;
//! otherwise (collisions, over-long names, characters the database refuses) a deterministic,
//! disambiguated name, or an error before any DDL under `on_collision: error`.
//! Two attributes never share a column and no attribute is silently dropped.

use std::collections::HashSet;

use crate::config::{Job, OnCollision};
use crate::dialect::{Dialect, PivotColumn};
use crate::error::{Error, Result};

/// A column whose name is not the attribute's own (prefix/suffix/rename aside), and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Renamed {
    pub attribute: String,
    pub column: String,
    pub reason: String,
}

/// Name every attribute's column, in the order given.
pub fn name_columns(
    job: &Job,
    dialect: &dyn Dialect,
    attributes: &[String],
) -> Result<(Vec<PivotColumn>, Vec<Renamed>)> {
    let limit = dialect.ident_limit();
    let mut taken: HashSet<String> = job
        .entity
        .iter()
        .map(|e| dialect.ident_key(&e.name))
        .collect();
    let mut columns = Vec::with_capacity(attributes.len());
    let mut renamed = Vec::new();
    for attribute in attributes {
        let base = format!(
            "{}{}{}",
            job.pivot.prefix,
            job.pivot.rename.get(attribute).unwrap_or(attribute),
            job.pivot.suffix
        );
        let problem = if let Some(p) = dialect.column_name_problem(&base) {
            Some(p.to_string())
        } else if !limit.fits(&base) {
            Some(format!(
                "is longer than {}'s identifier limit ({limit:?})",
                dialect.name()
            ))
        } else if taken.contains(&dialect.ident_key(&base)) {
            Some(format!(
                "collides with another column as a {} identifier",
                dialect.name()
            ))
        } else {
            None
        };
        let column = match problem {
            None => base,
            Some(reason) if job.pivot.on_collision == OnCollision::Error => {
                return Err(Error::Job(format!(
                    "attribute '{}' cannot be a column as it is: its name {reason} \
                     (pivot.on_collision: error); rename or exclude it",
                    attribute.escape_debug()
                )));
            }
            Some(reason) => {
                let column = disambiguate(dialect, &base, attribute, &taken);
                renamed.push(Renamed {
                    attribute: attribute.clone(),
                    column: column.clone(),
                    reason,
                });
                column
            }
        };
        taken.insert(dialect.ident_key(&column));
        columns.push(PivotColumn {
            attribute: attribute.clone(),
            column,
            typed: None,
        });
    }
    Ok((columns, renamed))
}

/// `base` made legal, cut to fit, plus `~` and a hash of the attribute: stable across runs
/// whatever else the data holds. A longer hash is used in the unlikely case it still collides.
fn disambiguate(
    dialect: &dyn Dialect,
    base: &str,
    attribute: &str,
    taken: &HashSet<String>,
) -> String {
    let clean: String = base.replace('\0', "_").trim_end_matches(' ').to_string();
    let hash = fnv1a(attribute.as_bytes());
    for hex_len in [6usize, 10, 16] {
        let tag = format!("~{:016x}", hash);
        let tag = &tag[..=hex_len];
        let mut stem = clean.clone();
        while !dialect.ident_limit().fits(&format!("{stem}{tag}")) {
            stem.pop();
        }
        let candidate = format!("{}{tag}", stem.trim_end_matches(' '));
        if !taken.contains(&dialect.ident_key(&candidate))
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

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests;
