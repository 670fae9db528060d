//! Solver throughput on the shared puzzle sets (limit 2, i.e. proving uniqueness), plus
//! generated 16×16 and 25×25 puzzles. The sets live in `../shared/data/sudoku/` beside
//! the repository and are never copied into it; a missing set is skipped with a note.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use eavpivot::transform::sudoku::{generate, solve, Grid};

/// Puzzles per set and iteration: enough for a stable rate, small enough for 2 cores.
const SAMPLE: usize = 2_000;

const SETS: [&str; 4] = [
    "17_clue.txt",
    "magictour_top1465.txt",
    "forum_hardest_1905_11plus.txt",
    "forum_hardest_1106.txt",
];

/// The first `SAMPLE` puzzles of a set, or `None` (with a note) if it is not there.
fn load(name: &str) -> Option<Vec<Grid>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/sudoku")
        .join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("skipping {name}: cannot read {}: {e}", path.display());
            return None;
        }
    };
    let grids = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| Grid::parse(l).ok())
        .take(SAMPLE)
        .collect();
    Some(grids)
}

fn sets(c: &mut Criterion) {
    let mut group = c.benchmark_group("sudoku_solve_limit2");
    group.sample_size(10);
    for name in SETS {
        let Some(grids) = load(name) else { continue };
        group.throughput(Throughput::Elements(grids.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), &grids, |b, grids| {
            b.iter(|| grids.iter().map(|g| solve(g, 2).solutions).sum::<u32>())
        });
    }
    group.finish();
}

fn generated(c: &mut Criterion) {
    let mut group = c.benchmark_group("sudoku_generated");
    group.sample_size(10);
    for box_size in [4, 5] {
        let puzzle = generate(box_size, 1);
        let side = box_size * box_size;
        group.bench_function(format!("{side}x{side}"), |b| b.iter(|| solve(&puzzle, 2)));
    }
    group.finish();
}

criterion_group!(benches, sets, generated);
criterion_main!(benches);
