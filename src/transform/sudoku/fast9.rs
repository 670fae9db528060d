//! Specialised 9×9 solver: bit-parallel "digit × band" candidate masks.
//!
//! Why a second solver: classic 9×9 puzzles are the bulk of real use and benchmarks, and
//! a per-cell solver spends most of its time walking peer lists. Here the state for each
//! digit and each band (three rows) is one 27-bit mask, so whole rows, boxes and columns
//! are eliminated with a handful of AND operations:
//!
//! * within a band a digit occupies one "segment" (row × box, 3 cells) per row and per
//!   box, i.e. a permutation of a 3×3 segment matrix. [`KEEP`] maps the 9-bit pattern of
//!   non-empty segments to the segments that lie on some permutation, which applies
//!   pointing pairs, box/line claiming and row/box hidden singles in one table look-up;
//! * a row whose mask has one cell left is a placement (hidden single in that row);
//! * naked singles come from bit-sliced counting of the nine digit masks per band;
//! * search branches on a bivalue cell when there is one (almost always), else on the
//!   cell with the fewest candidates.
//!
//! The idea of band masks is public (JCZSolve, tdoku write-ups); this code is our own.

/// All 27 cells of a band.
const BAND: u32 = (1 << 27) - 1;

/// Segment pattern → segments lying on some row↔box permutation (0 = none: contradiction).
static KEEP: [u16; 512] = keep_table();
/// 9-bit segment mask → the 27 cell bits of those segments.
static EXPAND: [u32; 512] = expand_table();
/// 9 cells of one row → 3 bits, one per box segment that is non-empty.
static SHRINK: [u16; 512] = shrink_table();
/// Cell (0..27 within a band) → the other cells of its row and box in that band.
static PEERS: [u32; 27] = peers_table();

const fn keep_table() -> [u16; 512] {
    const PERMS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let mut t = [0u16; 512];
    let mut s = 0;
    while s < 512 {
        let mut p = 0;
        while p < 6 {
            let m = (1 << PERMS[p][0]) | (1 << (3 + PERMS[p][1])) | (1 << (6 + PERMS[p][2]));
            if s & m == m {
                t[s] |= m as u16;
            }
            p += 1;
        }
        s += 1;
    }
    t
}

const fn expand_table() -> [u32; 512] {
    let mut t = [0u32; 512];
    let mut s = 0;
    while s < 512 {
        let mut seg = 0;
        while seg < 9 {
            if s & (1 << seg) != 0 {
                t[s] |= 7 << ((seg / 3) * 9 + (seg % 3) * 3);
            }
            seg += 1;
        }
        s += 1;
    }
    t
}

const fn shrink_table() -> [u16; 512] {
    let mut t = [0u16; 512];
    let mut row = 0;
    while row < 512 {
        let mut k = 0;
        while k < 3 {
            if row & (7 << (3 * k)) != 0 {
                t[row] |= 1 << k;
            }
            k += 1;
        }
        row += 1;
    }
    t
}

const fn peers_table() -> [u32; 27] {
    let mut t = [0u32; 27];
    let mut c = 0;
    while c < 27 {
        let (r, k) = (c / 9, (c % 9) / 3);
        let row = 0x1ff << (9 * r);
        let bx = (7 << (3 * k)) | (7 << (9 + 3 * k)) | (7 << (18 + 3 * k));
        t[c] = (row | bx) & !(1 << c);
        c += 1;
    }
    t
}

/// Candidate state. `cand[d * 3 + b]` holds where digit `d` may still go in band `b`.
#[derive(Clone, Copy)]
struct Board {
    cand: [u32; 27],
    /// Bit `i`: `cand[i]` changed since it was last processed (unchanged masks are skipped).
    dirty: u32,
    unsolved_cells: [u32; 3],
    /// Per band, bit `d * 3 + r`: digit `d` not yet placed in row `r` of the band.
    unsolved_rows: [u32; 3],
}

/// Marker for a contradiction (a dead end in the search, or inconsistent givens).
struct Dead;

impl Board {
    fn new() -> Board {
        Board {
            cand: [BAND; 27],
            dirty: BAND,
            unsolved_cells: [BAND; 3],
            unsolved_rows: [BAND; 3],
        }
    }

    /// Puts digit `d` on cell `c` of band `b` and removes it from every peer.
    #[inline]
    fn place(&mut self, d: usize, b: usize, c: u32) -> Result<(), Dead> {
        let bit = 1u32 << c;
        if self.cand[d * 3 + b] & bit == 0 {
            return Err(Dead);
        }
        for other in 0..9 {
            self.narrow(other * 3 + b, !bit);
        }
        self.narrow(d * 3 + b, !PEERS[c as usize]);
        let column = 0x40201u32 << (c % 9);
        for ob in 0..3 {
            if ob != b {
                self.narrow(d * 3 + ob, !column);
            }
        }
        self.cand[d * 3 + b] |= bit;
        self.unsolved_cells[b] &= !bit;
        self.unsolved_rows[b] &= !(1 << (d * 3 + c as usize / 9));
        Ok(())
    }

    /// `cand[i] &= keep`, marking the mask dirty if that removed anything.
    #[inline(always)]
    fn narrow(&mut self, i: usize, keep: u32) {
        let old = self.cand[i];
        let new = old & keep;
        self.cand[i] = new;
        self.dirty |= u32::from(new != old) << i;
    }

    /// Box/line reduction for one digit-band, then places its row singles.
    #[inline]
    fn process(&mut self, i: usize) -> Result<(), Dead> {
        let (d, b) = (i / 3, i % 3);
        let m = self.cand[i];
        let segs = SHRINK[(m & 0x1ff) as usize]
            | SHRINK[((m >> 9) & 0x1ff) as usize] << 3
            | SHRINK[(m >> 18) as usize] << 6;
        let keep = KEEP[segs as usize];
        if keep == 0 {
            return Err(Dead);
        }
        let m = m & EXPAND[keep as usize];
        self.cand[i] = m;
        let mut rows = (self.unsolved_rows[b] >> (d * 3)) & 7;
        while rows != 0 {
            let r = rows.trailing_zeros();
            rows &= rows - 1;
            let row = (m >> (9 * r)) & 0x1ff;
            if row.is_power_of_two() {
                self.place(d, b, row.trailing_zeros() + 9 * r)?;
            }
        }
        Ok(())
    }

    /// Places every naked single; returns how many were placed.
    fn naked_singles(&mut self) -> Result<u32, Dead> {
        let mut placed = 0;
        for b in 0..3 {
            let (mut one, mut two) = (0u32, 0u32);
            for d in 0..9 {
                let m = self.cand[d * 3 + b];
                two |= one & m;
                one |= m;
            }
            if one != BAND {
                return Err(Dead);
            }
            let mut singles = one & !two & self.unsolved_cells[b];
            while singles != 0 {
                let c = singles.trailing_zeros();
                singles &= singles - 1;
                let d = (0..9)
                    .find(|&d| self.cand[d * 3 + b] & (1 << c) != 0)
                    .ok_or(Dead)?;
                self.place(d, b, c)?;
                placed += 1;
            }
        }
        Ok(placed)
    }

    /// Places digits that have one possible cell left in a column; returns how many.
    fn column_singles(&mut self) -> Result<u32, Dead> {
        let mut placed = 0;
        for d in 0..9 {
            let (mut one, mut two, mut done) = (0u32, 0u32, 0u32);
            for b in 0..3 {
                let m = self.cand[d * 3 + b];
                let fixed = m & !self.unsolved_cells[b];
                done |= fixed | fixed >> 9 | fixed >> 18;
                for r in 0..3 {
                    let row = (m >> (9 * r)) & 0x1ff;
                    two |= one & row;
                    one |= row;
                }
            }
            if one != 0x1ff {
                return Err(Dead);
            }
            let mut singles = one & !two & !done & 0x1ff;
            while singles != 0 {
                let col = singles.trailing_zeros();
                singles &= singles - 1;
                let column = 0x40201u32 << col;
                let b = (0..3)
                    .find(|&b| self.cand[d * 3 + b] & column != 0)
                    .ok_or(Dead)?;
                let c = (self.cand[d * 3 + b] & column).trailing_zeros();
                self.place(d, b, c)?;
                placed += 1;
            }
        }
        Ok(placed)
    }

    /// Applies all deductions until nothing changes.
    fn propagate(&mut self) -> Result<(), Dead> {
        loop {
            while self.dirty != 0 {
                let i = self.dirty.trailing_zeros() as usize;
                self.dirty &= self.dirty - 1;
                self.process(i)?;
            }
            if self.naked_singles()? == 0 && self.column_singles()? == 0 {
                return Ok(());
            }
        }
    }

    fn is_solved(&self) -> bool {
        self.unsolved_cells == [0; 3]
    }

    /// The cell to branch on: (band, cell bit index, candidate digits as a 9-bit mask).
    fn pick(&self) -> (usize, u32, u32) {
        for b in 0..3 {
            let (mut one, mut two, mut three) = (0u32, 0u32, 0u32);
            for d in 0..9 {
                let m = self.cand[d * 3 + b];
                three |= two & m;
                two |= one & m;
                one |= m;
            }
            let pairs = two & !three & self.unsolved_cells[b];
            if pairs != 0 {
                let c = pairs.trailing_zeros();
                return (b, c, self.digits_at(b, c));
            }
        }
        let mut best = (0usize, 0u32, 0x1ffu32);
        for b in 0..3 {
            let mut open = self.unsolved_cells[b];
            while open != 0 {
                let c = open.trailing_zeros();
                open &= open - 1;
                let digits = self.digits_at(b, c);
                if digits.count_ones() < best.2.count_ones() {
                    best = (b, c, digits);
                }
            }
        }
        best
    }

    fn digits_at(&self, b: usize, c: u32) -> u32 {
        (0..9).fold(0, |acc, d| acc | (((self.cand[d * 3 + b] >> c) & 1) << d))
    }

    /// The 81 values of a solved board.
    fn values(&self) -> [u8; 81] {
        let mut out = [0u8; 81];
        for d in 0..9 {
            for b in 0..3 {
                let mut m = self.cand[d * 3 + b];
                while m != 0 {
                    out[b * 27 + m.trailing_zeros() as usize] = d as u8 + 1;
                    m &= m - 1;
                }
            }
        }
        out
    }
}

/// Result of a 9×9 search: solutions counted up to the limit, the first one, and the
/// number of search nodes (propagation rounds, i.e. 1 + guesses).
pub(crate) struct Found {
    pub solutions: u32,
    pub first: Option<[u8; 81]>,
    pub nodes: u64,
}

/// Counts solutions of an 81-cell puzzle (values 0..=9) up to `limit` (at least 1).
pub(crate) fn solve9(cells: &[u8], limit: u32) -> Found {
    let mut found = Found {
        solutions: 0,
        first: None,
        nodes: 0,
    };
    let mut board = Board::new();
    for (i, &v) in cells.iter().enumerate().take(81) {
        if v != 0
            && board
                .place(usize::from(v) - 1, i / 27, (i % 27) as u32)
                .is_err()
        {
            return found;
        }
    }
    search(&mut board, limit.max(1), &mut found);
    found
}

fn search(board: &mut Board, limit: u32, found: &mut Found) {
    found.nodes += 1;
    if board.propagate().is_err() {
        return;
    }
    if board.is_solved() {
        found.solutions += 1;
        if found.first.is_none() {
            found.first = Some(board.values());
        }
        return;
    }
    let (b, c, mut digits) = board.pick();
    while digits != 0 {
        let d = digits.trailing_zeros() as usize;
        digits &= digits - 1;
        if digits == 0 {
            // Last alternative: no need to keep the parent state.
            if board.place(d, b, c).is_ok() {
                search(board, limit, found);
            }
            return;
        }
        let mut child = *board;
        if child.place(d, b, c).is_ok() {
            search(&mut child, limit, found);
        }
        if found.solutions >= limit {
            return;
        }
    }
}
