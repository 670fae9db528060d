//! The job's choices that SQL is rendered from, as plain values: which aggregate, which
//! column order, what to do with empty names and an existing target, whether to distribute,
//! and the entity keys. [`crate::config`] reads them from the job file (and re-exports them);
//! [`crate::plan`] and [`crate::dialect`] render from them without knowing job files.

/// One entity (row key) column: the SQL that yields it and the target column's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityKey {
    pub expr: String,
    pub name: String,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregate {
    #[default]
    Max,
    Min,
    Error,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    #[default]
    Natural,
    Alphabetical,
    Frequency,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum EmptyNames {
    #[default]
    Skip,
    Error,
}

/// `target.distribute`: whether the tables a run creates follow a distributed source.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Distribute {
    /// Distributed and co-located with the source when the source is distributed by the
    /// job's entity (Citus); otherwise as `off`.
    #[default]
    Auto,
    /// Always a plain table on the server the run connects to.
    Off,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IfExists {
    #[default]
    Fail,
    Replace,
    Append,
    /// Upsert the source's entities into the existing target (re-runs, deltas).
    Merge,
}
