//! `eavpivot sudoku`: solve one puzzle, count its solutions, or classify a file of them.
//!
//! The work is split so it can be tested without a process: [`run`] only wires standard
//! output and error to [`run_to`], which writes through any `Write`. A closed pipe on
//! standard output (`eavpivot sudoku --file big.txt | head`) is a normal way to stop
//! reading, so it ends the run successfully instead of being reported as an error.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

mod import;

use crate::transform::sudoku::{classify, solve, Grid, Status};

/// Counting stops here: a puzzle with few givens can have astronomically many solutions.
pub const COUNT_CAP: u32 = 10_000;

/// Arguments of `eavpivot sudoku`.
#[derive(clap::Args, Debug, Default)]
pub struct SudokuArgs {
    /// One puzzle on one line: 81 characters for 9×9 ('.' or '0' blank), or 16/256/625
    /// characters for 4×4/16×16/25×25 (values above 9 as letters A-P).
    pub puzzle: Option<String>,
    /// Print the number of solutions instead of a solution (counting stops at 10000).
    #[arg(long)]
    pub count: bool,
    /// Classify every puzzle of a file, one per line ('#' lines and blank lines skipped).
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// With --file: print puzzles per second and total search nodes on standard error.
    #[arg(long)]
    pub stats: bool,
    /// Load every puzzle of a file into the database as key-value givens
    /// (puzzle, row, col, value), appending after the largest puzzle number already there.
    #[arg(long, value_name = "FILE")]
    pub import: Option<PathBuf>,
    /// Database connection for --import (default: the embedded SQLite file eavpivot.db).
    #[arg(long, env = "EAVPIVOT_CONNECTION", hide_env_values = true)]
    pub connection: Option<String>,
    /// With --import: the givens table, created when missing (config/sudoku.yaml reads
    /// SUDOKU_GIVENS).
    #[arg(long, value_name = "TABLE", default_value = "SUDOKU_GIVENS")]
    pub table: String,
}

/// Runs the command. Exit codes: 0 solved / counted / file processed; 1 the single puzzle
/// is invalid, unsolvable or ambiguous; 2 the file could not be read or the arguments
/// are unusable (returned as [`crate::Error::Usage`]).
pub fn run(args: &SudokuArgs) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.import {
        if args.puzzle.is_some() || args.file.is_some() {
            return Err(crate::Error::Usage("give --import FILE on its own".into()).into());
        }
        let options = crate::backend::ConnectOptions {
            password: std::env::var("EAVPIVOT_PASSWORD").ok(),
            ..Default::default()
        };
        import::run(path, args.connection.as_deref(), &args.table, &options)?;
        return Ok(ExitCode::SUCCESS);
    }
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = run_to(args, &mut out, &mut io::stderr()).and_then(|code| {
        out.flush()?;
        Ok(code)
    });
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e.into()),
        Ok(Outcome::Code(code)) => Ok(ExitCode::from(code)),
        Ok(Outcome::Usage(message)) => Err(crate::Error::Usage(message.into()).into()),
    }
}

/// What [`run_to`] decided: an exit code, or a usage mistake to report as an error.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Code(u8),
    Usage(&'static str),
}

/// The command proper, writing results to `out` and diagnostics to `err`.
pub fn run_to(args: &SudokuArgs, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    match (&args.puzzle, &args.file) {
        (Some(_), Some(_)) => Ok(Outcome::Usage("give either a puzzle or --file, not both")),
        (None, None) => Ok(Outcome::Usage("give a puzzle or --file FILE")),
        (Some(line), None) => one_puzzle(line, args.count, out).map(Outcome::Code),
        (None, Some(path)) => file(path, args, out, err).map(Outcome::Code),
    }
}

fn one_puzzle(line: &str, count: bool, out: &mut dyn Write) -> io::Result<u8> {
    let grid = match Grid::parse(line) {
        Ok(grid) => grid,
        Err(e) => {
            writeln!(out, "invalid: {e}")?;
            return Ok(1);
        }
    };
    if let Some(conflict) = grid.first_conflict() {
        writeln!(out, "invalid: {conflict}")?;
        return Ok(1);
    }
    if count {
        writeln!(out, "{}", count_text(&grid))?;
        return Ok(0);
    }
    let (status, outcome) = classify(&grid);
    match (status, outcome.first) {
        (Status::Solved, Some(solution)) => {
            write!(out, "{}", solution.render_boxes())?;
            Ok(0)
        }
        (Status::MultipleSolutions, _) => {
            writeln!(
                out,
                "multiple_solutions: the puzzle has more than one solution"
            )?;
            Ok(1)
        }
        _ => {
            writeln!(out, "no_solution: the puzzle has no solution")?;
            Ok(1)
        }
    }
}

/// The solution count, with a note when counting stopped at the cap.
fn count_text(grid: &Grid) -> String {
    let n = solve(grid, COUNT_CAP).solutions;
    if n >= COUNT_CAP {
        format!("{n} (counting stopped at {COUNT_CAP}; there may be more)")
    } else {
        n.to_string()
    }
}

fn file(
    path: &Path,
    args: &SudokuArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<u8> {
    let reader = match File::open(path) {
        Ok(f) => BufReader::new(f),
        Err(e) => {
            writeln!(err, "eavpivot sudoku: cannot read {}: {e}", path.display())?;
            return Ok(2);
        }
    };
    let started = Instant::now();
    let (mut puzzles, mut nodes) = (0u64, 0u64);
    for (number, line) in reader.lines().enumerate() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                let at = number + 1;
                writeln!(
                    err,
                    "eavpivot sudoku: cannot read {} line {at}: {e}",
                    path.display()
                )?;
                return Ok(2);
            }
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        puzzles += 1;
        nodes += file_line(line, args.count, out)?;
    }
    if args.stats {
        let secs = started.elapsed().as_secs_f64();
        let rate = if secs > 0.0 {
            puzzles as f64 / secs
        } else {
            0.0
        };
        writeln!(
            err,
            "{puzzles} puzzles in {secs:.3} s ({rate:.0} puzzles/s), {nodes} search nodes"
        )?;
    }
    Ok(0)
}

/// Writes one result line (a solution, a status word or a count); returns search nodes.
fn file_line(line: &str, count: bool, out: &mut dyn Write) -> io::Result<u64> {
    let Ok(grid) = Grid::parse(line) else {
        writeln!(out, "{}", Status::Invalid.as_str())?;
        return Ok(0);
    };
    if count {
        let text = if grid.first_conflict().is_some() {
            Status::Invalid.as_str().to_string()
        } else {
            count_text(&grid)
        };
        writeln!(out, "{text}")?;
        return Ok(0);
    }
    let (status, outcome) = classify(&grid);
    match (status, &outcome.first) {
        (Status::Solved, Some(solution)) => writeln!(out, "{}", solution.to_line())?,
        _ => writeln!(out, "{}", status.as_str())?,
    }
    Ok(outcome.nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUZZLE: &str =
        "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
    const SOLUTION: &str =
        "534678912672195348198342567859761423426853791713924856961537284287419635345286179";

    fn run_args(args: SudokuArgs) -> (Outcome, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let outcome = run_to(&args, &mut out, &mut err).expect("writes to memory succeed");
        let text = |v: Vec<u8>| String::from_utf8(v).expect("utf-8 output");
        (outcome, text(out), text(err))
    }

    fn puzzle(line: &str, count: bool) -> SudokuArgs {
        SudokuArgs {
            puzzle: Some(line.to_string()),
            count,
            ..SudokuArgs::default()
        }
    }

    #[test]
    fn solves_one_puzzle_with_boxes() {
        let (outcome, out, _) = run_args(puzzle(PUZZLE, false));
        assert_eq!(outcome, Outcome::Code(0));
        assert!(out.starts_with("+-------+-------+-------+\n| 5 3 4 | 6 7 8 | 9 1 2 |\n"));
    }

    #[test]
    fn reports_unsolved_puzzles_with_exit_1() {
        let dup = format!("55{}", &PUZZLE[2..]);
        let (outcome, out, _) = run_args(puzzle(&dup, false));
        assert_eq!(outcome, Outcome::Code(1));
        assert_eq!(
            out,
            "invalid: value 5 appears twice in row 1 (r1c1 and r1c2)\n"
        );
        let (_, out, _) = run_args(puzzle("12x", false));
        assert!(out.starts_with("invalid: puzzle has 3 cells"), "{out}");
        let (outcome, out, _) = run_args(puzzle(&".".repeat(81), false));
        assert_eq!(outcome, Outcome::Code(1));
        assert!(out.starts_with("multiple_solutions"));
        let dead = format!("12345678.........9{}", ".".repeat(63));
        assert!(run_args(puzzle(&dead, false)).1.starts_with("no_solution"));
    }

    #[test]
    fn counts_with_a_cap() {
        let (outcome, out, _) = run_args(puzzle(PUZZLE, true));
        assert_eq!((outcome, out.as_str()), (Outcome::Code(0), "1\n"));
        let (_, out, _) = run_args(puzzle(&".".repeat(16), true));
        assert_eq!(out, "288\n", "all 4×4 grids");
        let (_, out, _) = run_args(puzzle(&".".repeat(81), true));
        assert!(out.contains("counting stopped at 10000"), "{out}");
    }

    #[test]
    fn classifies_a_file() {
        let dir = std::env::temp_dir().join(format!("eavpivot-sudoku-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("puzzles.txt");
        let dup = format!("55{}", &PUZZLE[2..]);
        let text = format!(
            "# header\n\n{PUZZLE}\n{}\n{dup}\nnot a puzzle\n",
            ".".repeat(81)
        );
        std::fs::write(&path, text).expect("write temp file");
        let args = SudokuArgs {
            file: Some(path.clone()),
            stats: true,
            ..SudokuArgs::default()
        };
        let (outcome, out, err) = run_args(args);
        assert_eq!(outcome, Outcome::Code(0));
        assert_eq!(
            out,
            format!("{SOLUTION}\nmultiple_solutions\ninvalid\ninvalid\n")
        );
        assert!(err.contains("4 puzzles in"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
        let missing = SudokuArgs {
            file: Some(dir.join("missing.txt")),
            ..SudokuArgs::default()
        };
        let (outcome, out, err) = run_args(missing);
        assert_eq!((outcome, out.as_str()), (Outcome::Code(2), ""));
        assert!(
            err.contains("cannot read") && err.contains("missing.txt"),
            "{err}"
        );
    }

    #[test]
    fn usage_mistakes_and_import() {
        assert!(matches!(
            run_args(SudokuArgs::default()).0,
            Outcome::Usage(_)
        ));
        let import = SudokuArgs {
            import: Some(PathBuf::from("/nonexistent/x.txt")),
            ..SudokuArgs::default()
        };
        let err = run(&import).expect_err("missing file");
        assert_eq!(err.to_string(), "cannot read /nonexistent/x.txt");
    }

    #[test]
    fn broken_pipe_is_success() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let err = run_to(&puzzle(PUZZLE, false), &mut Closed, &mut io::sink()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    }
}
