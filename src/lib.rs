//! eavpivot: turn entity–attribute–value tables into wide tables.
//!
//! Data flows one way: job file ([`config`]) → [`plan`] (discover, name, type) → SQL text per
//! [`dialect`] → [`execute`] over a [`backend`] (pushdown or streaming, with [`transform`]s)
//! → verify → [`report`].
//!
//! # Layers
//!
//! Imports go one way. A module may use (`crate::…`) only modules on its own line or the
//! lines above it; `tests/golden/layers.rs` reads this list and fails on any import upwards.
//!
//! 1. `value` `display` `examples` `secrets` `table_ref` `terms` — plain values and text: the
//!    job's choices and table names, passwords hidden in connection strings
//! 2. `config` — the job file, read and validated
//! 3. `error` `interrupt` — the crate's error; process-wide Ctrl-C/SIGTERM state
//! 4. `dialect` — SQL text per database; never a connection
//! 5. `plan` — discover, name and type the columns (names through the dialect's limits)
//! 6. `transform` — built-in transforms over the pivoted rows
//! 7. `report` — what a run did (data execute fills) and its formatting; it runs nothing
//! 8. `backend` — connections that run SQL text; never build it
//! 9. `execute` — runs a plan's SQL over a backend, verifies, fills the report
//! 10. `cli` — commands: parse, call the library, print
//!
//! `tests/golden/layers.rs` names the imports upwards still known (each with the issue item that
//! removes it) and fails when one of them is gone, so that list only shrinks.
#![forbid(unsafe_code)]

pub mod backend;
pub mod cli;
pub mod config;
pub mod dialect;
pub mod display;
pub mod error;
pub mod examples;
pub mod execute;
pub mod interrupt;
pub mod plan;
pub mod report;
pub mod secrets;
pub mod table_ref;
pub mod terms;
pub mod transform;
pub mod value;

pub use error::{Error, Result};
