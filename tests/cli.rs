//! Suite `cli`: the commands as a user meets them — exit codes, one-line errors, job-file
//! keys, `inspect`, the installed binary on its own, conflicts export — and connecting:
//! timeouts, TLS, passwords never shown. SQLite always; the servers where reachable.
//!
//! Where a new test goes: into the suite of its concern, as `tests/<suite>/<file>.rs` with a
//! `mod` line here; it uses the support modules declared here (`crate::servers`, …), never its
//! own `#[path]` copy. Each binary links every driver, so a new binary costs a link on every
//! build: only a test that cannot share a process gets one (it sets environment variables or
//! the working directory, signals its own process, or uses process-wide state such as the
//! interrupt flag — see `interrupt.rs`). Tests of one binary run in parallel, across files too:
//! server table and database names carry a prefix of their file and `std::process::id()`.

#[path = "support/connect_job.rs"]
mod connect_job;
#[path = "support/kv_fixture.rs"]
mod kv_fixture;
#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/servers.rs"]
mod servers;

#[path = "cli/cli_servers.rs"]
mod cli_servers;
#[path = "cli/cli_sqlite.rs"]
mod cli_sqlite;
#[path = "cli/conflicts_export.rs"]
mod conflicts_export;
#[path = "cli/connect_redaction.rs"]
mod connect_redaction;
#[path = "cli/connect_tcp.rs"]
mod connect_tcp;
#[path = "cli/connect_timeout.rs"]
mod connect_timeout;
#[path = "cli/connect_tls.rs"]
mod connect_tls;
#[path = "cli/defects_bytes.rs"]
mod defects_bytes;
#[path = "cli/defects_errors.rs"]
mod defects_errors;
#[path = "cli/defects_long_names.rs"]
mod defects_long_names;
#[path = "cli/inspect.rs"]
mod inspect;
#[path = "cli/link_probe.rs"]
mod link_probe;
#[path = "cli/locks_config.rs"]
mod locks_config;
#[path = "cli/quick_start.rs"]
mod quick_start;
#[path = "cli/schemas.rs"]
mod schemas;
#[path = "cli/secrets.rs"]
mod secrets;
#[path = "cli/sudoku_file.rs"]
mod sudoku_file;
#[path = "cli/yaml_scalars.rs"]
mod yaml_scalars;
