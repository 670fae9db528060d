//! Suite `mssql`: SQL Server itself (Babelfish in CI; any server at `EAVPIVOT_MSSQL_URL`) —
//! every bundled job end to end, merges, and the fault cases. Skipped (printed) without the
//! URL, failed under `EAVPIVOT_REQUIRE_SERVERS=1`. Apart from `pivot` so that its slow server
//! can be run alone: `cargo test --test mssql`.
//!
//! Where a new test goes: into the suite of its concern, as `tests/<suite>/<file>.rs` with a
//! `mod` line here; it uses the support modules declared here (`crate::servers`, …), never its
//! own `#[path]` copy. Each binary links every driver, so a new binary costs a link on every
//! build: only a test that cannot share a process gets one (it sets environment variables or
//! the working directory, signals its own process, or uses process-wide state such as the
//! interrupt flag — see `interrupt.rs`). Tests of one binary run in parallel, across files too:
//! server table and database names carry a prefix of their file and `std::process::id()`.

#[path = "support/kv_fixture.rs"]
mod kv_fixture;
#[path = "support/merge_split_case.rs"]
mod merge_split_case;
#[path = "support/servers.rs"]
mod servers;

#[path = "mssql/mssql_faults.rs"]
mod mssql_faults;
#[path = "mssql/mssql_live.rs"]
mod mssql_live;
#[path = "mssql/mssql_merge.rs"]
mod mssql_merge;
