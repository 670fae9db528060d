//! Job files: YAML in, a validated [`Job`] out.
//!
//! Two stages, as in ripgrep's flag handling: [`file::JobFile`] mirrors the YAML and may be wrong;
//! [`validate`] turns it into a [`Job`] that every later stage can trust. No I/O beyond reading
//! the file happens here, so `eavpivot check` is exactly `load_job`.

pub mod file;
mod vars;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use crate::table_ref::TableRef;
pub use crate::terms::EntityKey;
pub use file::{
    Aggregate, Distribute, EmptyNames, IfExists, InferNumbers, InferWidths, JoinKind, OnCollision,
    OnMissing, OnNewAttributes, Order, StrategyName,
};
pub use vars::{parse_var, Vars};

use file::{ColumnsFile, EntityFile, JobFile, SplitFile, TransformFile};

/// Why a job file cannot be used. Every message names the file and the key or line at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read job file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("job {path} line {line} column {column}: {message}")]
    Yaml {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("job {path}: {message}")]
    YamlNoLocation { path: String, message: String },
    #[error("job {path}: {key}: {message}")]
    Invalid {
        path: String,
        key: String,
        message: String,
    },
}

/// A job that has passed validation: every later stage takes `&Job`, never raw YAML.
#[derive(Debug, Clone)]
pub struct Job {
    pub path: PathBuf,
    pub name: String,
    pub description: Option<String>,
    pub setup: Option<String>,
    pub source: Source,
    pub entity: Vec<EntityKey>,
    /// Operator-written SQL expressions, passed through to the generated SQL unchanged.
    pub attribute: String,
    pub value: String,
    pub pivot: Pivot,
    pub target: Target,
    pub transforms: Vec<TransformSpec>,
    pub strategy: StrategyName,
    /// How long any statement may wait for a lock (`lock_timeout`, default 30 s).
    pub lock_timeout: std::time::Duration,
}

#[derive(Debug, Clone)]
pub struct Source {
    pub table: TableRef,
    pub alias: Option<String>,
    pub joins: Vec<Join>,
    /// `where`: the scope, the rows the job reads (in every mode).
    pub filter: Option<String>,
    /// `changed` (merge only): the delta. A merge re-pivots exactly the entities with a row
    /// in the scope matching it, each from all its rows in the scope.
    pub changed: Option<String>,
    /// The database the source is in, when the job names one.
    pub connection: Option<String>,
}

impl Source {
    /// Every table the job reads: the source and each joined table.
    pub fn tables(&self) -> Vec<TableRef> {
        std::iter::once(self.table.clone())
            .chain(self.joins.iter().map(|j| j.table.clone()))
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct Join {
    pub table: TableRef,
    pub alias: Option<String>,
    pub on: String,
    pub kind: JoinKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnSelection {
    Discover,
    List(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnType {
    /// The dialect's unbounded Unicode text type.
    Text,
    /// A SQL type written by the operator, checked to be a plain type name.
    Sql(String),
    /// Per attribute, the narrowest type every value round-trips through
    /// ([`crate::plan::types`]).
    Infer,
}

#[derive(Debug, Clone)]
pub struct Pivot {
    pub columns: ColumnSelection,
    pub exclude: BTreeSet<String>,
    pub rename: BTreeMap<String, String>,
    pub prefix: String,
    pub suffix: String,
    pub aggregate: Aggregate,
    pub order: Order,
    pub column_type: ColumnType,
    /// `pivot.types`: attribute -> SQL type, checked against every value before any DDL.
    pub types: BTreeMap<String, String>,
    pub empty_names: EmptyNames,
    pub on_collision: OnCollision,
    pub on_new_attributes: OnNewAttributes,
    /// `pivot.infer`: the options of `column_type: infer` (defaults when not written).
    pub infer: Infer,
}

/// `pivot.infer`, validated: only with `column_type: infer`.
pub type Infer = file::InferFile;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    Off,
    Auto,
    Columns(usize),
}

#[derive(Debug, Clone)]
pub struct Target {
    pub table: TableRef,
    pub if_exists: IfExists,
    pub split: Split,
    pub on_missing: OnMissing,
    /// Another database to write to, when the job names one.
    pub connection: Option<String>,
    /// Whether created tables follow a distributed source (Citus).
    pub distribute: Distribute,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapDefault {
    Keep,
    Null,
    Error,
}

#[derive(Debug, Clone)]
pub enum TransformSpec {
    Map {
        values: BTreeMap<String, Option<String>>,
        default: MapDefault,
    },
    SudokuSolve(SudokuSolveSpec),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SudokuSolveSpec {
    /// Solved in the database (`engine: sql` or `sql_join`) instead of by the transform.
    pub engine_sql: bool,
    /// With `engine_sql`: the generated join per puzzle (`sql_join`) instead of the CTE.
    pub sql_join: bool,
    pub box_size: Option<usize>,
    pub error_on_unsolved: bool,
    pub status_table: Option<TableRef>,
}

/// Read and validate a job file. Touches nothing but the file itself.
pub fn load_job(path: &Path) -> Result<Job, ConfigError> {
    load_job_with_vars(path, &Vars::new())
}

/// [`load_job`] with `--var` values for the `${NAME}`s in the job's operator SQL.
pub fn load_job_with_vars(path: &Path, vars: &Vars) -> Result<Job, ConfigError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: shown.clone(),
        source,
    })?;
    parse_job_with_vars(&text, path, vars)
}

/// Parse and validate job text; `path` is used for messages and relative `setup:` scripts.
pub fn parse_job(text: &str, path: &Path) -> Result<Job, ConfigError> {
    parse_job_with_vars(text, path, &Vars::new())
}

pub fn parse_job_with_vars(text: &str, path: &Path, vars: &Vars) -> Result<Job, ConfigError> {
    let shown = path.display().to_string();
    let mut raw: JobFile =
        serde_yaml::from_str(text).map_err(|err| file::yaml_error(&shown, &err))?;
    vars::substitute(&mut raw, vars).map_err(|(key, message)| ConfigError::Invalid {
        path: shown.clone(),
        key,
        message,
    })?;
    validate(raw, path)
}

/// Turn the raw file into a [`Job`], checking everything that can be checked without a database.
pub fn validate(raw: JobFile, path: &Path) -> Result<Job, ConfigError> {
    let shown = path.display().to_string();
    let invalid = |key: &str, message: String| ConfigError::Invalid {
        path: shown.clone(),
        key: key.to_string(),
        message,
    };
    require_text(&raw.name, "name").map_err(|m| invalid("name", m))?;
    require_text(&raw.attribute, "attribute").map_err(|m| invalid("attribute", m))?;
    require_text(&raw.value, "value").map_err(|m| invalid("value", m))?;

    let source = Source {
        table: TableRef::parse(&raw.source.table).map_err(|m| invalid("source.table", m))?,
        alias: check_alias(raw.source.alias).map_err(|m| invalid("source.alias", m))?,
        joins: raw
            .source
            .joins
            .into_iter()
            .enumerate()
            .map(|(i, join)| {
                let key = format!("source.joins[{i}]");
                Ok(Join {
                    table: TableRef::parse(&join.table).map_err(|m| invalid(&key, m))?,
                    alias: check_alias(join.alias).map_err(|m| invalid(&key, m))?,
                    on: require_text(&join.on, "on").map_err(|m| invalid(&key, m))?,
                    kind: join.kind,
                })
            })
            .collect::<Result<_, ConfigError>>()?,
        filter: raw.source.filter.filter(|f| !f.trim().is_empty()),
        changed: raw.source.changed.filter(|f| !f.trim().is_empty()),
        connection: raw.source.connection.filter(|c| !c.trim().is_empty()),
    };

    let entity = validate_entity(raw.entity.into_vec()).map_err(|m| invalid("entity", m))?;
    let pivot = validate_pivot(raw.pivot, &entity).map_err(|(k, m)| invalid(&k, m))?;
    let target = Target {
        table: TableRef::parse(&raw.target.table).map_err(|m| invalid("target.table", m))?,
        if_exists: raw.target.if_exists,
        split: match raw.target.split {
            None | Some(SplitFile::Off) => Split::Off,
            Some(SplitFile::Auto) => Split::Auto,
            Some(SplitFile::Columns(n)) => Split::Columns(n),
        },
        on_missing: raw.target.on_missing,
        connection: raw.target.connection.filter(|c| !c.trim().is_empty()),
        distribute: raw.target.distribute,
    };
    let transforms = raw
        .transforms
        .into_iter()
        .enumerate()
        .map(|(i, t)| validate_transform(t).map_err(|m| invalid(&format!("transforms[{i}]"), m)))
        .collect::<Result<Vec<_>, _>>()?;

    check_merge(&target, &transforms).map_err(|(k, m)| invalid(k, m))?;
    check_changed(&source, &target).map_err(|(k, m)| invalid(k, m))?;

    Ok(Job {
        path: path.to_path_buf(),
        name: raw.name,
        description: raw.description,
        setup: raw.setup,
        source,
        entity,
        attribute: raw.attribute,
        value: raw.value,
        pivot,
        target,
        transforms,
        strategy: raw.strategy.unwrap_or_default(),
        lock_timeout: validate_lock_timeout(raw.lock_timeout)
            .map_err(|m| invalid("lock_timeout", m))?,
    })
}

/// The default of `lock_timeout`: long enough for an ordinary commit elsewhere to finish.
pub const DEFAULT_LOCK_TIMEOUT_SECS: u64 = 30;

/// `lock_timeout` in seconds: at least 1 (0 means "wait forever" to PostgreSQL and SQL
/// Server, the very hang it exists to prevent), at most a day.
pub fn validate_lock_timeout(secs: Option<u64>) -> Result<std::time::Duration, String> {
    match secs.unwrap_or(DEFAULT_LOCK_TIMEOUT_SECS) {
        s @ 1..=86_400 => Ok(std::time::Duration::from_secs(s)),
        s => Err(format!("expected 1 to 86400 seconds, got {s}")),
    }
}

/// What `if_exists: merge` cannot do (yet), refused before anything runs.
fn check_merge(
    target: &Target,
    transforms: &[TransformSpec],
) -> Result<(), (&'static str, String)> {
    let merge = target.if_exists == IfExists::Merge;
    if !merge && target.on_missing == OnMissing::Delete {
        return Err((
            "target.on_missing",
            "delete applies only with if_exists: merge".into(),
        ));
    }
    if merge && !transforms.is_empty() {
        return Err((
            "target.if_exists",
            "merge is not supported for jobs with transforms: use replace or append".into(),
        ));
    }
    Ok(())
}

/// `source.changed` names the entities a merge re-pivots: it means nothing to the other
/// `if_exists` modes, and `on_missing: delete` would take every entity it does not name
/// for one the source no longer has.
fn check_changed(source: &Source, target: &Target) -> Result<(), (&'static str, String)> {
    if source.changed.is_none() {
        return Ok(());
    }
    if target.if_exists != IfExists::Merge {
        return Err((
            "source.changed",
            "the delta applies only with if_exists: merge (use where to select rows)".into(),
        ));
    }
    if target.on_missing == OnMissing::Delete {
        return Err((
            "target.on_missing",
            "delete cannot be combined with source.changed: entities the delta does not name would be deleted; run a merge without changed (where as the scope) to delete".into(),
        ));
    }
    Ok(())
}

fn require_text(text: &str, what: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        Err(format!("{what} must not be empty"))
    } else {
        Ok(text.to_string())
    }
}

fn check_alias(alias: Option<String>) -> Result<Option<String>, String> {
    match alias {
        Some(a) if !crate::table_ref::is_plain_identifier(&a) => Err(format!(
            "alias '{a}' must be a plain identifier (letters, digits, _)"
        )),
        other => Ok(other),
    }
}

fn validate_entity(items: Vec<EntityFile>) -> Result<Vec<EntityKey>, String> {
    if items.is_empty() {
        return Err("at least one entity key is required".into());
    }
    let mut keys: Vec<EntityKey> = Vec::new();
    for item in items {
        let key = match item {
            EntityFile::Column(expr) => {
                let name = crate::table_ref::column_name_of(&expr).ok_or_else(|| {
                    format!("'{expr}' is an expression, not a column: write it as {{ expr: \"{expr}\", name: some_name }}")
                })?;
                EntityKey { expr, name }
            }
            EntityFile::Expr(e) => {
                require_text(&e.expr, "expr")?;
                require_text(&e.name, "name")?;
                EntityKey {
                    expr: e.expr,
                    name: e.name,
                }
            }
        };
        if keys
            .iter()
            .any(|k| k.name.to_lowercase() == key.name.to_lowercase())
        {
            return Err(format!(
                "two entity keys are both named '{}': give one a name with {{ expr, name }}",
                key.name
            ));
        }
        keys.push(key);
    }
    Ok(keys)
}

fn validate_pivot(raw: file::PivotFile, entity: &[EntityKey]) -> Result<Pivot, (String, String)> {
    let columns = match raw.columns {
        None | Some(ColumnsFile::Discover) => ColumnSelection::Discover,
        Some(ColumnsFile::List(list)) => {
            if list.is_empty() {
                return Err(("pivot.columns".into(), "the list is empty".into()));
            }
            let mut seen = BTreeSet::new();
            for name in &list {
                if !seen.insert(name) {
                    return Err(("pivot.columns".into(), format!("'{name}' is listed twice")));
                }
                if name.is_empty() {
                    return Err(("pivot.columns".into(), "an attribute name is empty".into()));
                }
            }
            ColumnSelection::List(list)
        }
    };
    for (attr, col) in &raw.rename {
        if col.trim().is_empty() {
            return Err((
                "pivot.rename".into(),
                format!("attribute '{attr}' is renamed to an empty name"),
            ));
        }
        if entity.iter().any(|e| e.name.eq_ignore_ascii_case(col)) {
            return Err((
                "pivot.rename".into(),
                format!("attribute '{attr}' is renamed to '{col}', which is an entity column"),
            ));
        }
    }
    let column_type = match raw.column_type.as_deref().map(str::trim) {
        None | Some("text") => ColumnType::Text,
        Some("infer") => ColumnType::Infer,
        Some(ty) if is_plain_sql_type(ty) => ColumnType::Sql(ty.to_string()),
        Some(ty) => {
            return Err((
                "pivot.column_type".into(),
                format!(
                    "'{ty}' is not a SQL type name such as INTEGER, VARCHAR(100) or NUMERIC(10,2)"
                ),
            ))
        }
    };
    let infer = match raw.infer {
        Some(_) if column_type != ColumnType::Infer => {
            return Err((
                "pivot.infer".into(),
                "applies only with column_type: infer".into(),
            ))
        }
        infer => infer.unwrap_or_default(),
    };
    if let Some((attr, ty)) = raw
        .types
        .iter()
        .find(|(_, ty)| !is_plain_sql_type(ty.trim()))
    {
        return Err((
            "pivot.types".into(),
            format!("attribute '{attr}': '{ty}' is not a SQL type name such as INTEGER or NUMERIC(10,2)"),
        ));
    }
    Ok(Pivot {
        columns,
        exclude: raw.exclude.into_iter().collect(),
        rename: raw.rename,
        prefix: raw.prefix,
        suffix: raw.suffix,
        aggregate: raw.aggregate,
        order: raw.order,
        column_type,
        types: raw
            .types
            .into_iter()
            .map(|(attr, ty)| (attr, ty.trim().to_string()))
            .collect(),
        empty_names: raw.empty_names,
        on_collision: raw.on_collision,
        on_new_attributes: raw.on_new_attributes,
        infer,
    })
}

/// A type name, optionally with a length/precision: `NVARCHAR(MAX)`, `NUMERIC(10, 2)`, `DOUBLE PRECISION`.
fn is_plain_sql_type(ty: &str) -> bool {
    let (name, args) = match ty.find('(') {
        Some(open) => (&ty[..open], Some(&ty[open..])),
        None => (ty, None),
    };
    let name_ok = !name.trim().is_empty()
        && name
            .trim()
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '_')
        && name.trim().starts_with(|c: char| c.is_ascii_alphabetic());
    let args_ok = match args {
        None => true,
        Some(a) => {
            a.ends_with(')')
                && a[1..a.len() - 1].split(',').all(|part| {
                    let p = part.trim();
                    !p.is_empty()
                        && (p.chars().all(|c| c.is_ascii_digit()) || p.eq_ignore_ascii_case("max"))
                })
        }
    };
    name_ok && args_ok
}

fn validate_transform(raw: TransformFile) -> Result<TransformSpec, String> {
    match (raw.map, raw.sudoku_solve) {
        (Some(map), None) => {
            let default = match map.default.as_deref() {
                None | Some("keep") => MapDefault::Keep,
                Some("null") => MapDefault::Null,
                Some("error") => MapDefault::Error,
                Some(other) => {
                    return Err(format!(
                        "map.default must be keep, null or error, got '{other}'"
                    ))
                }
            };
            Ok(TransformSpec::Map {
                values: map.values,
                default,
            })
        }
        (None, Some(s)) => {
            let (engine_sql, sql_join) = match s.engine.as_deref() {
                None | Some("rust") => (false, false),
                Some("sql") => (true, false),
                Some("sql_join") => (true, true),
                Some(other) => {
                    return Err(format!(
                        "sudoku_solve.engine must be rust, sql or sql_join, got '{other}'"
                    ))
                }
            };
            let error_on_unsolved = match s.on_unsolved.as_deref() {
                None | Some("skip") => false,
                Some("error") => true,
                Some(other) => {
                    return Err(format!(
                        "sudoku_solve.on_unsolved must be skip or error, got '{other}'"
                    ))
                }
            };
            if let Some(b) = s.box_size {
                if !(2..=5).contains(&b) {
                    return Err(format!("sudoku_solve.box_size must be 2 to 5, got {b}"));
                }
            }
            Ok(TransformSpec::SudokuSolve(SudokuSolveSpec {
                engine_sql,
                sql_join,
                box_size: s.box_size,
                error_on_unsolved,
                status_table: s.status_table.as_deref().map(TableRef::parse).transpose()?,
            }))
        }
        (None, None) => Err("empty transform: expected one of map, sudoku_solve".into()),
        (Some(_), Some(_)) => {
            Err("one transform per list entry: split map and sudoku_solve".into())
        }
    }
}

#[cfg(test)]
mod tests;
