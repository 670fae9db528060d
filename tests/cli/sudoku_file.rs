//! `eavpivot sudoku --file` through the real binary: the answers come out one line per
//! puzzle, in file order, and are the same bytes whether one thread solves them or several
//! (`--threads`), across many batches and with unsolvable, ambiguous and invalid lines mixed
//! in; a line that cannot be read stops the run after every line before it is answered.

use assert_cmd::Command;
use eavpivot::transform::sudoku::{classify, generate, Grid, Status};

const UNIQUE: &str =
    "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
/// tdoku's test set: no solution, and 125 solutions.
const NONE: &str =
    "1...5.2.9..7.......6.......2...........5.1..2....2.39.3.4.9...15...1...3...8...4.";
const MANY: &str =
    "8.........95.......67..........2.485...4.3192......736...651947...732518...894263";
const ESCARGOT: &str =
    "1....7.9..3..2...8..96..5....53..9...1..8...26....4...3......1..4......7..7...3..";

/// What `--file` should print for one puzzle line, from the library in this process.
fn expected(line: &str) -> String {
    let Ok(grid) = Grid::parse(line) else {
        return "invalid".into();
    };
    match classify(&grid) {
        (Status::Solved, outcome) => outcome.first.expect("a solution").to_line(),
        (status, _) => status.as_str().into(),
    }
}

fn solve_file(path: &std::path::Path, threads: Option<&str>) -> (i32, String, String) {
    let mut cmd = Command::cargo_bin("eavpivot").expect("binary");
    cmd.arg("sudoku").arg("--file").arg(path);
    if let Some(n) = threads {
        cmd.args(["--threads", n]);
    }
    let out = cmd.output().expect("runs");
    let text = |b: Vec<u8>| String::from_utf8(b).expect("utf-8 output");
    (
        out.status.code().unwrap_or(-1),
        text(out.stdout),
        text(out.stderr),
    )
}

#[test]
fn sudoku_file_answers_in_order_with_any_number_of_threads() {
    let mut lines: Vec<String> = Vec::new();
    // Enough puzzles for several batches of 256, each kind recurring in every batch.
    for seed in 0..700u64 {
        lines.push(match seed % 10 {
            0 => NONE.into(),
            1 => MANY.into(),
            2 => format!("55{}", &UNIQUE[2..]),
            3 => ".".repeat(81),
            4 => "not a puzzle".into(),
            5 => ESCARGOT.into(),
            6 => generate(2, seed).to_line(),
            _ => generate(3, seed).to_line(),
        });
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("puzzles.txt");
    let mut text = String::from("# header\n\n");
    for (i, line) in lines.iter().enumerate() {
        text.push_str(line);
        text.push_str(if i % 7 == 0 { "\r\n\n# note\n" } else { "\n" });
    }
    std::fs::write(&path, text).expect("write the puzzle file");

    let want: String = lines.iter().map(|l| expected(l) + "\n").collect();
    assert!(
        want.contains("no_solution\nmultiple_solutions\ninvalid\nmultiple_solutions\ninvalid\n")
    );
    let one = solve_file(&path, Some("1"));
    assert_eq!(one, (0, want.clone(), String::new()), "one thread");
    for threads in [Some("2"), Some("3"), None] {
        assert_eq!(solve_file(&path, threads), one, "--threads {threads:?}");
    }
}

#[test]
fn sudoku_file_stops_at_an_unreadable_line_after_answering_the_ones_before() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.txt");
    let mut bytes = Vec::new();
    for _ in 0..300 {
        bytes.extend_from_slice(format!("{UNIQUE}\n").as_bytes());
    }
    bytes.extend_from_slice(b"\xff\xfe not utf-8\n");
    bytes.extend_from_slice(format!("{UNIQUE}\n").as_bytes());
    std::fs::write(&path, bytes).expect("write the puzzle file");
    let solution = expected(UNIQUE) + "\n";
    for threads in ["1", "2"] {
        let (code, out, err) = solve_file(&path, Some(threads));
        assert_eq!(code, 2, "--threads {threads}");
        assert_eq!(out, solution.repeat(300), "--threads {threads}");
        assert_eq!(
            err,
            format!(
                "eavpivot sudoku: cannot read {} line 301: stream did not contain valid UTF-8\n",
                path.display()
            )
        );
    }
}

/// tdoku's counted set as it is shipped (`puzzle:solutions[:solution]` per line): `--file`
/// takes the annotated lines as their puzzles, `--count` prints every recorded count and the
/// plain answer is the recorded solution, `no_solution` or `multiple_solutions`.
#[test]
fn sudoku_file_reads_tdokus_annotated_lines() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/sudoku/solution_counts.txt");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (shared/ must sit beside the repo)", path.display()));
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(lines.len(), 43);
    let mut counts = String::new();
    let mut answers = String::new();
    for line in &lines {
        let mut parts = line.split(':');
        let (_, count, solution) = (parts.next(), parts.next(), parts.next());
        let count = count.unwrap_or_else(|| panic!("no count: {line}"));
        counts.push_str(&format!("{count}\n"));
        answers.push_str(match (count, solution) {
            ("0", _) => "no_solution",
            ("1", Some(solution)) => solution,
            _ => "multiple_solutions",
        });
        answers.push('\n');
    }
    let mut cmd = Command::cargo_bin("eavpivot").expect("binary");
    let out = cmd
        .args(["sudoku", "--count", "--file"])
        .arg(&path)
        .output()
        .expect("runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout), counts);
    let (code, stdout, stderr) = solve_file(&path, None);
    assert_eq!((code, stdout, stderr), (0, answers, String::new()));
}
