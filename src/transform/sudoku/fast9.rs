//! Specialised 9×9 solver: bit-parallel "digit × band" candidate masks.
//!
//! Why a second solver: classic 9×9 puzzles are the bulk of real use and benchmarks, and
//! a per-cell solver spends most of its time walking peer lists. Here the state for each
//! digit and each band (three rows) is one 27-bit mask, so whole rows, boxes and columns
//! are eliminated with a handful of AND operations:
//!
//! * within a band a digit occupies one "segment" (row × box, 3 cells) per row and per
//!   box, i.e. a permutation of a 3×3 segment matrix. [`REDUCE`] maps the 9-bit pattern
//!   of non-empty segments to the cells of the segments that lie on some permutation,
//!   which applies pointing pairs, box/line claiming and row/box hidden singles in one
//!   table look-up;
//! * a box of the band in which the digit has a single possible column fixes that column,
//!   so the digit is removed from the column in the two other bands ([`LOCK`]);
//! * a row with one cell left is a placement: the cell leaves the other digits' masks;
//! * naked singles come from bit-sliced counting of the nine digit masks per band, and
//!   digits confined to one band in some column are pinned there (column hidden singles,
//!   checked only for digits whose masks changed since their last check);
//! * search branches on a bivalue cell (almost always there is one): in the band with
//!   the most of them, in that band's row with the most of them. It copies a small
//!   fixed-size board (no heap), and drops each tried digit from the parent before the
//!   next branch. Solutions are counted as found; a board with every cell fixed after
//!   propagation is valid by construction, so nothing is re-validated.
//!
//! Every (digit, band) update is specialised at compile time (const generics), and a
//! mask is only processed when it differs from the value it had when last processed.
//! A pass over all masks is repeated only if an update changed a mask that the pass had
//! already gone by.
//!
//! The idea of band masks is public (JCZSolve, tdoku write-ups); this code is our own.

/// All 27 cells of a band.
const BAND: u32 = (1 << 27) - 1;
/// Column `c` of a band (bits `c`, `c + 9`, `c + 18`) is `COLUMN << c`.
const COLUMN: u32 = 0x40201;

/// Segment pattern → the cells of the segments lying on some row↔box permutation (low
/// 32 bits; 0 = none: contradiction) and, high 32 bits, the cells of the rows left with a
/// single such segment.
static REDUCE: [u64; 512] = reduce_table();
/// 9 cells of one row → 3 bits, one per box segment that is non-empty.
static SHRINK: [u16; 512] = shrink_table();
/// 9-bit value → number of set bits.
static ONES: [u8; 512] = ones_table();
/// Cell (0..27 within a band) → the other cells of its row and box in that band.
static PEERS: [u32; 27] = peers_table();
/// Columns (9 bits) a digit may use in a band → the 27-bit mask of the columns that are
/// the only one left in their box, i.e. columns the digit surely takes in this band.
static LOCK: [u32; 512] = lock_table();
/// Columns (9 bits) a digit can only take in this band (not in the two others) → the
/// cells it may keep: in a box with such a column only that column, other boxes intact.
static PIN: [u32; 512] = pin_table();

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

const fn reduce_table() -> [u64; 512] {
    let keep = keep_table();
    let expand = expand_table();
    let mut t = [0u64; 512];
    let mut s = 0;
    while s < 512 {
        let k = keep[s] as usize;
        let mut solo = 0u32;
        let mut r = 0;
        while r < 3 {
            let segs = (k >> (3 * r)) & 7;
            if segs != 0 && segs & (segs - 1) == 0 {
                solo |= 0x1ff << (9 * r);
            }
            r += 1;
        }
        t[s] = expand[k] as u64 | (solo as u64) << 32;
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

const fn ones_table() -> [u8; 512] {
    let mut t = [0u8; 512];
    let mut v = 0;
    while v < 512 {
        t[v] = (v as u32).count_ones() as u8;
        v += 1;
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

const fn lock_table() -> [u32; 512] {
    let mut t = [0u32; 512];
    let mut cols = 0;
    while cols < 512 {
        let mut k = 0;
        while k < 3 {
            let triple = (cols >> (3 * k)) & 7;
            if triple != 0 && triple & (triple - 1) == 0 {
                t[cols] |= COLUMN * ((triple as u32) << (3 * k));
            }
            k += 1;
        }
        cols += 1;
    }
    t
}

const fn pin_table() -> [u32; 512] {
    let mut t = [0u32; 512];
    let mut only = 0;
    while only < 512 {
        let mut keep = 0u32;
        let mut k = 0;
        while k < 3 {
            let triple = (only >> (3 * k)) & 7;
            let allowed = if triple == 0 { 7 } else { triple as u32 };
            keep |= COLUMN * (allowed << (3 * k));
            k += 1;
        }
        t[only] = keep;
        only += 1;
    }
    t
}

/// Candidate state, copied at each branch (58 words, no heap).
#[derive(Clone, Copy)]
struct Board {
    /// `cand[d * 3 + b]`: where digit `d` may still go in band `b`.
    cand: [u32; 27],
    /// `cand` as last processed; a mask is reprocessed only when it differs.
    seen: [u32; 27],
    /// Per band: cells not yet fixed.
    unsolved: [u32; 3],
    /// Bit `d`: a mask of digit `d` changed since its columns were last checked.
    recheck: u32,
}

/// Marker for a contradiction (a dead end in the search, or inconsistent givens).
struct Dead;

/// Bit-sliced candidate counts of the cells of band `b`: cells with at least one, two
/// and three candidates.
#[inline(always)]
fn count_band(cand: &[u32; 27], b: usize) -> (u32, u32, u32) {
    let (mut one, mut two, mut three) = (0u32, 0u32, 0u32);
    for d in 0..9 {
        let m = cand[d * 3 + b];
        three |= two & m;
        two |= one & m;
        one |= m;
    }
    (one, two, three)
}

macro_rules! each_digit {
    ($self:ident, $back:ident, $b:literal) => {
        $self.update::<0, $b>(&mut $back)?;
        $self.update::<1, $b>(&mut $back)?;
        $self.update::<2, $b>(&mut $back)?;
        $self.update::<3, $b>(&mut $back)?;
        $self.update::<4, $b>(&mut $back)?;
        $self.update::<5, $b>(&mut $back)?;
        $self.update::<6, $b>(&mut $back)?;
        $self.update::<7, $b>(&mut $back)?;
        $self.update::<8, $b>(&mut $back)?;
    };
}

impl Board {
    fn new() -> Board {
        Board {
            cand: [BAND; 27],
            seen: [u32::MAX; 27],
            unsolved: [BAND; 3],
            recheck: 0x1ff,
        }
    }

    /// Puts digit `d` on cell `c` of band `b`: the cell leaves the other digits, and the
    /// digit leaves the cell's row, box and column. The rest follows from propagation.
    #[inline]
    fn place(&mut self, d: usize, b: usize, c: u32) -> Result<(), Dead> {
        let bit = 1u32 << c;
        if self.cand[d * 3 + b] & bit == 0 {
            return Err(Dead);
        }
        for o in 0..9 {
            self.cand[o * 3 + b] &= !bit;
        }
        let column = COLUMN << (c % 9);
        for ob in 0..3 {
            self.cand[d * 3 + ob] &= !column;
        }
        self.cand[d * 3 + b] |= bit;
        self.cand[d * 3 + b] &= !PEERS[c as usize];
        self.unsolved[b] &= !bit;
        Ok(())
    }

    /// Branch step: puts candidate `d` on open cell `c` of band `b`, whose other
    /// remaining candidates are the digits of `others`.
    #[inline]
    fn assign(&mut self, d: usize, b: usize, c: u32, others: u32) {
        let bit = 1u32 << c;
        let mut o = others;
        while o != 0 {
            self.cand[o.trailing_zeros() as usize * 3 + b] &= !bit;
            o &= o - 1;
        }
        let column = COLUMN << (c % 9);
        self.cand[d * 3 + (b + 1) % 3] &= !column;
        self.cand[d * 3 + (b + 2) % 3] &= !column;
        self.cand[d * 3 + b] &= !PEERS[c as usize];
        self.unsolved[b] &= !bit;
    }

    /// Processes the mask of digit `D` in band `B` if it changed: box/line reduction,
    /// column locks into the other bands, and cells fixed by a lone row.
    #[inline(always)]
    fn update<const D: usize, const B: usize>(&mut self, back: &mut bool) -> Result<(), Dead> {
        let i = D * 3 + B;
        let m = self.cand[i];
        if m == self.seen[i] {
            return Ok(());
        }
        let segs = SHRINK[(m & 0x1ff) as usize]
            | SHRINK[((m >> 9) & 0x1ff) as usize] << 3
            | SHRINK[(m >> 18) as usize] << 6;
        let reduce = REDUCE[segs as usize];
        let m = m & reduce as u32;
        if m == 0 {
            return Err(Dead);
        }
        self.cand[i] = m;
        self.seen[i] = m;
        self.recheck |= 1 << D;
        let lock = LOCK[((m | m >> 9 | m >> 18) & 0x1ff) as usize];
        // `back`: a mask this pass has already gone by changed (passes go band by band,
        // digit by digit), so another pass is needed.
        let mut ob = 0;
        while ob < 3 {
            if ob != B {
                let old = self.cand[D * 3 + ob];
                self.cand[D * 3 + ob] = old & !lock;
                if ob < B {
                    *back |= old & lock != 0;
                }
            }
            ob += 1;
        }
        // A row with one segment, in a box with one column, is one cell.
        let fixed = m & lock & (reduce >> 32) as u32 & self.unsolved[B];
        if fixed != 0 {
            self.unsolved[B] &= !fixed;
            let mut o = 0;
            while o < 9 {
                if o != D {
                    let old = self.cand[o * 3 + B];
                    self.cand[o * 3 + B] = old & !fixed;
                    if o < D {
                        *back |= old & fixed != 0;
                    }
                }
                o += 1;
            }
        }
        Ok(())
    }

    /// Updates every changed mask until none changes.
    fn settle(&mut self) -> Result<(), Dead> {
        loop {
            let mut changed = false;
            each_digit!(self, changed, 0);
            each_digit!(self, changed, 1);
            each_digit!(self, changed, 2);
            // Masks changed after their turn need another pass; later ones were seen.
            if !changed {
                return Ok(());
            }
        }
    }

    /// Fixes every cell with one candidate left; false if there was none, and then
    /// `pairs` holds each band's open cells with exactly two candidates.
    fn naked_singles(&mut self, pairs: &mut [u32; 3]) -> Result<bool, Dead> {
        let mut any = false;
        for (b, pairs) in pairs.iter_mut().enumerate() {
            let (one, two, three) = count_band(&self.cand, b);
            if one != BAND {
                return Err(Dead);
            }
            *pairs = two & !three & self.unsolved[b];
            let mut singles = one & !two & self.unsolved[b];
            while singles != 0 {
                let c = singles.trailing_zeros();
                singles &= singles - 1;
                let d = (0..9)
                    .find(|&d| self.cand[d * 3 + b] & (1 << c) != 0)
                    .ok_or(Dead)?;
                self.cand[d * 3 + b] &= !PEERS[c as usize];
                any = true;
            }
        }
        Ok(any)
    }

    /// Pins digits whose column is open in one band only; false if nothing changed.
    fn column_singles(&mut self) -> Result<bool, Dead> {
        let mut any = false;
        let mut digits = self.recheck;
        self.recheck = 0;
        while digits != 0 {
            let d = digits.trailing_zeros() as usize;
            digits &= digits - 1;
            let m = [self.cand[d * 3], self.cand[d * 3 + 1], self.cand[d * 3 + 2]];
            let cols = m.map(|m| (m | m >> 9 | m >> 18) & 0x1ff);
            if cols[0] | cols[1] | cols[2] != 0x1ff {
                return Err(Dead);
            }
            for b in 0..3 {
                let only = cols[b] & !cols[(b + 1) % 3] & !cols[(b + 2) % 3];
                let pinned = m[b] & PIN[only as usize];
                if pinned != m[b] {
                    self.cand[d * 3 + b] = pinned;
                    any = true;
                }
            }
        }
        Ok(any)
    }

    /// Applies all deductions until nothing changes; returns the bivalue cells of each
    /// band (all zero once solved).
    fn propagate(&mut self) -> Result<[u32; 3], Dead> {
        let mut pairs = [0; 3];
        loop {
            self.settle()?;
            if self.is_solved() {
                return Ok([0; 3]);
            }
            if !self.naked_singles(&mut pairs)? && !self.column_singles()? {
                return Ok(pairs);
            }
        }
    }

    fn is_solved(&self) -> bool {
        self.unsolved[0] | self.unsolved[1] | self.unsolved[2] == 0
    }

    /// The cell to branch on: (band, cell bit index, candidate digits as a 9-bit mask).
    /// A bivalue cell of the band with the most of them, in its row with the most of them
    /// (a cheap proxy for where the two branches will propagate furthest; it cuts the
    /// node count by about a quarter on hard sets), else a cell with the fewest
    /// candidates. `pairs`: each band's open bivalue cells.
    fn pick(&self, pairs: [u32; 3]) -> (usize, u32, u32) {
        // Bivalue cells per row (table look-ups: no popcount instruction on baseline x86-64).
        let count =
            pairs.map(|p| [0, 9, 18].map(|shift| u32::from(ONES[((p >> shift) & 0x1ff) as usize])));
        let mut best = (0u32, 0usize);
        for (b, rows) in count.iter().enumerate() {
            let n = rows[0] + rows[1] + rows[2];
            if n > best.0 {
                best = (n, b);
            }
        }
        if best.0 != 0 {
            let b = best.1;
            let rows = count[b];
            let mut r = 0;
            if rows[1] > rows[r] {
                r = 1;
            }
            if rows[2] > rows[r] {
                r = 2;
            }
            let c = (pairs[b] >> (9 * r)).trailing_zeros() + 9 * r as u32;
            return (b, c, self.digits_at(b, c));
        }
        let mut best = (0usize, 0u32, 0x1ffu32);
        for b in 0..3 {
            let mut open = self.unsolved[b];
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
    let Ok(pairs) = board.propagate() else {
        return;
    };
    if board.is_solved() {
        found.solutions += 1;
        if found.first.is_none() {
            found.first = Some(board.values());
        }
        return;
    }
    let (b, c, mut digits) = board.pick(pairs);
    while digits != 0 {
        let d = digits.trailing_zeros() as usize;
        digits &= digits - 1;
        if digits == 0 {
            // Last alternative: no need to keep the parent state.
            board.assign(d, b, c, 0);
            search(board, limit, found);
            return;
        }
        let mut child = *board;
        child.assign(d, b, c, digits);
        search(&mut child, limit, found);
        if found.solutions >= limit {
            return;
        }
        // Every solution with `d` here has been counted: rule it out for the others.
        board.cand[d * 3 + b] &= !(1 << c);
    }
}
