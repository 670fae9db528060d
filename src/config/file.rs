//! The job file exactly as written: serde types that mirror the YAML keys.
//!
//! These keys are a contract with users' job files. Every struct denies unknown keys so a typo
//! (`tabel:`) is an error naming the file, line and key, never a silently ignored setting.
//! Nothing here is trusted yet; [`super::validate`] turns a [`JobFile`] into a [`super::Job`].
//!
//! Keys that take one of a few words or shapes deserialize through [`de`], whose messages say
//! what the key accepts (`target.split: expected off, auto or a number of columns`): serde's
//! derived ones name Rust types (`untagged enum SplitFile`, `expected a YAML tag`).

mod de;

pub(super) use de::yaml_error;

use std::collections::BTreeMap;

use serde::Deserialize;

pub use crate::terms::{Aggregate, Distribute, EmptyNames, IfExists, Order};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Sample-data script for bundled jobs; `{dialect}` is replaced by the backend's dialect name.
    #[serde(default)]
    pub setup: Option<String>,
    pub source: SourceFile,
    pub entity: OneOrMany<EntityFile>,
    pub attribute: String,
    pub value: String,
    #[serde(default)]
    pub pivot: PivotFile,
    pub target: TargetFile,
    #[serde(default)]
    pub transforms: Vec<TransformFile>,
    /// `auto` (default) | `pushdown` | `stream`; `--strategy` overrides it.
    #[serde(default)]
    pub strategy: Option<StrategyName>,
    /// Seconds any statement may wait for a lock before the run gives up (default 30);
    /// `--lock-timeout` overrides it.
    #[serde(default)]
    pub lock_timeout: Option<u64>,
}

/// `[a, b]` or a single item, told apart by the YAML's shape ([`de`]).
#[derive(Debug)]
pub enum OneOrMany<T> {
    Many(Vec<T>),
    One(T),
}

impl<T> OneOrMany<T> {
    pub fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(item) => vec![item],
            OneOrMany::Many(items) => items,
        }
    }
}

/// An entity key: a column (`ID.ITEM_ID`) or `{ expr: "...", name: "..." }` for an expression.
#[derive(Debug)]
pub enum EntityFile {
    Column(String),
    Expr(EntityExprFile),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityExprFile {
    pub expr: String,
    pub name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceFile {
    pub table: String,
    #[serde(default)]
    pub alias: Option<String>,
    #[serde(default)]
    pub joins: Vec<JoinFile>,
    #[serde(default, rename = "where")]
    pub filter: Option<String>,
    /// With `if_exists: merge`: the delta, a predicate naming the entities to re-pivot
    /// (each from all its rows in the `where` scope).
    #[serde(default)]
    pub changed: Option<String>,
    /// Where the source is (`--connection` overrides it).
    #[serde(default)]
    pub connection: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JoinFile {
    pub table: String,
    #[serde(default)]
    pub alias: Option<String>,
    pub on: String,
    #[serde(default)]
    pub kind: JoinKind,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    #[default]
    Inner,
    Left,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PivotFile {
    #[serde(default)]
    pub columns: Option<ColumnsFile>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub rename: BTreeMap<String, String>,
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub suffix: String,
    #[serde(default)]
    pub aggregate: Aggregate,
    #[serde(default)]
    pub order: Order,
    #[serde(default)]
    pub column_type: Option<String>,
    /// attribute -> SQL type, overriding `column_type` for that attribute.
    #[serde(default)]
    pub types: BTreeMap<String, String>,
    #[serde(default)]
    pub empty_names: EmptyNames,
    #[serde(default)]
    pub on_collision: OnCollision,
    /// With `if_exists: merge`: attributes not yet in the target (default `add`).
    #[serde(default)]
    pub on_new_attributes: OnNewAttributes,
    /// With `column_type: infer`: how wide the inferred types are and how numbers compare.
    #[serde(default)]
    pub infer: Option<InferFile>,
}

/// `pivot.infer: { widths: headroom | exact, numbers: value | text }`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InferFile {
    #[serde(default)]
    pub widths: InferWidths,
    #[serde(default)]
    pub numbers: InferNumbers,
}

/// `pivot.infer.widths`: room for the next delta (default), or the narrowest type that holds
/// the values seen.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum InferWidths {
    #[default]
    Headroom,
    Exact,
}

/// `pivot.infer.numbers`: numbers are typed by value (`12.5` and `12.50` are one DECIMAL;
/// default), or only where every value prints back as its exact text.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum InferNumbers {
    #[default]
    Value,
    Text,
}

/// `columns: discover` or `columns: [a, b, c]`.
#[derive(Debug)]
pub enum ColumnsFile {
    Discover,
    List(Vec<String>),
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum OnCollision {
    #[default]
    Rename,
    Error,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetFile {
    pub table: String,
    #[serde(default)]
    pub if_exists: IfExists,
    /// `auto` or a number of attribute columns per table (the real-servers issue).
    #[serde(default)]
    pub split: Option<SplitFile>,
    /// With `if_exists: merge`: entities only in the target are kept (default) or deleted.
    #[serde(default)]
    pub on_missing: OnMissing,
    /// Another database to write to (`--target-connection` overrides it).
    #[serde(default)]
    pub connection: Option<String>,
    /// On Citus: distribute the tables the run creates like the source (`auto`) or never.
    #[serde(default)]
    pub distribute: Distribute,
}

/// `off`, `auto` or a positive number of attribute columns per table.
#[derive(Debug)]
pub enum SplitFile {
    Off,
    Auto,
    Columns(usize),
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnMissing {
    #[default]
    Keep,
    Delete,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnNewAttributes {
    #[default]
    Add,
    Error,
    Ignore,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StrategyName {
    #[default]
    Auto,
    Pushdown,
    Stream,
}

/// One entry of `transforms:`; exactly one key may be set (`- map: {...}`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransformFile {
    #[serde(default)]
    pub map: Option<MapFile>,
    #[serde(default)]
    pub sudoku_solve: Option<SudokuSolveFile>,
}

/// `map: { values: { "-1": "?", "9": "M" }, default: keep }`: replace values through a table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapFile {
    pub values: BTreeMap<String, Option<String>>,
    /// `keep` (default) leaves unmapped values as they are; `null` blanks them; `error` fails.
    #[serde(default)]
    pub default: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SudokuSolveFile {
    /// `rust` (default, streaming transform), `sql` (recursive CTE run in the database) or
    /// `sql_join` (one generated join per puzzle, for nearly complete puzzles).
    #[serde(default)]
    pub engine: Option<String>,
    /// Box size 2..=5; inferred from the data when absent.
    #[serde(default)]
    pub box_size: Option<usize>,
    /// `skip` (default) or `error`.
    #[serde(default)]
    pub on_unsolved: Option<String>,
    /// Companion status table; default `<target>_status`.
    #[serde(default)]
    pub status_table: Option<String>,
}
