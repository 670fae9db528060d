#!/usr/bin/env bash
# Side-by-side Sudoku throughput: eavpivot's solver vs the crates.io `sudoku` crate (a JCZSolve
# port), same process, same puzzles, limit 2 solutions, chunks of 64 puzzles alternating so
# load swings hit both. The `sudoku` crate is AGPL-3.0: it must never enter eavpivot's
# dependency tree, so this script builds a throwaway crate under target/ that depends on both.
#
#   bash benches/sudoku_compare.sh [DATA_DIR] [ROUNDS]     (default ../shared/data/sudoku, 5)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
data="${1:-$repo/../shared/data/sudoku}"
rounds="${2:-5}"
work="$repo/target/sudoku-compare"
mkdir -p "$work/src"
cat > "$work/Cargo.toml" <<EOF
[package]
name = "sudoku-compare"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
eavpivot = { path = "$repo" }
sudoku = "0.8"
EOF
cat > "$work/src/main.rs" <<'EOF'
use std::hint::black_box;
use std::time::Instant;

use eavpivot::transform::sudoku::{solve, Grid};
use sudoku::Sudoku;

const SETS: [&str; 4] = [
    "17_clue.txt",
    "magictour_top1465.txt",
    "forum_hardest_1905_11plus.txt",
    "forum_hardest_1106.txt",
];

fn main() {
    let dir = std::env::args().nth(1).expect("data dir");
    let rounds: usize = std::env::args().nth(2).and_then(|r| r.parse().ok()).unwrap_or(5);
    println!("| set | puzzles | eavpivot (puzzles/s) | sudoku crate (puzzles/s) | ratio |");
    println!("|---|---|---|---|---|");
    for name in SETS {
        let text = std::fs::read_to_string(format!("{dir}/{name}")).expect("read set");
        let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
        let ours: Vec<Grid> = lines.iter().map(|l| Grid::parse(l).expect("parse")).collect();
        let theirs: Vec<Sudoku> = lines.iter().map(|l| Sudoku::from_str_line(l).expect("parse")).collect();
        // Same answers first: a fast wrong solver would be worthless.
        for (g, s) in ours.iter().zip(&theirs) {
            let out = solve(g, 2);
            assert_eq!(out.solutions as usize, s.solutions_count_up_to(2), "count differs: {}", g.to_line());
            if let Some(first) = &out.first {
                assert!(first.is_complete_solution_of(g), "invalid answer for {}", g.to_line());
            }
        }
        let (mut best_ours, mut best_theirs) = (f64::MAX, f64::MAX);
        for _ in 0..rounds {
            let (mut a, mut b) = (0f64, 0f64);
            for (go, gt) in ours.chunks(64).zip(theirs.chunks(64)) {
                let t = Instant::now();
                let mut n = 0u32;
                for g in go { n += black_box(solve(black_box(g), 2)).solutions; }
                black_box(n);
                a += t.elapsed().as_secs_f64();
                let t = Instant::now();
                let mut buf = [[0u8; 81]; 2];
                let mut n = 0usize;
                for s in gt { n += black_box(*s).solutions_up_to_buffer(&mut buf, 2); black_box(&buf); }
                black_box(n);
                b += t.elapsed().as_secs_f64();
            }
            best_ours = best_ours.min(a);
            best_theirs = best_theirs.min(b);
        }
        let (po, pt) = (lines.len() as f64 / best_ours, lines.len() as f64 / best_theirs);
        println!("| {name} | {} | {po:.0} | {pt:.0} | {:.2} |", lines.len(), po / pt);
    }
}
EOF
cargo run --quiet --release --manifest-path "$work/Cargo.toml" -- "$data" "$rounds"
echo "(load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores)"
