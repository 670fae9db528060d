//! Connecting test code to a database server, or skipping with the reason printed when it is
//! unreachable (a failure instead under `EAVPIVOT_REQUIRE_SERVERS=1`). Shared by the test
//! binaries that need a live connection of their own (`#[path = "support/servers.rs"] mod servers;`).

use eavpivot::backend::{self, Backend, ConnectOptions, ConnectionSpec};

/// A connection to `url`, or `None` (skipped, reason printed) when it is unreachable and
/// servers are not required.
pub fn server(what: &str, url: &str) -> Option<(tokio::runtime::Runtime, Box<dyn Backend>)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let spec = ConnectionSpec::parse(Some(url)).expect("connection string");
    let options = ConnectOptions {
        connect_timeout: std::time::Duration::from_secs(5),
        password: None,
    };
    match rt.block_on(backend::connect(&spec, &options)) {
        Ok(b) => Some((rt, b)),
        Err(e) if std::env::var("EAVPIVOT_REQUIRE_SERVERS").as_deref() == Ok("1") => {
            panic!(
                "{what} at {} is required (EAVPIVOT_REQUIRE_SERVERS=1) but unreachable: {e}",
                spec.display()
            )
        }
        Err(e) => {
            eprintln!("skipped: {what} at {} is unreachable: {e}", spec.display());
            None
        }
    }
}
