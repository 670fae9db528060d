//! The [`Grid`] value type: a square Sudoku of box size 2..=5 (4×4 up to 25×25).
//!
//! A grid only promises that its shape is right and that every cell holds a blank or a
//! value in range; duplicate givens are legal here so that callers can load what a user
//! typed and then ask [`Grid::first_conflict`] what is wrong with it. The solver relies on
//! that split: [`crate::transform::sudoku::classify`] reports duplicates as `invalid`
//! without searching.

use std::fmt;

/// Smallest and largest supported box size (4×4 and 25×25 grids).
pub const MIN_BOX: usize = 2;
/// Largest supported box size; 25 values still fit the solver's `u32` candidate masks.
pub const MAX_BOX: usize = 5;

/// A Sudoku grid stored row by row; `0` is a blank, `1..=side` a value.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Grid {
    box_size: usize,
    cells: Vec<u8>,
}

/// Why a grid could not be built. Positions in messages are 1-based, as a person counts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GridError {
    #[error("box size {0} is not supported (expected 2 to 5)")]
    BoxSize(usize),
    #[error("grid of box size {box_size} needs {expected} cells, got {got}")]
    CellCount {
        box_size: usize,
        expected: usize,
        got: usize,
    },
    #[error("puzzle has {0} cells; expected 16, 81, 256 or 625")]
    LineLength(usize),
    #[error("value {value} at row {row}, column {col} is out of range 1..={max}")]
    ValueOutOfRange {
        row: usize,
        col: usize,
        value: u8,
        max: usize,
    },
    #[error("symbol {ch:?} at row {row}, column {col} is not a value of a {side}×{side} grid")]
    SymbolOutOfRange {
        row: usize,
        col: usize,
        ch: char,
        side: usize,
    },
    #[error("unexpected character {ch:?} at row {row}, column {col}")]
    BadSymbol { row: usize, col: usize, ch: char },
}

/// The kind of unit in which a duplicate was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Row,
    Column,
    Box,
}

/// Two givens with the same value in one unit. Rows, columns and boxes are 0-based in
/// the fields and 1-based in the `Display` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    pub unit: Unit,
    /// Index of the row, column or box (boxes numbered row-major).
    pub index: usize,
    pub value: u8,
    pub first: (usize, usize),
    pub second: (usize, usize),
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.unit {
            Unit::Row => "row",
            Unit::Column => "column",
            Unit::Box => "box",
        };
        write!(
            f,
            "value {} appears twice in {} {} (r{}c{} and r{}c{})",
            symbol(self.value),
            unit,
            self.index + 1,
            self.first.0 + 1,
            self.first.1 + 1,
            self.second.0 + 1,
            self.second.1 + 1
        )
    }
}

/// Text symbol for a value: `1`-`9`, then `A` for 10 up to `P` for 25; `.` for blank.
pub fn symbol(v: u8) -> char {
    match v {
        0 => '.',
        1..=9 => char::from(b'0' + v),
        _ => char::from(b'A' + (v - 10)),
    }
}

/// [`symbol`] as bytes, indexed by value (0..=25): one table lookup per cell when a whole
/// line is written (the solver CLI writes one line per puzzle).
const SYMBOL_BYTES: &[u8; 26] = b".123456789ABCDEFGHIJKLMNOP";

/// [`value_of`] for every byte, [`NOT_A_SYMBOL`] where a byte is none: parsing a line is
/// one lookup per cell.
const VALUE_OF_BYTE: [u8; 256] = {
    let mut table = [NOT_A_SYMBOL; 256];
    let mut b = 0;
    while b < 256 {
        if let Some(v) = value_of(b as u8 as char) {
            table[b] = v;
        }
        b += 1;
    }
    table
};
const NOT_A_SYMBOL: u8 = u8::MAX;

/// Inverse of [`symbol`] (letters case-insensitive); `None` for anything else.
const fn value_of(ch: char) -> Option<u8> {
    match ch {
        '.' | '0' => Some(0),
        '1'..='9' => Some(ch as u8 - b'0'),
        'A'..='P' => Some(ch as u8 - b'A' + 10),
        'a'..='p' => Some(ch as u8 - b'a' + 10),
        _ => None,
    }
}

/// The values of a line's characters for a grid of `side` values, checking each symbol.
fn cells_of(chars: impl Iterator<Item = char>, side: usize) -> Result<Vec<u8>, GridError> {
    // 1-based row and column of the i-th character, worked out only for an error.
    let at = |i: usize| (i / side + 1, i % side + 1);
    let mut cells = Vec::with_capacity(side * side);
    for (i, ch) in chars.enumerate() {
        let Some(value) = value_of(ch) else {
            let (row, col) = at(i);
            return Err(GridError::BadSymbol { row, col, ch });
        };
        if usize::from(value) > side {
            let (row, col) = at(i);
            return Err(GridError::SymbolOutOfRange { row, col, ch, side });
        }
        cells.push(value);
    }
    Ok(cells)
}

impl Grid {
    /// Builds a grid, checking the box size, the cell count and that every value is in
    /// `0..=side`. Duplicates are not checked here (see [`Grid::first_conflict`]).
    pub fn new(box_size: usize, cells: Vec<u8>) -> Result<Grid, GridError> {
        if !(MIN_BOX..=MAX_BOX).contains(&box_size) {
            return Err(GridError::BoxSize(box_size));
        }
        let side = box_size * box_size;
        if cells.len() != side * side {
            return Err(GridError::CellCount {
                box_size,
                expected: side * side,
                got: cells.len(),
            });
        }
        if let Some(i) = cells.iter().position(|&v| usize::from(v) > side) {
            return Err(GridError::ValueOutOfRange {
                row: i / side + 1,
                col: i % side + 1,
                value: cells[i],
                max: side,
            });
        }
        Ok(Grid { box_size, cells })
    }

    /// A grid the solver filled: its values come from candidate masks of the right size,
    /// so [`Grid::new`]'s checks would only spend time (they still run in debug builds).
    pub(super) fn solved(box_size: usize, cells: Vec<u8>) -> Grid {
        debug_assert!(Grid::new(box_size, cells.clone()).is_ok());
        Grid { box_size, cells }
    }

    /// An all-blank grid.
    pub fn empty(box_size: usize) -> Result<Grid, GridError> {
        let side = box_size * box_size;
        Grid::new(box_size, vec![0; side * side])
    }

    /// Parses one line: its length (after trimming) picks the size, `.` or `0` is a blank.
    /// A line annotated as tdoku's test sets are (`puzzle:solutions[:solution]`, as in
    /// `solution_counts.txt`) is its puzzle: no cell symbol is a `:`.
    pub fn parse(line: &str) -> Result<Grid, GridError> {
        let line = line.trim();
        let line = line
            .split_once(':')
            .map_or(line, |(puzzle, _)| puzzle.trim_end());
        // Every well-formed puzzle is ASCII, where bytes are characters.
        let len = if line.is_ascii() {
            line.len()
        } else {
            line.chars().count()
        };
        let box_size = match len {
            16 => 2,
            81 => 3,
            256 => 4,
            625 => 5,
            _ => return Err(GridError::LineLength(len)),
        };
        let side = box_size * box_size;
        let table: Option<Vec<u8>> = match line.is_ascii() {
            true => line
                .bytes()
                .map(|b| VALUE_OF_BYTE[usize::from(b)])
                .map(|v| (usize::from(v) <= side).then_some(v))
                .collect(),
            false => None,
        };
        // A bad symbol (or a non-ASCII line) goes the slow way, which names the cell at fault.
        let cells = match table {
            Some(cells) => cells,
            None => cells_of(line.chars(), side)?,
        };
        // Shape and range were checked above: what `Grid::new` would check again.
        Ok(Grid { box_size, cells })
    }

    pub fn box_size(&self) -> usize {
        self.box_size
    }

    /// Number of rows, columns, boxes and values (`box_size²`).
    pub fn side(&self) -> usize {
        self.box_size * self.box_size
    }

    /// Value at a 0-based position (0 = blank). Panics if the position is off the grid.
    pub fn get(&self, row: usize, col: usize) -> u8 {
        self.cells[self.index(row, col)]
    }

    /// Sets a 0-based position; panics on a position off the grid or a value above `side`,
    /// both programming errors (user input goes through [`Grid::new`] or [`Grid::parse`]).
    pub fn set(&mut self, row: usize, col: usize, v: u8) {
        assert!(usize::from(v) <= self.side(), "value {v} out of range");
        let i = self.index(row, col);
        self.cells[i] = v;
    }

    pub fn cells(&self) -> &[u8] {
        &self.cells
    }

    /// Number of non-blank cells.
    pub fn givens(&self) -> usize {
        self.cells.iter().filter(|&&v| v != 0).count()
    }

    fn index(&self, row: usize, col: usize) -> usize {
        let side = self.side();
        assert!(row < side && col < side, "cell ({row}, {col}) off the grid");
        row * side + col
    }

    /// The one-line form accepted by [`Grid::parse`], `.` for blanks.
    pub fn to_line(&self) -> String {
        let mut line = String::with_capacity(self.cells.len());
        self.push_line(&mut line);
        line
    }

    /// Appends [`Grid::to_line`]'s text to `out` (no allocation of its own).
    pub fn push_line(&self, out: &mut String) {
        let mut line = [0u8; 625];
        let n = self.cells.len().min(line.len());
        for (byte, &v) in line.iter_mut().zip(&self.cells) {
            *byte = SYMBOL_BYTES.get(usize::from(v)).copied().unwrap_or(b'?');
        }
        // Every byte comes from SYMBOL_BYTES (or is `?`): ASCII, so always valid UTF-8.
        if let Ok(text) = std::str::from_utf8(&line[..n]) {
            out.push_str(text);
        }
    }

    /// A multi-line picture with `+---+` separators between boxes, for people.
    pub fn render_boxes(&self) -> String {
        let (b, side) = (self.box_size, self.side());
        let segment = "-".repeat(2 * b + 1);
        let rule = format!("+{}\n", vec![segment; b].join("+") + "+");
        let mut out = String::with_capacity((side + b + 1) * rule.len());
        for row in 0..side {
            if row % b == 0 {
                out.push_str(&rule);
            }
            for col in 0..side {
                if col % b == 0 {
                    out.push_str("| ");
                }
                out.push(symbol(self.get(row, col)));
                out.push(' ');
            }
            out.push_str("|\n");
        }
        out.push_str(&rule);
        out
    }

    /// The first pair of equal givens sharing a row, column or box (rows checked first,
    /// then columns, then boxes), or `None` if the givens are consistent.
    pub fn first_conflict(&self) -> Option<Conflict> {
        let side = self.side();
        let units = [Unit::Row, Unit::Column, Unit::Box];
        for unit in units {
            for index in 0..side {
                // seen[v] remembers where value v was first met in this unit.
                let mut seen: [Option<(usize, usize)>; 26] = [None; 26];
                for k in 0..side {
                    let (r, c) = self.unit_cell(unit, index, k);
                    let v = self.get(r, c);
                    if v == 0 {
                        continue;
                    }
                    match seen[usize::from(v)] {
                        Some(first) => {
                            return Some(Conflict {
                                unit,
                                index,
                                value: v,
                                first,
                                second: (r, c),
                            })
                        }
                        None => seen[usize::from(v)] = Some((r, c)),
                    }
                }
            }
        }
        None
    }

    /// Position of the `k`-th cell of a unit.
    fn unit_cell(&self, unit: Unit, index: usize, k: usize) -> (usize, usize) {
        let b = self.box_size;
        match unit {
            Unit::Row => (index, k),
            Unit::Column => (k, index),
            Unit::Box => ((index / b) * b + k / b, (index % b) * b + k % b),
        }
    }

    /// True if `self` is a full grid that obeys every rule and keeps every given of
    /// `givens` (which must have the same box size).
    pub fn is_complete_solution_of(&self, givens: &Grid) -> bool {
        self.box_size == givens.box_size
            && self.cells.iter().all(|&v| v != 0)
            && self.first_conflict().is_none()
            && self
                .cells
                .iter()
                .zip(&givens.cells)
                .all(|(&s, &g)| g == 0 || g == s)
    }
}

impl fmt::Debug for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Grid({})", self.to_line())
    }
}

impl fmt::Display for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_boxes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUZZLE: &str =
        "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";

    #[test]
    fn parse_round_trips_and_accepts_zero_blanks() {
        let g = Grid::parse(&format!("  {PUZZLE}\n")).unwrap();
        assert_eq!(g.box_size(), 3);
        assert_eq!(g.side(), 9);
        assert_eq!(g.get(0, 0), 5);
        assert_eq!(g.get(0, 2), 0);
        assert_eq!(g.to_line(), PUZZLE);
        assert_eq!(Grid::parse(&PUZZLE.replace('.', "0")).unwrap(), g);
        assert_eq!(g.givens(), 30);
        // tdoku's annotated lines: the puzzle, then the solution count and the solution.
        assert_eq!(
            Grid::parse(&format!("{PUZZLE}:1:{}", "1".repeat(81))).unwrap(),
            g
        );
        assert_eq!(Grid::parse(&format!("{PUZZLE}:847")).unwrap(), g);
        assert_eq!(Grid::parse(":1"), Err(GridError::LineLength(0)));
    }

    #[test]
    fn parse_sizes_and_letter_symbols() {
        assert_eq!(Grid::parse("1234............").unwrap().box_size(), 2);
        let mut line = ".".repeat(256);
        line.replace_range(0..1, "G");
        let g = Grid::parse(&line).unwrap();
        assert_eq!((g.side(), g.get(0, 0)), (16, 16));
        assert_eq!(Grid::parse(&line.to_lowercase()).unwrap(), g);
        let mut big = ".".repeat(625);
        big.replace_range(624..625, "P");
        assert_eq!(Grid::parse(&big).unwrap().get(24, 24), 25);
        assert_eq!(Grid::parse(&big).unwrap().to_line(), big);
    }

    #[test]
    fn parse_errors_name_the_fault() {
        assert_eq!(Grid::parse("123"), Err(GridError::LineLength(3)));
        let bad = format!("{}x{}", &PUZZLE[..10], &PUZZLE[11..]);
        let err = Grid::parse(&bad).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unexpected character 'x' at row 2, column 2"
        );
        let err = Grid::parse("5...............").unwrap_err();
        assert_eq!(
            err.to_string(),
            "symbol '5' at row 1, column 1 is not a value of a 4×4 grid"
        );
    }

    #[test]
    fn new_checks_shape_and_range() {
        assert_eq!(Grid::new(1, vec![0]), Err(GridError::BoxSize(1)));
        assert_eq!(Grid::empty(6), Err(GridError::BoxSize(6)));
        assert!(matches!(
            Grid::new(2, vec![0; 15]),
            Err(GridError::CellCount { got: 15, .. })
        ));
        let mut cells = vec![0; 81];
        cells[80] = 10;
        let err = Grid::new(3, cells).unwrap_err();
        assert!(err.to_string().contains("row 9, column 9"), "{err}");
    }

    #[test]
    fn render_boxes_draws_separators() {
        let g = Grid::parse("1234341221434321").unwrap();
        let expected = "\
+-----+-----+
| 1 2 | 3 4 |
| 3 4 | 1 2 |
+-----+-----+
| 2 1 | 4 3 |
| 4 3 | 2 1 |
+-----+-----+
";
        assert_eq!(g.render_boxes(), expected);
    }

    #[test]
    fn conflicts_in_each_unit_are_described() {
        let row = Grid::parse("1..1............").unwrap();
        let c = row.first_conflict().unwrap();
        assert_eq!((c.unit, c.index, c.value), (Unit::Row, 0, 1));
        assert_eq!(
            c.to_string(),
            "value 1 appears twice in row 1 (r1c1 and r1c4)"
        );
        let col = Grid::parse("2.......2.......").unwrap();
        assert_eq!(col.first_conflict().unwrap().unit, Unit::Column);
        let bx = Grid::parse("3....3..........").unwrap();
        let c = bx.first_conflict().unwrap();
        assert_eq!((c.unit, c.index, c.second), (Unit::Box, 0, (1, 1)));
        assert!(Grid::parse(PUZZLE).unwrap().first_conflict().is_none());
    }

    #[test]
    fn complete_solution_check() {
        let solved = Grid::parse("1234341221434321").unwrap();
        let givens = Grid::parse("1..........3....").unwrap();
        assert!(solved.is_complete_solution_of(&givens));
        let other = Grid::parse("2..........3....").unwrap();
        assert!(!solved.is_complete_solution_of(&other));
        let mut broken = solved.clone();
        broken.set(0, 0, 2);
        assert!(!broken.is_complete_solution_of(&givens));
        assert!(!givens.is_complete_solution_of(&givens));
    }
}
