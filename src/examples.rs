//! The bundled jobs (`config/*.yaml`) and their sample data (`sql/<dialect>/*.sql`), compiled
//! into the binary so the quick start works from any directory with nothing but `eavpivot`:
//! `eavpivot run item_detail` (or `builtin:item_detail`) runs the embedded job, and its
//! `setup: sql/{dialect}/item_detail.sql` resolves to the embedded script. `eavpivot examples
//! init DIR` writes the same files out to be read and edited.
//!
//! The lists below are checked against the files on disk by a test, so a job added to
//! `config/` without being listed here fails the build's tests instead of going missing.

use std::path::{Path, PathBuf};

/// One embedded file, by the relative path it has in the repository.
#[derive(Debug, Clone, Copy)]
pub struct Embedded {
    pub path: &'static str,
    pub text: &'static str,
}

/// One bundled job: its short name (the file stem) and its file.
#[derive(Debug, Clone, Copy)]
pub struct BundledJob {
    pub name: &'static str,
    pub file: Embedded,
}

impl BundledJob {
    /// The job's `description:` line, for `eavpivot examples`.
    pub fn description(&self) -> &'static str {
        self.file
            .text
            .lines()
            .find_map(|l| l.strip_prefix("description:"))
            .map_or("", str::trim)
    }

    /// The path shown in messages: `builtin:NAME`, never a file that may not exist.
    pub fn shown_path(&self) -> PathBuf {
        PathBuf::from(format!("{BUILTIN_PREFIX}{}", self.name))
    }
}

/// Names a bundled job explicitly, whatever files the working directory holds.
pub const BUILTIN_PREFIX: &str = "builtin:";

macro_rules! embed {
    ($($path:expr),+) => {
        Embedded {
            path: concat!($($path),+),
            text: include_str!(concat!("../", $($path),+)),
        }
    };
}

/// A bundled job by its name: `config/NAME.yaml`.
macro_rules! job {
    ($name:literal) => {
        BundledJob {
            name: $name,
            file: embed!("config/", $name, ".yaml"),
        }
    };
}

pub const JOBS: &[BundledJob] = &[
    job!("item_detail"),
    job!("minesweeper"),
    job!("sudoku"),
    job!("sudoku_sql"),
];

pub const SQL: &[Embedded] = &[
    embed!("sql/sqlite/item_detail.sql"),
    embed!("sql/sqlite/minesweeper.sql"),
    embed!("sql/sqlite/sudoku.sql"),
    embed!("sql/postgres/item_detail.sql"),
    embed!("sql/postgres/minesweeper.sql"),
    embed!("sql/postgres/sudoku.sql"),
    embed!("sql/mariadb/item_detail.sql"),
    embed!("sql/mariadb/minesweeper.sql"),
    embed!("sql/mariadb/sudoku.sql"),
    embed!("sql/mssql/item_detail.sql"),
    embed!("sql/mssql/minesweeper.sql"),
    embed!("sql/mssql/sudoku.sql"),
];

/// The bundled job a command-line argument names, when it is not a file: `builtin:NAME`
/// always; `NAME` or its repository path `config/NAME.yaml` only when no such file exists
/// (a real file given by the user always wins).
pub fn job_named(arg: &Path) -> Option<&'static BundledJob> {
    let text = arg.to_str()?;
    if let Some(name) = text.strip_prefix(BUILTIN_PREFIX) {
        return JOBS.iter().find(|j| j.name == name);
    }
    if arg.exists() {
        return None;
    }
    JOBS.iter()
        .find(|j| j.name == text || j.file.path == text.replace('\\', "/"))
}

/// An embedded sample script by its repository path (`sql/sqlite/item_detail.sql`).
pub fn sql(path: &str) -> Option<&'static Embedded> {
    let path = path.strip_prefix("./").unwrap_or(path);
    SQL.iter().find(|s| s.path == path)
}

/// Every embedded file: the jobs, then the sample data.
pub fn all_files() -> impl Iterator<Item = &'static Embedded> {
    JOBS.iter().map(|j| &j.file).chain(SQL.iter())
}

/// What [`write_all`] did: the files written, and the existing ones it left alone.
#[derive(Debug, Default)]
pub struct Written {
    pub written: Vec<PathBuf>,
    pub kept: Vec<PathBuf>,
}

/// Write every embedded file under `dir`, keeping the repository layout (`config/`, `sql/`),
/// so the jobs run from `dir` as they do from a clone. A file that exists already is kept
/// (it may hold the operator's edits) unless `force`; the rest are written.
pub fn write_all(dir: &Path, force: bool) -> std::io::Result<Written> {
    let mut done = Written::default();
    for file in all_files() {
        let path = dir.join(file.path);
        if !force && path.exists() {
            done.kept.push(path);
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, file.text)?;
        done.written.push(path);
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file in config/ and sql/*/ is embedded, and nothing embedded is stale.
    #[test]
    fn the_lists_match_the_files_on_disk() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut on_disk = Vec::new();
        for dir in [
            "config",
            "sql/sqlite",
            "sql/postgres",
            "sql/mariadb",
            "sql/mssql",
        ] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let name = entry.unwrap().file_name().into_string().unwrap();
                on_disk.push(format!("{dir}/{name}"));
            }
        }
        let mut embedded: Vec<String> = all_files().map(|f| f.path.to_string()).collect();
        on_disk.sort();
        embedded.sort();
        assert_eq!(embedded, on_disk);
        for f in all_files() {
            let text = std::fs::read_to_string(root.join(f.path)).unwrap();
            assert_eq!(f.text, text, "{}", f.path);
        }
        let sql_dirs = std::fs::read_dir(root.join("sql")).unwrap().count();
        assert_eq!(
            sql_dirs, 4,
            "a new dialect folder under sql/ must be listed here"
        );
    }

    #[test]
    fn names_resolve_and_real_files_win() {
        assert_eq!(
            job_named(Path::new("builtin:sudoku")).map(|j| j.name),
            Some("sudoku")
        );
        assert_eq!(
            job_named(Path::new("minesweeper")).map(|j| j.name),
            Some("minesweeper")
        );
        assert!(job_named(Path::new("builtin:nope")).is_none());
        // Cargo runs unit tests in the crate root, where config/item_detail.yaml is a real file.
        assert!(job_named(Path::new("config/item_detail.yaml")).is_none());
        assert!(job_named(Path::new("builtin:item_detail")).is_some());
        assert_eq!(
            sql("sql/sqlite/sudoku.sql").map(|s| s.path),
            Some("sql/sqlite/sudoku.sql")
        );
        assert_eq!(
            JOBS[0].description(),
            "one row per item, one column per ELEMENT_DESC"
        );
    }

    #[test]
    fn write_all_keeps_existing_files_and_writes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let first = write_all(dir.path(), false).unwrap();
        assert_eq!(first.written.len(), JOBS.len() + SQL.len());
        assert!(first.kept.is_empty());
        let edited = dir.path().join("config/item_detail.yaml");
        let missing = dir.path().join("sql/mssql/sudoku.sql");
        std::fs::write(&edited, "# mine\n").unwrap();
        std::fs::remove_file(&missing).unwrap();
        let again = write_all(dir.path(), false).unwrap();
        assert_eq!(again.written, std::slice::from_ref(&missing));
        assert_eq!(again.kept.len(), JOBS.len() + SQL.len() - 1);
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), "# mine\n");
        assert!(missing.is_file());
        let forced = write_all(dir.path(), true).unwrap();
        assert!(forced.kept.is_empty());
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), JOBS[0].file.text);
    }
}
