//! Suite `pivot`: what a run produces, cell by cell, on every reachable backend — the
//! conformance cases, typed columns, merges and delta merges, two databases, the two
//! strategies, quoting, the standalone scripts, and the Sudoku/grid jobs.
//!
//! Where a new test goes: into the suite of its concern, as `tests/<suite>/<file>.rs` with a
//! `mod` line here; it uses the support modules declared here (`crate::servers`, …), never its
//! own `#[path]` copy. Each binary links every driver, so a new binary costs a link on every
//! build: only a test that cannot share a process gets one (it sets environment variables or
//! the working directory, signals its own process, or uses process-wide state such as the
//! interrupt flag — see `interrupt.rs`). Tests of one binary run in parallel, across files too:
//! server table and database names carry a prefix of their file and `std::process::id()`.

#[path = "pivot/fixture.rs"]
mod fixture;
#[path = "support/merge_split_case.rs"]
mod merge_split_case;
#[path = "support/servers.rs"]
mod servers;

#[path = "pivot/charsets.rs"]
mod charsets;
#[path = "pivot/conflict_order.rs"]
mod conflict_order;
#[path = "pivot/conformance.rs"]
mod conformance;
#[path = "pivot/cross_database.rs"]
mod cross_database;
#[path = "pivot/entity_key_twins.rs"]
mod entity_key_twins;
#[path = "pivot/merge.rs"]
mod merge;
#[path = "pivot/merge_definition.rs"]
mod merge_definition;
#[path = "pivot/merge_delta.rs"]
mod merge_delta;
#[path = "pivot/merge_split.rs"]
mod merge_split;
#[path = "pivot/merge_twins.rs"]
mod merge_twins;
#[path = "pivot/merge_user_columns.rs"]
mod merge_user_columns;
#[path = "pivot/pushdown_proof.rs"]
mod pushdown_proof;
#[path = "pivot/quoting.rs"]
mod quoting;
#[path = "pivot/replace_dependents.rs"]
mod replace_dependents;
#[path = "pivot/script_live.rs"]
mod script_live;
#[path = "pivot/server_settings.rs"]
mod server_settings;
#[path = "pivot/stored_order.rs"]
mod stored_order;
#[path = "pivot/strategies_sqlite.rs"]
mod strategies_sqlite;
#[path = "pivot/stream_verify.rs"]
mod stream_verify;
#[path = "pivot/sudoku_job.rs"]
mod sudoku_job;
#[path = "pivot/sudoku_join.rs"]
mod sudoku_join;
#[path = "pivot/typed_conformance.rs"]
mod typed_conformance;
#[path = "pivot/typed_infer_modes.rs"]
mod typed_infer_modes;
#[path = "pivot/typed_merge.rs"]
mod typed_merge;
#[path = "pivot/value_types.rs"]
mod value_types;
