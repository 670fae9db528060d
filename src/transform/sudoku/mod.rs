//! Sudoku grids and the exact solver behind the `sudoku_solve` transform.
//!
//! [`Grid`] holds a puzzle of box size 2..=5; [`solve`] counts solutions up to a limit
//! and [`classify`] turns that into a [`Status`]. 9×9 puzzles take a bit-parallel fast
//! path (`fast9`), every other size a per-cell candidate-mask engine. [`generate`] makes
//! reproducible puzzles with a unique solution for tests and benchmarks.
//!
//! `engine: sql` and `engine: sql_join` solve inside the database instead ([`sql`], [`join`],
//! run as an [`crate::transform::InDatabase`] transform by [`SolveInDatabase`]).

mod fast9;
mod generator;
mod grid;
mod in_database;
mod job;
pub mod join;
mod solver;
pub mod sql;
mod summary;

pub use generator::generate;
pub use grid::{symbol, Conflict, Grid, GridError, Unit, MAX_BOX, MIN_BOX};
pub use in_database::{SolveInDatabase, IN_DATABASE};
pub use job::SudokuTransform;
pub use solver::{classify, solve, SolveOutcome, Status};
pub use summary::sentence;
