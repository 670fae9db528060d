//! `eavpivot sudoku`: solve one puzzle, count its solutions, or classify a file of them.
//!
//! The work is split so it can be tested without a process: [`run`] only wires standard
//! output and error to [`run_to`], which writes through any `Write`. A closed pipe on
//! standard output (`eavpivot sudoku --file big.txt | head`) is a normal way to stop
//! reading, so it ends the run successfully instead of being reported as an error.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{mpsc, Mutex};
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
    /// Classify every puzzle of a file, one per line ('#' lines and blank lines skipped;
    /// a line 'puzzle:count[:solution]', as tdoku's test sets, is its puzzle).
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// With --file: print puzzles per second and total search nodes on standard error.
    #[arg(long)]
    pub stats: bool,
    /// With --file: threads solving puzzles (default: one per CPU core; 1 solves on the
    /// main thread). The output is the same, in the same order, whatever the number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(usize))]
    pub threads: Option<usize>,
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
        Ok(f) => BufReader::with_capacity(1 << 16, f),
        Err(e) => {
            writeln!(err, "eavpivot sudoku: cannot read {}: {e}", path.display())?;
            return Ok(2);
        }
    };
    let started = Instant::now();
    let mut puzzles = Puzzles {
        reader,
        line: Vec::new(),
        number: 0,
    };
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let tally = if threads > 1 {
        parallel(&mut puzzles, args.count, threads, out)?
    } else {
        sequential(&mut puzzles, args.count, out)?
    };
    if let Some((at, e)) = tally.failed {
        writeln!(
            err,
            "eavpivot sudoku: cannot read {} line {at}: {e}",
            path.display()
        )?;
        return Ok(2);
    }
    if args.stats {
        let (puzzles, nodes) = (tally.puzzles, tally.nodes);
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

/// Puzzle lines handed to a solving thread at a time: solving 256 takes 0.5 ms (easy) to
/// 15 ms (the hardest sets), so handing over costs nothing next to it, and a file of a few
/// hundred puzzles still keeps two threads busy.
const BATCH: usize = 256;

/// What a run over a file added up to.
#[derive(Default)]
struct Tally {
    puzzles: u64,
    nodes: u64,
    /// The line number and error that stopped reading, after every line before it was
    /// answered.
    failed: Option<(usize, io::Error)>,
}

/// The puzzle lines of a file, read into one reused buffer (no allocation per line).
struct Puzzles<R> {
    reader: R,
    line: Vec<u8>,
    /// Lines read so far, blank and `#` lines included: the number an error names.
    number: usize,
}

impl<R: BufRead> Puzzles<R> {
    /// Appends up to [`BATCH`] puzzle lines to `batch`, each trimmed and ending in `\n`,
    /// skipping blank and `#` lines. Returns how many, and the line number and error if
    /// reading stopped on one; fewer than [`BATCH`] without an error means the end.
    fn fill(&mut self, batch: &mut String) -> (u64, Option<(usize, io::Error)>) {
        let mut n = 0;
        while n < BATCH as u64 {
            self.line.clear();
            match self.reader.read_until(b'\n', &mut self.line) {
                Ok(0) => break,
                Ok(_) => self.number += 1,
                Err(e) => return (n, Some((self.number + 1, e))),
            }
            let Ok(text) = std::str::from_utf8(&self.line) else {
                // The same words as `BufRead::lines` uses for such a line.
                let e = io::Error::new(
                    io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                );
                return (n, Some((self.number, e)));
            };
            let text = text.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            batch.push_str(text);
            batch.push('\n');
            n += 1;
        }
        (n, None)
    }
}

/// Solves batch after batch on this thread.
fn sequential<R: BufRead>(
    puzzles: &mut Puzzles<R>,
    count: bool,
    out: &mut dyn Write,
) -> io::Result<Tally> {
    let mut tally = Tally::default();
    let (mut batch, mut text) = (String::new(), String::new());
    loop {
        batch.clear();
        text.clear();
        let (n, failed) = puzzles.fill(&mut batch);
        tally.puzzles += n;
        tally.nodes += solve_batch(&batch, count, &mut text);
        out.write_all(text.as_bytes())?;
        if failed.is_some() || n < BATCH as u64 {
            tally.failed = failed;
            return Ok(tally);
        }
    }
}

/// A batch to solve: its sequence number and its puzzle lines.
type Job = (usize, String);
/// A solved batch: its sequence number and result lines and search nodes, or `None` if
/// solving it panicked.
type Done = (usize, Option<(String, u64)>);

/// Solves batches on `threads` threads while this one reads the file and writes the
/// results in file order, so the output is the same as [`sequential`]'s.
fn parallel<R: BufRead>(
    puzzles: &mut Puzzles<R>,
    count: bool,
    threads: usize,
    out: &mut dyn Write,
) -> io::Result<Tally> {
    let (jobs, job_rx) = mpsc::channel::<Job>();
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done) = mpsc::channel::<Done>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (job_rx, done_tx) = (&job_rx, done_tx.clone());
            scope.spawn(move || loop {
                // A poisoned lock or a closed channel: the run is over.
                let Ok(Ok((i, batch))) = job_rx.lock().map(|rx| rx.recv()) else {
                    return;
                };
                let solved = std::panic::catch_unwind(|| {
                    let mut text = String::with_capacity(batch.len());
                    let nodes = solve_batch(&batch, count, &mut text);
                    (text, nodes)
                });
                if done_tx.send((i, solved.ok())).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        // `jobs` moves into `dispatch` and closes when it returns, error or not, so every
        // thread ends before the scope waits for them.
        dispatch(puzzles, jobs, &done, 4 * threads, out)
    })
}

/// Keeps up to `window` batches in flight and writes the solved ones in order.
fn dispatch<R: BufRead>(
    puzzles: &mut Puzzles<R>,
    jobs: mpsc::Sender<Job>,
    done: &mpsc::Receiver<Done>,
    window: usize,
    out: &mut dyn Write,
) -> io::Result<Tally> {
    let stopped = || io::Error::other("a solving thread stopped");
    let mut tally = Tally::default();
    let mut solved: BTreeMap<usize, (String, u64)> = BTreeMap::new();
    let (mut sent, mut written, mut reading) = (0, 0, true);
    loop {
        while reading && sent - written < window {
            let mut batch = String::with_capacity(BATCH * 82);
            let (n, failed) = puzzles.fill(&mut batch);
            tally.puzzles += n;
            if failed.is_some() || n < BATCH as u64 {
                reading = false;
                tally.failed = failed;
            }
            if n == 0 {
                break;
            }
            jobs.send((sent, batch)).map_err(|_| stopped())?;
            sent += 1;
        }
        if written == sent {
            return Ok(tally);
        }
        let (i, result) = done.recv().map_err(|_| stopped())?;
        solved.insert(i, result.ok_or_else(stopped)?);
        while let Some((text, nodes)) = solved.remove(&written) {
            out.write_all(text.as_bytes())?;
            tally.nodes += nodes;
            written += 1;
        }
    }
}

/// Appends one result line per puzzle line of `batch` (a solution, a status word or a
/// count) to `out`; returns the search nodes.
fn solve_batch(batch: &str, count: bool, out: &mut String) -> u64 {
    batch.lines().map(|line| file_line(line, count, out)).sum()
}

/// Appends one result line (a solution, a status word or a count); returns search nodes.
fn file_line(line: &str, count: bool, out: &mut String) -> u64 {
    let Ok(grid) = Grid::parse(line) else {
        out.push_str(Status::Invalid.as_str());
        out.push('\n');
        return 0;
    };
    if count {
        if grid.first_conflict().is_some() {
            out.push_str(Status::Invalid.as_str());
        } else {
            out.push_str(&count_text(&grid));
        }
        out.push('\n');
        return 0;
    }
    let (status, outcome) = classify(&grid);
    match (status, &outcome.first) {
        (Status::Solved, Some(solution)) => solution.push_line(out),
        _ => out.push_str(status.as_str()),
    }
    out.push('\n');
    outcome.nodes
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
