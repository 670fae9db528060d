//! Typed merges: a merge's values must land in the existing target exactly. Each attribute
//! column the target already has is compared, before any write, with the type this run gives
//! it (inference or `pivot.types`): where the target's type holds every value of that type
//! exactly (by value: `5` in `DECIMAL(3,1)` reads `5.0`), it stays; where not, it is widened to
//! the least type that holds both its old values and the new ones — decimal precision and
//! scale (integer digits kept), integer width (SMALLINT → INTEGER → BIGINT → DECIMAL), DATE →
//! TIMESTAMP, text length, and text as the last step. A column that is text in the target, or
//! becomes text, is staged as text: it takes the source's values as written, as a text run's
//! would, never a typed value printed back (`12.5` as `12.50`). Where DDL is transactional the
//! ALTER runs inside the merge's transaction, and text into a bounded text column widens only
//! if a staged value does not fit it; on MariaDB the merge's copy of the target is created
//! with the widened types. Where a column cannot be changed in place (SQLite), the run is refused in one
//! line naming the first value that does not fit.
//!
//! After the upsert, [`Widening::check_cells`] proves that every merged cell equals its staging
//! cell (itself proven against the source by the load's verification): so no rounding by an
//! assignment cast can ever commit, whatever this module decided.

use crate::config::TableRef;
use crate::dialect::{portable, query, ColumnKind, Dialect, PivotColumn, TableShape, Typed};
use crate::error::{shown, Error, Result};
use crate::plan::types::converts;
use crate::report::ColumnType;
use crate::value::Value;

use super::super::session::Session;
use crate::value::first_int;

/// Decimal precision every database here takes (SQL Server's maximum): wider is text.
const MAX_PRECISION: u32 = 38;

/// What a merge does with the type of one attribute column the target already has.
#[derive(Debug, Clone)]
struct Existing {
    column: String,
    attribute: String,
    /// The target's type as its catalog spells it.
    declared: String,
    /// The rest of the column's definition that a change of its type must restate (its
    /// collation, nullability, default: [`crate::dialect::Catalog::column_types`]).
    kept: Option<String>,
    /// That type's kind, where it has a portable one.
    old: Option<ColumnKind>,
    /// The type the column has after the merge, where it changes.
    widened: Option<(ColumnKind, String)>,
    /// The column cannot be widened here: the run stops if a value does not fit.
    refuse: bool,
    /// A bounded variable-length text column (`VARCHAR(5)`, `NVARCHAR(5)`) narrower than this
    /// run's type (text, or the text of its numbers and dates): widened only if a staged value
    /// does not fit ([`Widening::apply`]). A user's column (and the views on it) is left as it
    /// is where every value fits.
    widen_if_unfit: bool,
    /// Kept by that decision: [`Widening::check_cells`] compares its cells by their bytes
    /// (under an explicit collation: the column may have its own, and SQL Server's `=` ignores
    /// trailing spaces).
    kept_by_values: bool,
    /// Why this run typed the column as it did (for the report).
    why: Option<String>,
    /// The type this run gave the column, as declared.
    staged: String,
    /// This run's kind differs from the target's: the report names the target's.
    differs: bool,
    /// The staging and target types are not the same declared type: the upsert converts,
    /// so [`Widening::check_cells`] compares these cells.
    converted: bool,
}

/// The type decisions of one merge, read before any write ([`Widening::read`]).
#[derive(Debug, Clone, Default)]
pub struct Widening {
    columns: Vec<Existing>,
}

impl Widening {
    /// Read the target's column types and decide, per attribute column both tables have,
    /// whether it stays, widens or cannot take the run's values. A column that is or becomes
    /// text is staged as text in `shape`: it takes the source's values as written.
    pub async fn read(
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
        shape: &mut TableShape,
    ) -> Result<Widening> {
        let rows = session
            .inspect_target(&dialect.column_types(&shape.table))
            .await?;
        let catalog: Vec<(String, String, Option<String>)> = rows
            .iter()
            .filter_map(|r| {
                let kept = r.get(2).and_then(Value::as_text);
                let kept = kept.map(|k| k.trim().to_string()).filter(|k| !k.is_empty());
                Some((r.first()?.as_text()?, r.get(1)?.as_text()?, kept))
            })
            .collect();
        let key = |n: &str| dialect.ident_key(n);
        let mut columns = Vec::new();
        for i in 0..shape.columns.len() {
            let c = &shape.columns[i];
            let Some((_, declared, kept)) = catalog.iter().find(|(n, ..)| key(n) == key(&c.column))
            else {
                continue;
            };
            let kept = kept.as_deref();
            let (mut e, becomes_text) = decide(dialect, shape, c, declared, kept)?;
            if becomes_text {
                // The column is (or becomes) text: it takes the source's values as written,
                // as a text run would, not this run's typed values printed back (`12.5`
                // would land as `12.50`, a SQL Server FLOAT with 6 digits).
                let is_text = e.old.as_ref().is_some_and(ColumnKind::is_text);
                stage_as_text(dialect, &mut shape.columns[i], declared, is_text);
                e = decide(dialect, shape, &shape.columns[i], declared, kept)?.0;
            }
            columns.push(e);
        }
        Ok(Widening { columns })
    }

    /// Some column widens: where DDL is not transactional the merge needs its copy.
    pub fn widens(&self) -> bool {
        self.columns.iter().any(|c| c.widened.is_some())
    }

    /// The statements that give `table` the widened types: the merge's copy of the target
    /// (MariaDB), or the target itself where a user must widen it first.
    pub fn alter_types(&self, dialect: &dyn Dialect, table: &TableRef) -> Vec<String> {
        self.columns
            .iter()
            .filter_map(|c| {
                let (_, sql) = c.widened.as_ref()?;
                dialect.alter_column_type(table, &c.column, sql, c.kept.as_deref())
            })
            .collect()
    }

    /// Inside the transaction, after the fill and before the upsert: refuse a value the
    /// target cannot take, decide the text columns that widen only if a value does not fit,
    /// then widen the target (`target`: None when the merge goes into a copy already created
    /// with the widened types). Returns the decisions as applied.
    pub async fn apply(
        &self,
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
        target: Option<&TableRef>,
        (staging, shape): (&TableRef, &TableShape),
    ) -> Result<Widening> {
        for c in self.columns.iter().filter(|c| c.refuse) {
            refuse_unfit(session, dialect, c, staging, shape).await?;
        }
        let applied = self.widen_unfit(session, dialect, staging).await?;
        for c in &applied.columns {
            if let (Some(target), Some((_, sql))) = (target, &c.widened) {
                let kept = c.kept.as_deref();
                if let Some(alter) = dialect.alter_column_type(target, &c.column, sql, kept) {
                    session.change(&alter).await?;
                }
            }
        }
        Ok(applied)
    }

    /// The `widen_if_unfit` columns decided: one scan of the staging table counts, per
    /// column, the values that would not read back the same (by their bytes) from the
    /// target's type; a column with any is widened as any other. A dry run, which counts
    /// nothing, shows the widening.
    async fn widen_unfit(
        &self,
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
        staging: &TableRef,
    ) -> Result<Widening> {
        let mut applied = self.clone();
        let pending: Vec<usize> = (0..applied.columns.len())
            .filter(|&i| applied.columns[i].widen_if_unfit)
            .collect();
        if pending.is_empty() {
            return Ok(applied);
        }
        let counts: Vec<String> = pending
            .iter()
            .map(|&i| {
                let c = &applied.columns[i];
                let s = dialect.text_of(&dialect.quote_ident(&c.column));
                let stored = dialect.text_of(&format!("CAST({s} AS {})", c.declared));
                let same = query::same_bytes(dialect, &stored, &s);
                format!(
                    "COALESCE(SUM(CASE WHEN {s} IS NOT NULL AND NOT ({same}) THEN 1 ELSE 0 END), 0)"
                )
            })
            .collect();
        let sql = format!("SELECT {} FROM {staging}", counts.join(", "));
        let note = "merge: values that do not fit the target's text columns as they are";
        let unfit: Option<Vec<i64>> = session.query_in_load(&sql, note).await?.map(|rows| {
            let row = rows.into_iter().next().unwrap_or_default();
            row.iter().map(|v| v.as_i64().unwrap_or(1)).collect()
        });
        for (n, &i) in pending.iter().enumerate() {
            let fits = unfit.as_ref().is_some_and(|u| u.get(n) == Some(&0));
            let c = &mut applied.columns[i];
            c.widen_if_unfit = false;
            c.kept_by_values = fits;
            if !fits {
                if let (Some(old), Some(new)) = (&c.old, dialect.portable_type(&c.staged)) {
                    c.widened = Some(widened(dialect, old, &new));
                }
            }
        }
        Ok(applied)
    }

    /// After the upsert: every merged cell (columns `set` of the entities in `staging`) must
    /// equal its staging cell, compared as text in the staging column's type, NULL-safe. One
    /// query; a mismatch names entity, column and both values and rolls the merge back.
    pub async fn check_cells(
        &self,
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
        (into, staging): (&TableRef, &TableRef),
        shape: &TableShape,
        set: &[String],
    ) -> Result<()> {
        // Between identical declared types (the usual re-merge) the upsert converts nothing,
        // so only the other columns are compared: on PostgreSQL the check costs about 0.6 s
        // per million compared cells.
        let set: Vec<String> = set
            .iter()
            .filter(|c| {
                let existing = self.columns.iter().find(|e| e.column == **c);
                existing.is_some_and(|e| e.converted)
            })
            .cloned()
            .collect();
        if set.is_empty() {
            return Ok(());
        }
        let unequal: Vec<String> = set
            .iter()
            .map(|column| self.unequal(dialect, shape, column))
            .collect();
        let on: Vec<String> = shape
            .entity
            .iter()
            .map(|e| {
                let k = dialect.quote_ident(&e.name);
                format!("t.{k} = s.{k}")
            })
            .collect();
        let from = format!("{staging} s JOIN {into} t ON {}", on.join(" AND "));
        let first_bad: Vec<String> = unequal
            .iter()
            .enumerate()
            .map(|(i, u)| format!("WHEN {u} THEN {}", i + 1))
            .collect();
        let sql = format!(
            "SELECT COUNT(*), MIN(x.bad) FROM (SELECT CASE {} ELSE 0 END AS bad FROM {from}) x WHERE x.bad > 0",
            first_bad.join(" ")
        );
        let note =
            "merge: every merged cell equals its staging cell (as text, in the staging type)";
        let Some(rows) = session.query_in_load(&sql, note).await? else {
            return Ok(());
        };
        let differing = first_int(&rows);
        if differing == 0 {
            return Ok(());
        }
        let bad = rows
            .first()
            .and_then(|r| r.get(1))
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let index = usize::try_from(bad - 1).unwrap_or(0).min(set.len() - 1);
        let column = &set[index];
        let q = dialect.quote_ident(column);
        let keys: Vec<String> = shape
            .entity
            .iter()
            .map(|e| format!("s.{}", dialect.quote_ident(&e.name)))
            .collect();
        let sample = dialect.limit(
            &format!(
                "SELECT {}, {}, {} FROM {from} WHERE {}",
                keys.join(", "),
                dialect.text_of(&format!("t.{q}")),
                dialect.text_of(&format!("s.{q}")),
                unequal[index]
            ),
            1,
        );
        let rows = session
            .query_in_load(&sample, "merge: the first merged cell that differs")
            .await?
            .unwrap_or_default();
        let row = rows.first().cloned().unwrap_or_default();
        let n = shape.entity.len();
        let text = |v: Option<&Value>| match v.and_then(Value::as_text) {
            Some(t) => shown(&t),
            None => "NULL".into(),
        };
        let entity: Vec<String> = row[..n.min(row.len())]
            .iter()
            .map(Value::to_string)
            .collect();
        Err(Error::Job(format!(
            "verification failed: merged cell {}.{} of entity {} reads {} but this run's value is {} ({} merged cells differ; the merge would change values)",
            into,
            crate::error::shown(column),
            entity.join(", "),
            text(row.get(n)),
            text(row.get(n + 1)),
            differing,
        )))
    }

    /// SQL true where the merged cell of `column` differs from its staging cell.
    fn unequal(&self, dialect: &dyn Dialect, shape: &TableShape, column: &str) -> String {
        let q = dialect.quote_ident(column);
        let (t, s) = (format!("t.{q}"), format!("s.{q}"));
        let typed: Option<&Typed> = shape
            .columns
            .iter()
            .find(|c| c.column == *column)
            .and_then(|c| c.typed.as_ref())
            .filter(|t| !t.kind.is_text());
        let merged = match typed {
            Some(ty) => dialect.text_of(&dialect.cast_to(&t, ty)),
            None => dialect.text_of(&t),
        };
        let by_bytes = self
            .columns
            .iter()
            .any(|c| c.column == *column && c.kept_by_values);
        let eq = match by_bytes {
            true => query::same_bytes(dialect, &merged, &dialect.text_of(&s)),
            false => dialect.null_safe_eq(&merged, &dialect.text_of(&s)),
        };
        format!("(CASE WHEN {eq} THEN 0 ELSE 1 END) = 1")
    }

    /// The merged table's real type of each column whose type is not this run's: widened, or
    /// kept where the target's type differs from what this run inferred.
    pub fn column_types(&self) -> Vec<ColumnType> {
        self.columns
            .iter()
            .filter(|c| c.widened.is_some() || c.differs)
            .map(|c| {
                let run = c.why.clone().unwrap_or_else(|| c.staged.clone());
                match &c.widened {
                    Some((_, sql)) => ColumnType {
                        column: c.column.clone(),
                        sql_type: sql.clone(),
                        reason: format!("widened from {} (this run: {run})", c.declared),
                    },
                    None => ColumnType {
                        column: c.column.clone(),
                        sql_type: c.declared.clone(),
                        reason: format!(
                            "the target's type, which holds this run's values (this run: {run})"
                        ),
                    },
                }
            })
            .collect()
    }
}

/// Where a column cannot be widened: the first staging value that does not fit the target's
/// type stops the run, in one line; none (every value fits) lets it go on.
async fn refuse_unfit(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    c: &Existing,
    staging: &TableRef,
    shape: &TableShape,
) -> Result<()> {
    let Some(old) = &c.old else {
        return Ok(());
    };
    let q = dialect.quote_ident(&c.column);
    let keys: Vec<String> = shape
        .entity
        .iter()
        .map(|e| dialect.quote_ident(&e.name))
        .collect();
    let sql = format!(
        "SELECT {}, {} FROM {staging} WHERE {q} IS NOT NULL",
        keys.join(", "),
        dialect.text_of(&q)
    );
    let note = "merge: values that do not fit the target's column type";
    let Some(rows) = session.query_in_load(&sql, note).await? else {
        return Ok(());
    };
    let n = keys.len();
    for row in rows {
        let Some(text) = row.get(n).and_then(Value::as_text) else {
            continue;
        };
        // Converting is not enough where the column stores by its type's affinity (SQLite:
        // NUMERIC keeps `27.8` as the REAL 27.8, not as written, as a first load's TEXT would).
        let column = format!("{}.{} {}", shape.table, c.column, c.declared);
        let unfit = match converts(&text, old) {
            true => dialect
                .declared_changes_values(&c.declared, converts(&text, &ColumnKind::BigInt), false)
                .map(|why| format!("would not be stored as written by {column} ({why})")),
            false => Some(format!("does not fit {column}")),
        };
        let Some(unfit) = unfit else {
            continue;
        };
        let entity: Vec<String> = row[..n].iter().map(Value::to_string).collect();
        return Err(Error::Job(format!(
            "merge: attribute {} value {} for entity {} {unfit}; {} cannot change a column's type in place, so nothing was written (rebuild the target with if_exists: replace, or give the attribute the target's type in pivot.types)",
            shown(&c.attribute),
            shown(&text),
            entity.join(", "),
            dialect.name()
        )));
    }
    Ok(())
}

/// Two catalog spellings of one declared type (`numeric(4,2)` and `DECIMAL(4,2)`, MariaDB's
/// `int(11)` and `INT`, `datetime` and `DATETIME(0)`).
fn same_declared_type(a: &str, b: &str) -> bool {
    fn normal(t: &str) -> String {
        let t = t
            .trim()
            .to_ascii_lowercase()
            .replace(" without time zone", "");
        let t = match t.strip_prefix("numeric") {
            Some(rest) => format!("decimal{rest}"),
            None => t,
        };
        let base = t.split('(').next().unwrap_or_default().trim().to_string();
        let int = ["tinyint", "smallint", "mediumint", "int", "bigint"].contains(&base.as_str());
        if int || t == "datetime(0)" {
            return base;
        }
        t
    }
    normal(a) == normal(b)
}

/// Integer digits a kind's values may have.
fn int_digits(kind: &ColumnKind) -> Option<u32> {
    match kind {
        ColumnKind::SmallInt => Some(5),
        ColumnKind::Int => Some(10),
        ColumnKind::BigInt => Some(19),
        ColumnKind::Decimal { precision, scale } => Some(precision.saturating_sub(*scale)),
        _ => None,
    }
}

fn scale(kind: &ColumnKind) -> u32 {
    match kind {
        ColumnKind::Decimal { scale, .. } => *scale,
        _ => 0,
    }
}

fn int_rank(kind: &ColumnKind) -> Option<u8> {
    match kind {
        ColumnKind::SmallInt => Some(1),
        ColumnKind::Int => Some(2),
        ColumnKind::BigInt => Some(3),
        _ => None,
    }
}

/// The longest text a value of `kind` prints as (characters, UTF-16 units, bytes); None:
/// unbounded.
fn printed(kind: &ColumnKind) -> Option<(u64, u64, u64)> {
    let ascii = |n: u64| Some((n, n, n));
    match kind {
        ColumnKind::SmallInt => ascii(6),
        ColumnKind::Int => ascii(11),
        ColumnKind::BigInt => ascii(20),
        ColumnKind::Decimal { precision, .. } => ascii(u64::from(*precision) + 2),
        ColumnKind::Date => ascii(10),
        ColumnKind::Timestamp { fraction: 0 } => ascii(19),
        ColumnKind::Timestamp { fraction } => ascii(20 + u64::from(*fraction)),
        ColumnKind::Boolean => ascii(5),
        ColumnKind::Float => ascii(24),
        ColumnKind::Text {
            chars,
            utf16,
            bytes,
        } => Some((*chars, *utf16, *bytes)),
        ColumnKind::UnboundedText | ColumnKind::Declared(_) => None,
    }
}

/// A column of kind `old` holds every value of kind `new` exactly (by value).
pub fn holds(old: &ColumnKind, new: &ColumnKind) -> bool {
    use ColumnKind::*;
    match (old, new) {
        (UnboundedText, _) => true,
        (Text { .. }, _) => match (printed(old), printed(new)) {
            (Some(o), Some(n)) => o.0 >= n.0 && o.1 >= n.1 && o.2 >= n.2,
            _ => false,
        },
        (Decimal { .. }, SmallInt | Int | BigInt | Decimal { .. }) => {
            scale(old) >= scale(new) && int_digits(old) >= int_digits(new)
        }
        (Timestamp { .. }, Date) => true,
        (Timestamp { fraction: a }, Timestamp { fraction: b }) => a >= b,
        _ => match (int_rank(old), int_rank(new)) {
            (Some(a), Some(b)) => a >= b,
            _ => old == new,
        },
    }
}

/// What the merge does with one attribute column the target has (`declared`, with `kept` the
/// rest of its definition); true: the column is text after the merge where this run typed it.
fn decide(
    dialect: &dyn Dialect,
    shape: &TableShape,
    c: &PivotColumn,
    declared: &str,
    kept: Option<&str>,
) -> Result<(Existing, bool)> {
    let staged = c.sql_type(shape).to_string();
    let old = dialect.portable_type(declared);
    let new = dialect.portable_type(&staged);
    let mut e = Existing {
        column: c.column.clone(),
        attribute: c.attribute.clone(),
        declared: declared.to_string(),
        kept: kept.map(str::to_string),
        old: old.clone(),
        widened: None,
        refuse: false,
        widen_if_unfit: false,
        kept_by_values: false,
        why: c.typed.as_ref().map(|t| t.why.clone()),
        staged: staged.clone(),
        differs: false,
        converted: !same_declared_type(declared, &staged),
    };
    let (Some(old), Some(new)) = (old, new) else {
        // A target type without a portable kind can only take values of that very
        // type: nothing says how the others would convert, or compare.
        if e.old.is_none() && !declared.eq_ignore_ascii_case(&e.staged) {
            return Err(Error::Job(format!(
                "cannot merge attribute {} into {}.{}: its type {declared} is not one eavpivot can widen or compare with this run's {}; nothing was written (give the attribute that type in pivot.types, or rebuild the table with if_exists: replace)",
                shown(&c.attribute),
                shape.table,
                c.column,
                e.staged
            )));
        }
        return Ok((e, false));
    };
    e.differs = old != new;
    let alterable = dialect
        .alter_column_type(&shape.table, &c.column, &staged, None)
        .is_some();
    let after = if holds(&old, &new) {
        old
    } else if !alterable {
        e.refuse = true;
        old
    } else if portable::is_varying_text(declared) && holds_the_longest(&old, &new, c) {
        // Discovery measured every value: the column holds them as they are (on
        // MariaDB too, which otherwise decides before the fill, by type).
        e.kept_by_values = true;
        old
    } else if portable::is_varying_text(declared) && dialect.transactional_ddl() {
        // Decided once the staged values are known (as the text the column would
        // take), inside the transaction.
        e.widen_if_unfit = true;
        old
    } else {
        let (kind, sql) = widened(dialect, &old, &new);
        if let Some(loss) = kind
            .is_text()
            .then(|| dialect.text_conversion_loss(declared))
            .flatten()
        {
            return Err(Error::Job(format!(
                "cannot merge attribute {} into {}.{}: its values need the {declared} column widened to text, and {loss}, which would change the values it holds; nothing was written (convert the column to text yourself with an exact style, or rebuild the table with if_exists: replace)",
                shown(&c.attribute),
                shape.table,
                c.column,
            )));
        }
        e.widened = Some((kind.clone(), sql));
        kind
    };
    e.converted |= e.widened.is_some();
    Ok((e, after.is_text() && !new.is_text()))
}

/// Stage `column` as text: the source's values go into it as written.
fn stage_as_text(dialect: &dyn Dialect, column: &mut PivotColumn, declared: &str, is_text: bool) {
    let why = column.typed.as_ref().map_or("", |t| t.why.as_str());
    let target = match is_text {
        true => format!("the target's column is {declared}"),
        false => format!("the target's {declared} column widens to text"),
    };
    let kind = ColumnKind::UnboundedText;
    column.typed = Some(Typed {
        sql_type: dialect.column_sql_type(&kind),
        kind,
        why: format!("{why}; merged as text: {target}, which takes the source's values as written"),
        round_trips: true,
        by_value: false,
    });
}

/// A text run's values into a bounded text column: the source's longest value, in bytes,
/// within each of the column's limits (a byte count is never below the characters or UTF-16
/// units it holds, in UTF-8, UTF-16 or a single-byte set).
fn holds_the_longest(old: &ColumnKind, new: &ColumnKind, column: &PivotColumn) -> bool {
    let (
        ColumnKind::Text {
            chars,
            utf16,
            bytes,
        },
        Some(longest),
    ) = (old, column.longest)
    else {
        return false;
    };
    new.is_text() && longest <= *chars.min(utf16).min(bytes)
}

/// What a column of kind `old` becomes to take values of kind `new`: the least common kind
/// and its declared type.
fn widened(dialect: &dyn Dialect, old: &ColumnKind, new: &ColumnKind) -> (ColumnKind, String) {
    let kind = least_common(dialect, old, new);
    let sql = dialect.column_sql_type(&kind);
    (kind, sql)
}

/// The least kind that holds every value of `a` and of `b` (by value) that `dialect` stores:
/// the wider integer, a decimal with the integer digits of the wider and the scale of the
/// finer, a timestamp for dates, and otherwise text long enough for both.
pub fn least_common(dialect: &dyn Dialect, a: &ColumnKind, b: &ColumnKind) -> ColumnKind {
    use ColumnKind::*;
    let kind = if holds(a, b) {
        Some(a.clone())
    } else if holds(b, a) {
        Some(b.clone())
    } else {
        match (a, b) {
            (Date, Timestamp { .. }) => Some(b.clone()),
            (Timestamp { fraction: x }, Timestamp { fraction: y }) => Some(Timestamp {
                fraction: (*x).max(*y),
            }),
            _ => match (int_digits(a), int_digits(b)) {
                (Some(x), Some(y)) => {
                    let s = scale(a).max(scale(b));
                    let precision = x.max(y) + s;
                    (precision <= MAX_PRECISION).then_some(Decimal {
                        precision,
                        scale: s,
                    })
                }
                _ => None,
            },
        }
    };
    match kind {
        Some(k) if k.is_text() || dialect.stores(&k) => k,
        _ => match (printed(a), printed(b)) {
            (Some(x), Some(y)) => Text {
                chars: x.0.max(y.0),
                utf16: x.1.max(y.1),
                bytes: x.2.max(y.2),
            },
            _ => UnboundedText,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::prelude::*;
    use crate::dialect::{MariaDb, Postgres, Sqlite};
    use ColumnKind::*;

    fn dec(precision: u32, scale: u32) -> ColumnKind {
        Decimal { precision, scale }
    }

    #[test]
    fn each_widening_step_is_the_least_that_holds_both() {
        let pg = &Postgres;
        // Decimal: integer digits of the wider, scale of the finer.
        assert_eq!(least_common(pg, &dec(3, 1), &dec(4, 2)), dec(4, 2));
        assert_eq!(least_common(pg, &dec(5, 1), &dec(3, 2)), dec(6, 2));
        // Integer width, then decimal.
        assert_eq!(least_common(pg, &SmallInt, &Int), Int);
        assert_eq!(least_common(pg, &Int, &BigInt), BigInt);
        assert_eq!(least_common(pg, &Int, &dec(2, 1)), dec(11, 1));
        // Beyond 38 digits: text, long enough for either (PostgreSQL spells it `text`).
        let wide = least_common(pg, &BigInt, &dec(30, 20));
        assert_eq!(
            wide,
            Text {
                chars: 32,
                utf16: 32,
                bytes: 32
            }
        );
        assert_eq!(pg.column_sql_type(&wide), "text");
        // Dates into timestamps; timestamps keep the finer fraction.
        assert_eq!(
            least_common(pg, &Date, &Timestamp { fraction: 0 }),
            Timestamp { fraction: 0 }
        );
        assert_eq!(
            least_common(pg, &Timestamp { fraction: 3 }, &Timestamp { fraction: 0 }),
            Timestamp { fraction: 3 }
        );
        // Text as the last step, long enough for both.
        assert_eq!(least_common(pg, &dec(3, 1), &UnboundedText), UnboundedText);
        assert_eq!(
            least_common(
                &MariaDb,
                &Date,
                &Text {
                    chars: 4,
                    utf16: 8,
                    bytes: 16
                }
            ),
            Text {
                chars: 10,
                utf16: 10,
                bytes: 16
            }
        );
        assert_eq!(
            least_common(
                &MariaDb,
                &Int,
                &Text {
                    chars: 2,
                    utf16: 2,
                    bytes: 2
                }
            ),
            Text {
                chars: 11,
                utf16: 11,
                bytes: 11
            }
        );
        // SQLite stores integers only: a decimal widening is text there.
        assert_eq!(
            least_common(&Sqlite, &BigInt, &dec(4, 2)),
            Text {
                chars: 20,
                utf16: 20,
                bytes: 20
            }
        );
    }

    #[test]
    fn catalog_spellings_of_one_type_are_the_same_type() {
        assert!(same_declared_type("numeric(4,2)", "DECIMAL(4,2)"));
        assert!(same_declared_type("int(11)", "INT"));
        assert!(same_declared_type("datetime", "DATETIME(0)"));
        assert!(same_declared_type(
            "timestamp(0) without time zone",
            "TIMESTAMP(0)"
        ));
        assert!(!same_declared_type("real", "DOUBLE PRECISION"));
        assert!(!same_declared_type("numeric(3,1)", "DECIMAL(4,2)"));
        assert!(!same_declared_type("varchar(5)", "VARCHAR(6)"));
    }

    #[test]
    fn a_column_holds_what_fits_it_by_value() {
        assert!(holds(&dec(4, 2), &dec(3, 1)));
        assert!(!holds(&dec(3, 1), &dec(4, 2)));
        assert!(!holds(&dec(3, 1), &dec(3, 2)));
        assert!(holds(&dec(12, 2), &Int));
        assert!(!holds(&dec(11, 2), &BigInt));
        assert!(!holds(&Int, &dec(2, 1)));
        assert!(holds(&BigInt, &SmallInt) && !holds(&SmallInt, &Int));
        assert!(holds(&Timestamp { fraction: 0 }, &Date));
        assert!(!holds(&Date, &Timestamp { fraction: 0 }));
        assert!(!holds(&Int, &UnboundedText));
        assert!(holds(&UnboundedText, &dec(3, 1)));
        assert!(holds(
            &Text {
                chars: 5,
                utf16: 10,
                bytes: 20
            },
            &dec(3, 1)
        ));
        assert!(!holds(
            &Text {
                chars: 4,
                utf16: 8,
                bytes: 16
            },
            &dec(3, 1)
        ));
    }
}
