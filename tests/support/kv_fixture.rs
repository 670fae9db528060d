//! The fault cases' fixture, shared by the `faults` and `mssql` suites: a key–value source
//! `<prefix>_kv (entity_id, attr, val)`, the target's name `<prefix>_wide`, a directory for
//! the job files that pivot one into the other, and a user's table that only looks like a
//! run's leftover. Declared next to `servers` at the suite root, used as `crate::kv_fixture`.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};

use eavpivot::backend::Backend;

use crate::servers::drop_if_exists;

/// How the source's text columns and literals are spelt.
#[derive(Clone, Copy, Debug)]
pub enum Text {
    /// `VARCHAR(n)` and `'…'`.
    Varchar,
    /// SQL Server's `NVARCHAR(n)` and `N'…'`.
    National,
}

/// The rows of a source: every entity `1..=entities` has every attribute `a<n>` (`n` in
/// `1..=attributes`, zero-padded to `digits`) with the value `v<e>-<n>`.
#[derive(Clone, Copy, Debug)]
pub struct Kv {
    pub entities: i64,
    pub attributes: i64,
    pub digits: usize,
    pub text: Text,
}

impl Kv {
    /// `entities` × `attributes` rows named `a1`, `a2`, … in `VARCHAR` columns.
    pub const fn new(entities: i64, attributes: i64) -> Kv {
        Kv {
            entities,
            attributes,
            digits: 1,
            text: Text::Varchar,
        }
    }

    /// The same rows with their attribute numbers zero-padded to `digits` (`a0001`).
    pub const fn padded(self, digits: usize) -> Kv {
        Kv { digits, ..self }
    }

    /// The same rows in `NVARCHAR` columns, written as `N'…'` literals.
    pub const fn national(self) -> Kv {
        Kv {
            text: Text::National,
            ..self
        }
    }
}

/// Drops `source` if it exists and creates it again with the rows of `kv`.
pub async fn make_source(db: &mut dyn Backend, source: &str, kv: Kv) {
    drop_if_exists(db, source).await;
    let (column, literal) = match kv.text {
        Text::Varchar => ("VARCHAR", ""),
        Text::National => ("NVARCHAR", "N"),
    };
    db.execute(&format!(
        "CREATE TABLE {source} (entity_id INT, attr {column}(20), val {column}(40))"
    ))
    .await
    .expect("create source");
    let digits = kv.digits;
    let values: Vec<String> = (1..=kv.entities)
        .flat_map(|e| {
            (1..=kv.attributes)
                .map(move |a| format!("({e}, {literal}'a{a:0digits$}', {literal}'v{e}-{a}')"))
        })
        .collect();
    // SQL Server takes at most 1,000 rows per VALUES list.
    for chunk in values.chunks(1_000) {
        db.execute(&format!("INSERT INTO {source} VALUES {}", chunk.join(", ")))
            .await
            .expect("fill source");
    }
}

/// The job `name` pivoting `source` (alias `s`: `entity_id`, `attr`, `val`) into `target`:
/// `keys` are more top-level lines before `target` (each ending in a newline), `target_keys`
/// more keys of the target (`, if_exists: replace`).
pub fn job_yaml(name: &str, source: &str, target: &str, keys: &str, target_keys: &str) -> String {
    format!(
        "name: {name}\nsource: {{table: {source}, alias: s}}\nentity: [s.entity_id]\nattribute: s.attr\nvalue: s.val\n{keys}target: {{table: {target}{target_keys}}}\n"
    )
}

/// Writes `yaml` to `dir/file`.
pub fn write_job(dir: &Path, file: &str, yaml: &str) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, yaml).expect("write job");
    path
}

/// One case's tables, `<prefix>_kv` and `<prefix>_wide`, and a directory for its jobs.
pub struct Fixture {
    pub prefix: String,
    pub source: String,
    pub target: String,
    pub dir: tempfile::TempDir,
}

impl Fixture {
    /// The names for `prefix`, with whatever an earlier run left under them dropped: no
    /// source yet.
    pub async fn empty(db: &mut dyn Backend, prefix: String) -> Fixture {
        let source = format!("{prefix}_kv");
        let target = format!("{prefix}_wide");
        for t in [&target, &source] {
            drop_if_exists(db, t).await;
        }
        Fixture {
            prefix,
            source,
            target,
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// [`Fixture::empty`], and the source filled with the rows of `kv`.
    pub async fn new(db: &mut dyn Backend, prefix: String, kv: Kv) -> Fixture {
        let fx = Fixture::empty(db, prefix).await;
        make_source(db, &fx.source, kv).await;
        fx
    }

    /// A `name: faults` job from the source into `target` with `if_exists`, written to
    /// `<if_exists>.yaml`.
    pub fn job(&self, target: &str, if_exists: &str) -> PathBuf {
        self.job_file(
            &format!("{if_exists}.yaml"),
            &job_yaml(
                "faults",
                &self.source,
                target,
                "",
                &format!(", if_exists: {if_exists}"),
            ),
        )
    }

    /// Writes `yaml` to `file` in this case's directory.
    pub fn job_file(&self, file: &str, yaml: &str) -> PathBuf {
        write_job(self.dir.path(), file, yaml)
    }

    /// Drops the target and the source.
    pub async fn drop_tables(&self, db: &mut dyn Backend) {
        for t in [&self.target, &self.source] {
            drop_if_exists(db, t).await;
        }
    }
}

/// A user's own table `name` (one row), named like a run's leftover: a run must never drop it.
pub async fn user_table(db: &mut dyn Backend, name: &str) {
    drop_if_exists(db, name).await;
    db.execute(&format!("CREATE TABLE {name} (id INT PRIMARY KEY, x TEXT)"))
        .await
        .expect("user table");
    db.execute(&format!("INSERT INTO {name} VALUES (1, 'mine')"))
        .await
        .expect("user row");
}
