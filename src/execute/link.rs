//! The link to the server, measured before planning so that `strategy: auto` can weigh the
//! stream's traffic against it (issue 20, item 2; the plan decides, see
//! [`crate::plan::REMOTE_PUSHDOWN_COLUMNS`]): the round trip of the dialect's one-row session-id
//! query, the fastest of a few. An embedded database has no such query and no link.

use std::time::{Duration, Instant};

use crate::backend::Backend;
use crate::plan::Link;

/// Round trips timed; the fastest counts (the first may pay for a cold statement cache, and
/// a busy machine only ever adds time).
const PROBES: usize = 3;

/// The measured link, or None where there is none to measure or a probe failed (then `auto`
/// decides as on a near link; the run itself reports any real connection problem).
pub(super) async fn measure(backend: &mut dyn Backend) -> Option<Link> {
    let sql = backend.dialect().session_id()?;
    let mut fastest = Duration::MAX;
    for _ in 0..PROBES {
        let started = Instant::now();
        backend.query(&sql).await.ok()?;
        fastest = fastest.min(started.elapsed());
    }
    Some(Link {
        round_trip: fastest,
    })
}
