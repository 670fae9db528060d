//! The installed binary on its own: copied into an empty `bin/` and run from an empty working
//! directory (no config/, no sql/), as after `cargo install`. The README's quick start and every
//! bundled job must work there on the embedded default, from the copies compiled into it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rusqlite::Connection;

/// An empty working directory and a copy of the binary outside it.
struct Installed {
    _root: tempfile::TempDir,
    bin: PathBuf,
    cwd: PathBuf,
}

fn install() -> Installed {
    let root = tempfile::tempdir().expect("tmp");
    let bin_dir = root.path().join("bin");
    let cwd = root.path().join("work");
    std::fs::create_dir_all(&bin_dir).expect("bin dir");
    std::fs::create_dir_all(&cwd).expect("work dir");
    let bin = bin_dir.join(format!("eavpivot{}", std::env::consts::EXE_SUFFIX));
    std::fs::copy(env!("CARGO_BIN_EXE_eavpivot"), &bin).expect("copy the binary");
    Installed {
        _root: root,
        bin,
        cwd,
    }
}

impl Installed {
    fn run(&self, args: &[&str]) -> Output {
        // A test thread forking while another copies its binary can hold the copy open for
        // writing a moment longer (ETXTBSY, "Text file busy"): that is the copy, not the
        // binary under test, so try again briefly.
        for _ in 0..50 {
            let ran = Command::new(&self.bin)
                .args(args)
                .current_dir(&self.cwd)
                .env_remove("EAVPIVOT_CONNECTION")
                .env_remove("EAVPIVOT_PASSWORD")
                .output();
            match ran {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => return other.expect("run the installed binary"),
            }
        }
        panic!("the installed binary stayed busy (ETXTBSY) for a second");
    }

    /// Run, expect exit 0, return (stdout, stderr).
    fn ok(&self, args: &[&str]) -> (String, String) {
        let out = self.run(args);
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        assert!(
            out.status.success(),
            "eavpivot {args:?} failed ({:?}):\n{}{}",
            out.status,
            text(&out.stdout),
            text(&out.stderr)
        );
        (text(&out.stdout), text(&out.stderr))
    }

    fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.cwd)
            .expect("read cwd")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

const ITEM_PREVIEW: &str = "\
first rows of ITEM_WIDE (5 rows in all):
ITEM_ID | Color           | Material | Size | Voltage | Warranty 2 years | Warranty 10 years | Weight (kg)
--------+-----------------+----------+------+---------+------------------+-------------------+------------
1001    | Red             | Cotton   | M    |         |                  |                   | 1.25
1002    | Blue            |          |      |         | yes              |                   | 0.40
1003    |                 | Steel    |      | 230     |                  | yes               | 12.5
1004    | Black           | Oak      | L    |         |                  |                   |
1005    | unlisted: Green |          |      | 12      |                  |                   |
";

/// Puzzle 1 of the sample data, solved: the whole grid, not its first five rows.
const SUDOKU_GRID_1: &str = "\
puzzle | row | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9
-------+-----+---+---+---+---+---+---+---+---+--
1      | 1   | 8 | 6 | 7 | 2 | 9 | 5 | 3 | 1 | 4
1      | 2   | 9 | 2 | 4 | 3 | 8 | 1 | 5 | 6 | 7
1      | 3   | 1 | 3 | 5 | 6 | 7 | 4 | 8 | 2 | 9
1      | 4   | 2 | 7 | 6 | 9 | 5 | 3 | 1 | 4 | 8
1      | 5   | 5 | 8 | 9 | 4 | 1 | 6 | 2 | 7 | 3
1      | 6   | 3 | 4 | 1 | 8 | 2 | 7 | 6 | 9 | 5
1      | 7   | 7 | 1 | 8 | 5 | 6 | 9 | 4 | 3 | 2
1      | 8   | 4 | 9 | 2 | 1 | 3 | 8 | 7 | 5 | 6
1      | 9   | 6 | 5 | 3 | 7 | 4 | 2 | 9 | 8 | 1
";

#[test]
fn quick_start_and_every_bundled_job_run_from_an_empty_directory() {
    let app = install();
    let (list, _) = app.ok(&["examples"]);
    for name in ["item_detail", "minesweeper", "sudoku", "sudoku_sql"] {
        assert!(
            list.contains(&format!("\n  {name} ")),
            "{name} not listed:\n{list}"
        );
    }

    let (out, err) = app.ok(&["run", "item_detail"]);
    assert_eq!(out, ITEM_PREVIEW);
    assert!(
        err.contains("running the bundled job builtin:item_detail"),
        "{err}"
    );
    assert!(
        err.contains("loaded sample data from builtin:sql/sqlite/item_detail.sql"),
        "{err}"
    );
    assert!(err.contains("wrote 5 rows, 16 non-null cells"), "{err}");
    // The README's form, with the repository path, runs the same embedded job.
    let (out, _) = app.ok(&["run", "config/item_detail.yaml"]);
    assert_eq!(out, ITEM_PREVIEW);

    let (out, err) = app.ok(&["run", "builtin:minesweeper"]);
    assert!(
        out.contains("\ny | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10\n")
            && out.contains("\n1 | 1 | F | 1 |   |   | 1 | M | ? | ? | ?\n"),
        "{out}"
    );
    assert!(
        err.contains("map: 100 values mapped, 0 not in the table"),
        "{err}"
    );

    for (job, table, summary) in [
        (
            "sudoku",
            "SUDOKU_GRID",
            "sudoku_solve: 6 puzzles — 3 solved, 1 no solution (4), 1 several solutions (5), \
             1 invalid (6: value 5 appears twice in row 1 (r1c1 and r1c3)); every verdict in SUDOKU_GRID_status",
        ),
        (
            "sudoku_sql",
            "SUDOKU_GRID_SQL",
            "sudoku_solve in the database: 6 puzzles — 3 solved, 3 not written",
        ),
    ] {
        let (out, err) = app.ok(&["run", job]);
        assert_eq!(
            out,
            format!("first rows of {table} (27 rows in all):\n{SUDOKU_GRID_1}")
        );
        assert!(err.contains(summary), "{err}");
    }
    // Nothing but the embedded default database was written.
    assert_eq!(app.files(), ["eavpivot.db"]);
}

#[test]
fn json_report_carries_its_schema_and_version() {
    let app = install();
    let (out, _) = app.ok(&["run", "item_detail", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["eavpivot_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(report["rows_written"], 5);
    let failed = app.run(&["run", "no_such_job", "--json"]);
    assert_eq!(failed.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&failed.stdout).expect("JSON");
    assert_eq!(report["ok"], false);
    assert_eq!(report["schema_version"], 1);
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(
        err.contains("not a bundled job: item_detail, minesweeper, sudoku, sudoku_sql"),
        "{err}"
    );
}

#[test]
fn quiet_verbose_and_dry_run_output_file() {
    let app = install();
    let (out, err) = app.ok(&["-q", "run", "minesweeper"]);
    assert_eq!((out.as_str(), err.as_str()), ("", ""));
    let (out, err) = app.ok(&["run", "minesweeper", "--quiet", "--preview", "2"]);
    assert_eq!(err, "");
    assert_eq!(out.lines().count(), 5, "{out}");

    let (out, err) = app.ok(&["run", "item_detail", "-v"]);
    assert_eq!(out, ITEM_PREVIEW);
    assert!(err.contains("-- execute:\nCREATE TABLE"), "{err}");
    assert!(err.contains("-- execute:\nINSERT INTO"), "{err}");
    assert!(
        err.contains("column: 'Weight (kg)' -> ITEM_WIDE.Weight (kg)"),
        "{err}"
    );

    let fresh = install();
    let (out, err) = fresh.ok(&["run", "item_detail", "--dry-run", "--output", "plan.sql"]);
    assert_eq!(out, "");
    assert!(err.contains("dry run: the script is in plan.sql"), "{err}");
    let script = std::fs::read_to_string(fresh.cwd.join("plan.sql")).expect("script");
    assert!(script.contains("CREATE TABLE ITEM_WIDE"), "{script}");
    // A dry run writes nothing else, not even the embedded database.
    assert_eq!(fresh.files(), ["plan.sql"]);
    let refused = fresh.run(&["run", "item_detail", "--output", "x.sql"]);
    assert_eq!(refused.status.code(), Some(2), "--output needs --dry-run");
}

#[test]
fn examples_init_writes_files_that_run_and_a_real_file_wins() {
    let app = install();
    let (_, err) = app.ok(&["examples", "init", "ex"]);
    assert!(err.contains("wrote 16 files into ex"), "{err}");
    assert!(app.cwd.join("ex/sql/mssql/item_detail.sql").is_file());
    // Again: no silent overwrite; every existing file is kept, and it says so.
    let (_, err) = app.ok(&["examples", "init", "ex"]);
    assert!(
        err.contains("kept 16 existing files (--force overwrites them)")
            && err.contains("wrote 0 files into ex"),
        "{err}"
    );

    // Run from the written files: the setup path resolves next to the job, not to builtin:.
    let (out, err) = app.ok(&["run", "ex/config/item_detail.yaml"]);
    assert_eq!(out, ITEM_PREVIEW);
    assert!(
        err.contains("sample data from ex/config/../sql/sqlite/item_detail.sql"),
        "{err}"
    );

    // A file named like a bundled job is the user's job, not the bundled one.
    let job = std::fs::read_to_string(app.cwd.join("ex/config/item_detail.yaml")).expect("job");
    let mine = job
        .replace("table: ITEM_WIDE", "table: MY_WIDE")
        .replace("setup: sql/", "setup: ex/sql/");
    std::fs::write(app.cwd.join("sudoku"), mine).expect("write");
    let (out, err) = app.ok(&["run", "sudoku"]);
    assert!(out.starts_with("first rows of MY_WIDE"), "{out}");
    assert!(!err.contains("bundled"), "{err}");
    let (out, _) = app.ok(&["run", "builtin:sudoku", "--preview", "0"]);
    assert_eq!(out, "");
    let (_, err) = app.ok(&["check", "builtin:sudoku_sql"]);
    assert!(
        err.starts_with("builtin:sudoku_sql: ok (job sudoku_sql"),
        "{err}"
    );
}

#[test]
fn conflicts_are_exported_in_full_even_when_the_job_refuses_them() {
    let app = install();
    app.ok(&["examples", "init", "."]);
    app.ok(&["run", "config/item_detail.yaml", "--preview", "0"]);
    // Three Colors for item 1001, through two more elements with the same description.
    Connection::open(app.cwd.join("eavpivot.db"))
        .expect("open")
        .execute_batch(
            "INSERT INTO ATTRIBUTE_ELEMENT VALUES (8, 'Color'), (9, 'Color');
             INSERT INTO ITEM_DETAIL VALUES (1001, 8, NULL, 'Crimson'), (1001, 9, NULL, 'Scar,let');",
        )
        .expect("add conflicts");
    let expected = "ITEM_ID,attribute,values,value_1,value_2,value_3\r\n\
                    1001,Color,3,Crimson,Red,\"Scar,let\"\r\n";
    let (_, err) = app.ok(&["run", "config/item_detail.yaml", "--conflicts", "c.csv"]);
    assert!(err.contains("conflicts: 1 entity/attribute pairs"), "{err}");
    assert_eq!(read(&app.cwd.join("c.csv")), expected);

    let job = read(&app.cwd.join("config/item_detail.yaml"));
    let strict = app.cwd.join("strict.yaml");
    std::fs::write(&strict, job.replace("aggregate: max", "aggregate: error")).expect("write");
    std::fs::remove_file(app.cwd.join("c.csv")).expect("rm");
    let refused = app.run(&["run", "strict.yaml", "--conflicts", "c.csv"]);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(read(&app.cwd.join("c.csv")), expected);
}

#[test]
fn preview_aligns_wide_characters_and_marks_cut_values() {
    let app = install();
    Connection::open(app.cwd.join("eavpivot.db"))
        .expect("open")
        .execute_batch(
            "CREATE TABLE KV (id INTEGER, k TEXT, v TEXT);
             INSERT INTO KV VALUES (1, 'name', '東京タワー'), (1, 'note', 'ok'),
               (2, 'name', 'Tokyo Tower'), (2, 'note', '🗼 a very long note that goes on and on');",
        )
        .expect("source");
    std::fs::write(
        app.cwd.join("kv.yaml"),
        "name: kv\nsource: { table: KV }\nentity: [id]\nattribute: k\nvalue: v\ntarget: { table: KV_WIDE }\n",
    )
    .expect("job");
    let (out, _) = app.ok(&["run", "kv.yaml"]);
    assert_eq!(
        out,
        "first rows of KV_WIDE (2 rows in all):\n\
         id | name        | note\n\
         ---+-------------+-------------------------\n\
         1  | 東京タワー  | ok\n\
         2  | Tokyo Tower | 🗼 a very long note tha…\n"
    );
}

#[test]
fn completions_and_man_page_come_from_the_flags() {
    let app = install();
    let (bash, _) = app.ok(&["completions", "bash"]);
    for word in ["examples", "--conflicts", "--quiet", "--dry-run"] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    let (zsh, _) = app.ok(&["completions", "zsh"]);
    assert!(
        zsh.starts_with("#compdef eavpivot"),
        "{}",
        &zsh[..40.min(zsh.len())]
    );
    let (man, _) = app.ok(&["man"]);
    assert!(
        man.contains(".TH eavpivot 1"),
        "{}",
        &man[..200.min(man.len())]
    );
    assert!(man.contains("examples"));
    let bad = app.run(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// The README promises every flag: each long flag of each command's `--help` is in its
/// synopsis or text (`sudoku --threads` was missing).
#[test]
fn the_readme_names_every_flag_of_every_command() {
    let app = install();
    let readme = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
    let (top, _) = app.ok(&["--help"]);
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(
        commands.len() >= 5,
        "commands read from --help: {commands:?}"
    );
    let mut missing = Vec::new();
    for command in &commands {
        let (help, _) = app.ok(&[command, "--help"]);
        for flag in help.lines().filter_map(long_flag) {
            if !readme.contains(&flag) && flag != "--help" && flag != "--version" {
                missing.push(format!("{command} {flag}"));
            }
        }
    }
    assert!(missing.is_empty(), "README.md does not name: {missing:?}");
}

/// `--flag` of a `--help` option line (`  -o, --output <FILE>  …`, `  --json  …`).
fn long_flag(line: &str) -> Option<String> {
    let line = line.trim_start();
    if !line.starts_with('-') {
        return None;
    }
    let mut words = line.split_whitespace().take(2);
    let flag = words.find(|w| w.starts_with("--"))?;
    Some(flag.trim_end_matches(',').to_string())
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
