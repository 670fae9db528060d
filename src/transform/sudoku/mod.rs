//! Sudoku grids and the exact solver behind the `sudoku_solve` transform.
