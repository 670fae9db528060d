//! Reproducible puzzles with exactly one solution, for tests and benchmarks.
//!
//! Why not ship puzzle files: large (16×16, 25×25) hard puzzles are scarce and third-party
//! sets must not be copied into the product, so tests and benches make their own. A full
//! grid comes from a fixed valid pattern scrambled by symmetry (value relabelling, row
//! and column swaps within bands/stacks, band and stack swaps); then givens are removed
//! in random order, keeping a removal only if a node-budgeted search still proves the
//! solution unique. The budget bounds generation time; the result is always verified.

use super::grid::Grid;
use super::solver::solve_with_budget;

/// SplitMix64: tiny, fast, good enough for shuffling, and fully deterministic per seed.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-enough index below `n` (n > 0; the modulo bias is irrelevant here).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// Search nodes allowed per uniqueness check while removing givens.
const CHECK_BUDGET: u64 = 2_000;

/// A puzzle of the given box size (2..=5) with exactly one solution, the same for the
/// same seed. Panics on an unsupported box size (a programming error).
pub fn generate(box_size: usize, seed: u64) -> Grid {
    let mut rng = Rng::new(seed);
    let mut puzzle = random_solution(box_size, &mut rng);
    let side = puzzle.side();
    let mut order: Vec<usize> = (0..side * side).collect();
    rng.shuffle(&mut order);
    for cell in order {
        let (r, c) = (cell / side, cell % side);
        let kept = puzzle.get(r, c);
        puzzle.set(r, c, 0);
        let unique = solve_with_budget(&puzzle, 2, CHECK_BUDGET).is_some_and(|o| o.solutions == 1);
        if !unique {
            puzzle.set(r, c, kept);
        }
    }
    puzzle
}

/// A random valid full grid: the pattern `(b·(r mod b) + r div b + c) mod side`, scrambled.
pub(crate) fn random_solution(box_size: usize, rng: &mut Rng) -> Grid {
    let b = box_size;
    let side = b * b;
    let rows = scrambled_lines(b, rng);
    let cols = scrambled_lines(b, rng);
    let mut labels: Vec<u8> = (1..=side as u8).collect();
    rng.shuffle(&mut labels);
    let mut cells = Vec::with_capacity(side * side);
    for &r in &rows {
        for &c in &cols {
            cells.push(labels[(b * (r % b) + r / b + c) % side]);
        }
    }
    match Grid::new(box_size, cells) {
        Ok(grid) => grid,
        Err(e) => panic!("generate: {e}"),
    }
}

/// A permutation of 0..side that keeps bands together: shuffle the bands, then the lines
/// inside each band. Any such relabelling maps a valid grid to a valid grid.
fn scrambled_lines(b: usize, rng: &mut Rng) -> Vec<usize> {
    let mut bands: Vec<usize> = (0..b).collect();
    rng.shuffle(&mut bands);
    let mut lines = Vec::with_capacity(b * b);
    for band in bands {
        let mut inner: Vec<usize> = (0..b).map(|k| band * b + k).collect();
        rng.shuffle(&mut inner);
        lines.extend(inner);
    }
    lines
}
