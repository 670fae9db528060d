//! Suite `tds`: SQL Server over the real TDS protocol (tiberius) against the scripted TDS
//! peer in tests/common — the statements sent, in order, and what the user sees; the peer's
//! own self-test; `encrypt=strict` over TLS. No server involved.
//!
//! Where a new test goes: into the suite of its concern, as `tests/<suite>/<file>.rs` with a
//! `mod` line here; it uses the support modules declared here (`crate::servers`, …), never its
//! own `#[path]` copy. Each binary links every driver, so a new binary costs a link on every
//! build: only a test that cannot share a process gets one (it sets environment variables or
//! the working directory, signals its own process, or uses process-wide state such as the
//! interrupt flag — see `interrupt.rs`). Tests of one binary run in parallel, across files too:
//! server table and database names carry a prefix of their file and `std::process::id()`.

#[path = "common/tds_peer.rs"]
mod tds_peer;

// The eavpivot binary against the peer, by what it proves (one shared fixture).
#[path = "tds/bulk_load.rs"]
mod bulk_load;
#[path = "tds/connect_errors.rs"]
mod connect_errors;
#[path = "tds/fixture.rs"]
mod fixture;
#[path = "tds/pushdown.rs"]
mod pushdown;
#[path = "tds/two_databases.rs"]
mod two_databases;

#[path = "tds/connect_mssql_strict.rs"]
mod connect_mssql_strict;
#[path = "tds/tds_peer_selftest.rs"]
mod tds_peer_selftest;
#[path = "tds/typed_mssql_tds.rs"]
mod typed_mssql_tds;
