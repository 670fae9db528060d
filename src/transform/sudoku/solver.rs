//! Exact solution counting for any box size 2..=5, with a dispatch to the 9×9 fast path.
//!
//! The generic engine keeps one `u32` candidate mask per cell (25 values fit), places
//! naked singles through precomputed peer lists, finds hidden singles by bit-sliced
//! counting over each unit, and branches on the cell with the fewest candidates. Every
//! placement removes the value from all peers and fails on an emptied cell, so a state
//! with no blank cell left is a valid solution by construction: the solver cannot hand
//! back a grid that breaks a rule or drops a given.

use std::sync::OnceLock;

use super::fast9;
use super::grid::{Grid, MAX_BOX, MIN_BOX};

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SolveOutcome {
    /// Solutions found, counted up to the requested limit.
    pub solutions: u32,
    /// The first solution found, if any.
    pub first: Option<Grid>,
    /// Search effort: nodes visited (one per propagation round, i.e. 1 + guesses).
    pub nodes: u64,
}

/// The verdict on a puzzle, as reported by the CLI and the transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Solved,
    NoSolution,
    MultipleSolutions,
    Invalid,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Solved => "solved",
            Status::NoSolution => "no_solution",
            Status::MultipleSolutions => "multiple_solutions",
            Status::Invalid => "invalid",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Counts solutions of `grid` up to `limit` (a limit of 0 is treated as 1). Duplicate
/// givens simply yield no solution; use [`classify`] to tell them apart.
pub fn solve(grid: &Grid, limit: u32) -> SolveOutcome {
    if grid.box_size() == 3 {
        let found = fast9::solve9(grid.cells(), limit);
        return SolveOutcome {
            solutions: found.solutions,
            first: found.first.map(|cells| Grid::solved(3, cells.to_vec())),
            nodes: found.nodes,
        };
    }
    solve_generic(grid, limit)
}

/// Invalid givens (a duplicate in a unit) → [`Status::Invalid`] with an empty outcome;
/// otherwise a search with limit 2, enough to prove uniqueness. Givens with a duplicate
/// have no solution, so the duplicate is only looked for when the search found none
/// (both engines stop at the first given that repeats one, before any search node).
pub fn classify(grid: &Grid) -> (Status, SolveOutcome) {
    let outcome = solve(grid, 2);
    let status = match outcome.solutions {
        0 if grid.first_conflict().is_some() => {
            let none = SolveOutcome {
                solutions: 0,
                first: None,
                nodes: 0,
            };
            return (Status::Invalid, none);
        }
        0 => Status::NoSolution,
        1 => Status::Solved,
        _ => Status::MultipleSolutions,
    };
    (status, outcome)
}

/// Cell relations of one box size, built once per process and shared.
struct Geometry {
    side: usize,
    full: u32,
    /// `peers[cell * n_peers..][..n_peers]`: cells sharing a row, column or box.
    peers: Vec<u16>,
    n_peers: usize,
    /// `units[u * side..][..side]`: rows, then columns, then boxes.
    units: Vec<u16>,
}

impl Geometry {
    fn get(box_size: usize) -> &'static Geometry {
        static CACHE: [OnceLock<Geometry>; MAX_BOX + 1] = [const { OnceLock::new() }; MAX_BOX + 1];
        CACHE[box_size].get_or_init(|| Geometry::build(box_size))
    }

    fn build(b: usize) -> Geometry {
        let side = b * b;
        let mut units = Vec::with_capacity(3 * side * side);
        for kind in 0..3 {
            for u in 0..side {
                for k in 0..side {
                    let (r, c) = match kind {
                        0 => (u, k),
                        1 => (k, u),
                        _ => ((u / b) * b + k / b, (u % b) * b + k % b),
                    };
                    units.push((r * side + c) as u16);
                }
            }
        }
        let n_peers = 3 * (side - 1) - 2 * (b - 1);
        let mut peers = Vec::with_capacity(side * side * n_peers);
        for cell in 0..side * side {
            let (r, c) = (cell / side, cell % side);
            let before = peers.len();
            for other in 0..side * side {
                let (r2, c2) = (other / side, other % side);
                let same_box = r / b == r2 / b && c / b == c2 / b;
                if other != cell && (r == r2 || c == c2 || same_box) {
                    peers.push(other as u16);
                }
            }
            debug_assert_eq!(peers.len() - before, n_peers);
        }
        Geometry {
            side,
            full: (1 << side) - 1,
            peers,
            n_peers,
            units,
        }
    }
}

/// Candidate state of the generic engine; cloned at each branch.
#[derive(Clone, Default)]
struct State {
    cand: Vec<u32>,
    solved: Vec<bool>,
    open: usize,
}

struct Search<'g> {
    geo: &'g Geometry,
    limit: u32,
    solutions: u32,
    first: Option<Vec<u8>>,
    nodes: u64,
    /// Node budget; the search stops (and reports `None`) once it is spent.
    max_nodes: u64,
    /// Cells reduced to one candidate and not yet placed.
    queue: Vec<u16>,
}

/// The per-cell engine, for every box size (9×9 normally goes to the fast path).
pub(crate) fn solve_generic(grid: &Grid, limit: u32) -> SolveOutcome {
    // An unlimited budget cannot run out, so this is always `Some`.
    solve_with_budget(grid, limit, u64::MAX).unwrap_or(SolveOutcome {
        solutions: 0,
        first: None,
        nodes: u64::MAX,
    })
}

/// The generic engine with a node budget; `None` if the budget ran out first. The
/// generator uses this to skip removals whose uniqueness check would be slow.
pub(crate) fn solve_with_budget(grid: &Grid, limit: u32, max_nodes: u64) -> Option<SolveOutcome> {
    debug_assert!((MIN_BOX..=MAX_BOX).contains(&grid.box_size()));
    let geo = Geometry::get(grid.box_size());
    let n = geo.side * geo.side;
    let mut search = Search {
        geo,
        limit: limit.max(1),
        solutions: 0,
        first: None,
        nodes: 0,
        max_nodes,
        queue: Vec::with_capacity(n),
    };
    let mut state = State {
        cand: vec![geo.full; n],
        solved: vec![false; n],
        open: n,
    };
    let consistent = grid
        .cells()
        .iter()
        .enumerate()
        .all(|(i, &v)| v == 0 || search.assign(&mut state, i, 1 << (v - 1)));
    if consistent {
        search.run(state);
    }
    if search.nodes > search.max_nodes {
        return None;
    }
    Some(SolveOutcome {
        solutions: search.solutions,
        first: search
            .first
            .and_then(|cells| Grid::new(grid.box_size(), cells).ok()),
        nodes: search.nodes,
    })
}

impl Search<'_> {
    /// Places the value `bit` on `cell`; false on a contradiction.
    fn assign(&mut self, state: &mut State, cell: usize, bit: u32) -> bool {
        if state.cand[cell] & bit == 0 {
            return false;
        }
        state.cand[cell] = bit;
        state.solved[cell] = true;
        state.open -= 1;
        let n_peers = self.geo.n_peers;
        for &p in &self.geo.peers[cell * n_peers..(cell + 1) * n_peers] {
            let p = usize::from(p);
            let c = state.cand[p];
            if c & bit != 0 {
                let c = c & !bit;
                if c == 0 {
                    return false;
                }
                state.cand[p] = c;
                if c.is_power_of_two() {
                    self.queue.push(p as u16);
                }
            }
        }
        true
    }

    /// Naked and hidden singles until a fixpoint; false on a contradiction.
    fn propagate(&mut self, state: &mut State) -> bool {
        loop {
            while let Some(cell) = self.queue.pop() {
                let cell = usize::from(cell);
                if !state.solved[cell] && !self.assign(state, cell, state.cand[cell]) {
                    return false;
                }
            }
            match self.hidden_singles(state) {
                None => return false,
                Some(0) => return true,
                Some(_) => {}
            }
        }
    }

    /// Places every value that has one possible cell in some unit; `None` when a unit
    /// has a value with no possible cell.
    fn hidden_singles(&mut self, state: &mut State) -> Option<u32> {
        let side = self.geo.side;
        let mut placed = 0;
        for u in 0..3 * side {
            let (mut once, mut twice, mut done) = (0u32, 0u32, 0u32);
            for &cell in &self.geo.units[u * side..(u + 1) * side] {
                let c = state.cand[usize::from(cell)];
                twice |= once & c;
                once |= c;
                if state.solved[usize::from(cell)] {
                    done |= c;
                }
            }
            if once != self.geo.full {
                return None;
            }
            let mut singles = once & !twice & !done;
            while singles != 0 {
                let bit = singles & singles.wrapping_neg();
                singles &= singles - 1;
                let unit = &self.geo.units[u * side..(u + 1) * side];
                let cell = unit
                    .iter()
                    .map(|&c| usize::from(c))
                    .find(|&c| state.cand[c] & bit != 0)?;
                if !state.solved[cell] {
                    if !self.assign(state, cell, bit) {
                        return None;
                    }
                    placed += 1;
                }
            }
        }
        Some(placed)
    }

    fn run(&mut self, mut state: State) {
        self.nodes += 1;
        if self.nodes > self.max_nodes || !self.propagate(&mut state) {
            self.queue.clear();
            return;
        }
        if state.open == 0 {
            self.solutions += 1;
            if self.first.is_none() {
                let values = state.cand.iter().map(|c| c.trailing_zeros() as u8 + 1);
                self.first = Some(values.collect());
            }
            return;
        }
        let cell = Self::most_constrained(&state);
        let mut options = state.cand[cell];
        while options != 0 {
            let bit = options & options.wrapping_neg();
            options &= options - 1;
            let mut child = if options == 0 {
                std::mem::take(&mut state)
            } else {
                state.clone()
            };
            if self.assign(&mut child, cell, bit) {
                self.run(child);
            } else {
                self.queue.clear();
            }
            if self.solutions >= self.limit || self.nodes > self.max_nodes {
                return;
            }
        }
    }

    /// The open cell with the fewest candidates (ties: first in row-major order).
    fn most_constrained(state: &State) -> usize {
        let mut best = (u32::MAX, 0);
        for (i, (&c, &solved)) in state.cand.iter().zip(&state.solved).enumerate() {
            let count = c.count_ones();
            if !solved && count < best.0 {
                best = (count, i);
                if count == 2 {
                    break;
                }
            }
        }
        best.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::sudoku::generator::{generate, random_solution, Rng};
    use proptest::prelude::*;
    use std::path::PathBuf;

    const SQLITE_DOCS: &str =
        "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
    const AI_ESCARGOT: &str =
        "1....7.9..3..2...8..96..5....53..9...1..8...26....4...3......1..4......7..7...3..";

    fn grid(line: &str) -> Grid {
        Grid::parse(line).expect("test puzzle parses")
    }

    #[test]
    fn each_status() {
        let (status, out) = classify(&grid(SQLITE_DOCS));
        assert_eq!(status, Status::Solved);
        assert!(out
            .first
            .unwrap()
            .is_complete_solution_of(&grid(SQLITE_DOCS)));
        // Consistent givens, but r1c9 has no value left (9 is in its column).
        let dead = format!("12345678.........9{}", ".".repeat(63));
        assert_eq!(classify(&grid(&dead)).0, Status::NoSolution);
        assert_eq!(classify(&grid(&dead)).1.first, None);
        for b in 2..=5 {
            let (status, out) = classify(&Grid::empty(b).unwrap());
            assert_eq!((status, out.solutions), (Status::MultipleSolutions, 2));
        }
        let duplicate = format!("5....5{}", &SQLITE_DOCS[6..]);
        let (status, out) = classify(&grid(&duplicate));
        assert_eq!((status, out.nodes), (Status::Invalid, 0));
        assert_eq!(solve(&grid(&duplicate), 2).solutions, 0);
        assert_eq!(Status::MultipleSolutions.as_str(), "multiple_solutions");
        assert_eq!(Status::NoSolution.to_string(), "no_solution");
    }

    #[test]
    fn hard_classic_and_limits() {
        let out = solve(&grid(AI_ESCARGOT), 5);
        assert_eq!(out.solutions, 1);
        assert!(out.nodes > 1);
        let empty = Grid::empty(3).unwrap();
        assert_eq!(solve(&empty, 7).solutions, 7);
        assert_eq!(solve(&empty, 0).solutions, 1, "limit 0 acts as 1");
        assert_eq!(solve_generic(&empty, 7).solutions, 7);
    }

    /// `generate(5, 1)`, kept as text because generating 25×25 takes seconds in debug.
    const GENERATED_25: &str = concat!(
        "D6LH.3.27..8..E.F..4M..O.",
        "I.2K3...F5...P.A.J..L....",
        ".8....1.OG2.K...6B.HC4..N",
        "..M.PB.L...F..5.7..KA9.8J",
        "5.C4....8..6H.D.OP.12.I.3",
        "4M.....E.9..B.HG....I3K..",
        ".L...O....IA3..DC.H...4MF",
        "K...7.N5..G2.O...89J..HC.",
        "..D.673.AK.LJ8....4NG.1..",
        ".2G.O6.D.H..N....7K.E.9..",
        "F1.M..LJH....56P.IO2....E",
        "..3.EG.N..P...O.HD..B..4.",
        ".4.C..A...J.L.8N..F...OK.",
        ".....I2PK.39...B..6CN...G",
        "OK.2I.......M..3.E....8HD",
        "A.7E.1GF...3IK.8.H..65CN.",
        ".3.I.45....PG..7J..E8....",
        "..8DH........9.6.4C..GMP1",
        ".N....E.J...DHL...M......",
        "M.F....8..6N..C...2.7EA.9",
        "....A.F..N1I..P9.L.8...5.",
        ".5H6.....3.D8....MNF.O..2",
        "J......1I..E7A......4....",
        "P.1.2....B.GF..K..3...JD.",
        "NG4.ML....H5..B1I2..K73..",
    );

    #[test]
    #[cfg_attr(debug_assertions, ignore = "25×25 generation is slow in debug builds")]
    fn generator_is_reproducible_at_25() {
        assert_eq!(generate(5, 1).to_line(), GENERATED_25);
    }

    #[test]
    fn hard_25_solves_uniquely() {
        let puzzle = grid(GENERATED_25);
        let (status, out) = classify(&puzzle);
        assert_eq!(status, Status::Solved);
        assert!(out.first.unwrap().is_complete_solution_of(&puzzle));
        assert_eq!(solve(&puzzle, 2).solutions, 1);
    }

    #[test]
    fn generated_puzzles_have_one_solution() {
        for (b, seed) in [(2, 1), (3, 2), (4, 3)] {
            let puzzle = generate(b, seed);
            assert_eq!(puzzle, generate(b, seed), "deterministic");
            assert!(puzzle.givens() < puzzle.cells().len());
            let (status, out) = classify(&puzzle);
            assert_eq!(status, Status::Solved, "box size {b}");
            assert!(out.first.unwrap().is_complete_solution_of(&puzzle));
        }
    }

    fn data_path(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/data/sudoku")
            .join(name)
    }

    /// Puzzle lines of a shared data file (headers and blank lines skipped), at most `n`.
    fn data_lines(name: &str, n: usize) -> Vec<String> {
        let path = data_path(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("{}: {e} (shared/ must sit beside the repo)", path.display())
        });
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .take(n)
            .map(String::from)
            .collect()
    }

    /// Every line of tdoku's counted set: both engines agree with the recorded count and,
    /// where it is 1, with the recorded solution.
    #[test]
    fn solution_counts_match_reference() {
        let lines = data_lines("solution_counts.txt", usize::MAX);
        assert_eq!(lines.len(), 43);
        for line in lines {
            let mut parts = line.split(':');
            let puzzle = grid(parts.next().unwrap_or_default());
            let count: u32 = parts.next().and_then(|c| c.parse().ok()).expect("count");
            let fast = solve(&puzzle, 1000);
            let generic = solve_generic(&puzzle, 1000);
            assert_eq!(
                (fast.solutions, generic.solutions),
                (count, count),
                "{line}"
            );
            if let Some(solution) = parts.next() {
                assert_eq!(fast.first.unwrap().to_line(), solution);
                assert_eq!(generic.first.unwrap().to_line(), solution);
            }
        }
    }

    /// A sample of each benchmark set (debug builds are slow; the bench covers them all).
    #[test]
    fn benchmark_set_samples() {
        let sets = [
            ("17_clue.txt", Status::Solved),
            ("magictour_top1465.txt", Status::Solved),
            ("forum_hardest_1905_11plus.txt", Status::Solved),
            ("forum_hardest_1106.txt", Status::Solved),
            ("serg_multi_solution.txt", Status::MultipleSolutions),
        ];
        for (name, expected) in sets {
            for line in data_lines(name, 40) {
                let puzzle = grid(&line);
                let (status, out) = classify(&puzzle);
                assert_eq!(status, expected, "{name}: {line}");
                assert!(out.first.unwrap().is_complete_solution_of(&puzzle));
                assert_eq!(solve_generic(&puzzle, 2).solutions, out.solutions);
            }
        }
    }

    /// A valid full grid of the given box size, blanked where `keep` is false.
    fn thinned(box_size: usize, seed: u64, keep: &[bool]) -> (Grid, Grid) {
        let solution = random_solution(box_size, &mut Rng::new(seed));
        let cells = solution
            .cells()
            .iter()
            .zip(keep.iter().cycle())
            .map(|(&v, &k)| if k { v } else { 0 })
            .collect();
        (
            solution,
            Grid::new(box_size, cells).expect("values in range"),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Removing givens from a solved grid leaves a solvable, consistent puzzle whose
        /// answer keeps every given; both engines count alike.
        #[test]
        fn thinned_grids_stay_solvable(
            box_size in 2usize..=4,
            seed in any::<u64>(),
            keep in prop::collection::vec(any::<bool>(), 16..=256),
        ) {
            let (solution, puzzle) = thinned(box_size, seed, &keep);
            prop_assert!(puzzle.first_conflict().is_none());
            prop_assert!(solution.is_complete_solution_of(&puzzle));
            let out = solve(&puzzle, 3);
            prop_assert!(out.solutions >= 1);
            prop_assert!(out.first.unwrap().is_complete_solution_of(&puzzle));
            prop_assert_eq!(solve_generic(&puzzle, 3).solutions, out.solutions);
        }

        /// Arbitrary 9×9 givens: whatever comes back obeys the rules and keeps the givens.
        #[test]
        fn answers_are_valid(cells in prop::collection::vec(
            prop_oneof![6 => Just(0u8), 1 => 1u8..=9], 81)
        ) {
            let puzzle = Grid::new(3, cells).expect("values in range");
            let (status, out) = classify(&puzzle);
            prop_assert_eq!(status == Status::Invalid, puzzle.first_conflict().is_some());
            if let Some(answer) = out.first {
                prop_assert!(answer.is_complete_solution_of(&puzzle));
            }
            if status != Status::Invalid {
                prop_assert_eq!(solve_generic(&puzzle, 2).solutions, out.solutions);
            }
        }
    }
}
