//! The link to the server, measured before planning so that `strategy: auto` can weigh the
//! stream's traffic against the pushdown's work (issue 20, item 2; the plan decides, see
//! [`crate::plan::remote`]): the round trip of the dialect's one-row session-id query, the
//! fastest of a few; and, only where it can turn the choice, the throughput of a reply of
//! known size (the dialect's filler query, [`crate::dialect::PivotCosts::filler`]). An
//! embedded database has no such query and no link.
//!
//! Every wait is bounded by what it asks for: one row for the round trip, a fixed number of
//! bytes for the throughput, and the larger reply only when the smaller one says it will
//! come within [`LARGE_PROBE_BUDGET`]. Each probe runs as any statement does (interrupt
//! cancels it on the server).

use std::time::{Duration, Instant};

use crate::backend::Backend;
use crate::config::Job;
use crate::dialect::PivotCosts;
use crate::plan::{Discovery, Link};

/// Round trips timed; the fastest counts (the first may pay for a cold statement cache, and
/// a busy machine only ever adds time).
const PROBES: usize = 3;
/// The throughput probe's two replies: their difference is timed, so the round trip and the
/// server's per-statement work cancel (and with them TCP's slow start on the first bytes).
/// 256 KiB apart: 21 ms at 100 Mbit/s, 2 ms at 1 Gbit/s.
const SMALL_PROBE_BYTES: usize = 32 * 1024;
const LARGE_PROBE_BYTES: usize = SMALL_PROBE_BYTES + 256 * 1024;
/// Where the two came less than [`SHORT_TRANSFER`] apart (a fast link), a few ms of
/// scheduling noise would be most of the difference and the throughput would read low
/// (164 Mbit/s through the 1 Gbit/s proxy under load): a third reply 2 MiB past the
/// smaller is timed instead (17 ms at 1 Gbit/s; within any `max_allowed_packet` default).
const LARGER_PROBE_BYTES: usize = SMALL_PROBE_BYTES + 2 * 1024 * 1024;
const SHORT_TRANSFER: Duration = Duration::from_millis(10);
/// The larger reply is asked for only when the smaller one says it would come within this;
/// on a slower link the smaller reply alone already tells the throughput well enough.
const LARGE_PROBE_BUDGET: Duration = Duration::from_secs(2);

/// The measured link, or None where there is none to measure or a probe failed (then `auto`
/// decides as on a near link; the run itself reports any real connection problem). The
/// throughput only where [`crate::plan::remote::throughput_matters`] for this job.
pub(super) async fn measure(
    backend: &mut dyn Backend,
    job: &Job,
    discovery: &Discovery,
) -> Option<Link> {
    let dialect = backend.dialect();
    let sql = dialect.session_id()?;
    let mut fastest = Duration::MAX;
    for _ in 0..PROBES {
        let started = Instant::now();
        backend.query(&sql).await.ok()?;
        fastest = fastest.min(started.elapsed());
    }
    let throughput = match dialect.pivot_costs() {
        Some(costs) if crate::plan::remote::throughput_matters(job, dialect, discovery) => {
            throughput(backend, &costs, fastest).await
        }
        _ => None,
    };
    Some(Link {
        round_trip: fastest,
        throughput,
    })
}

/// Bytes per second of a reply: the larger probe's extra bytes over its extra time, or on a
/// slow link the smaller probe's bytes over its time less the round trip. None when a probe
/// failed or the reply was not the size asked for (a server limit can turn it into NULL).
async fn throughput(backend: &mut dyn Backend, costs: &PivotCosts, rtt: Duration) -> Option<u64> {
    let small = timed_reply(backend, costs, SMALL_PROBE_BYTES).await?;
    if predicted_large(small, rtt) > LARGE_PROBE_BUDGET {
        return Some(bytes_per_second((SMALL_PROBE_BYTES, small), None, rtt));
    }
    let mut large = (
        LARGE_PROBE_BYTES,
        fastest_reply(backend, costs, LARGE_PROBE_BYTES).await?,
    );
    if large.1.saturating_sub(small) < SHORT_TRANSFER {
        large = (
            LARGER_PROBE_BYTES,
            fastest_reply(backend, costs, LARGER_PROBE_BYTES).await?,
        );
    }
    Some(bytes_per_second(
        (SMALL_PROBE_BYTES, small),
        Some(large),
        rtt,
    ))
}

/// The faster of two replies of `bytes` bytes.
async fn fastest_reply(
    backend: &mut dyn Backend,
    costs: &PivotCosts,
    bytes: usize,
) -> Option<Duration> {
    let first = timed_reply(backend, costs, bytes).await?;
    let second = timed_reply(backend, costs, bytes).await?;
    Some(first.min(second))
}

/// The time of one reply of exactly `bytes` bytes, or None.
async fn timed_reply(
    backend: &mut dyn Backend,
    costs: &PivotCosts,
    bytes: usize,
) -> Option<Duration> {
    let sql = costs.filler_query(bytes);
    let started = Instant::now();
    let rows = backend.query(&sql).await.ok()?;
    let elapsed = started.elapsed();
    let got = rows.first()?.first()?.text_bytes()?.len();
    (got == bytes).then_some(elapsed)
}

/// How long the larger reply would take at the rate the smaller one came.
fn predicted_large(small: Duration, rtt: Duration) -> Duration {
    let transfer = small.saturating_sub(rtt);
    rtt + transfer.mul_f64(LARGE_PROBE_BYTES as f64 / SMALL_PROBE_BYTES as f64)
}

/// The arithmetic of [`throughput`]: with both replies, their difference in bytes over their
/// difference in time; a difference the clock cannot see (loopback) or only the smaller
/// reply falls back to a reply's bytes over its time less the round trip, which
/// underestimates (the server's own work stays in): the stream then looks no faster than
/// it is. At least 1 µs of transfer, so the number stays finite.
fn bytes_per_second(
    (small_bytes, small): (usize, Duration),
    large: Option<(usize, Duration)>,
    rtt: Duration,
) -> u64 {
    const FLOOR: Duration = Duration::from_micros(1);
    let rate = |bytes: usize, time: Duration| (bytes as f64 / time.max(FLOOR).as_secs_f64()) as u64;
    match large {
        Some((bytes, large)) if large > small => rate(bytes - small_bytes, large - small),
        Some((bytes, large)) => rate(bytes, large.saturating_sub(rtt)),
        None => rate(small_bytes, small.saturating_sub(rtt)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: f64) -> Duration {
        Duration::from_secs_f64(x / 1e3)
    }

    fn small(x: f64) -> (usize, Duration) {
        (SMALL_PROBE_BYTES, ms(x))
    }

    fn large(x: f64) -> Option<(usize, Duration)> {
        Some((LARGE_PROBE_BYTES, ms(x)))
    }

    #[test]
    fn a_fast_link_is_timed_over_the_larger_reply() {
        // 1 Gbit/s: 2 MiB more in 16.8 ms more; the 256 KiB step alone (2.1 ms) is under
        // the clock noise the larger reply is there for.
        assert!(ms(2.1) < SHORT_TRANSFER);
        let rate = bytes_per_second(
            small(3.3),
            Some((LARGER_PROBE_BYTES, ms(3.3 + 16.78))),
            ms(3.0),
        );
        assert!((124_000_000..=126_000_000).contains(&rate), "{rate}");
    }

    #[test]
    fn throughput_is_the_extra_bytes_over_the_extra_time() {
        // 20 ms round trip, 100 Mbit/s: 32 KiB in 20 + 2.6 ms, 288 KiB in 20 + 23.6 ms.
        let rate = bytes_per_second(small(22.62), large(43.59), ms(20.0));
        assert!((12_400_000..=12_600_000).contains(&rate), "{rate}");
        // The round trip and the server's fixed work cancel: the same link with 5 ms more
        // per statement measures the same.
        let rate = bytes_per_second(small(27.62), large(48.59), ms(20.0));
        assert!((12_400_000..=12_600_000).contains(&rate), "{rate}");
    }

    #[test]
    fn a_slow_link_or_an_unseen_difference_uses_one_reply_less_the_round_trip() {
        // 1 Mbit/s: 32 KiB take 262 ms, so the larger reply (2.4 s) is not asked for.
        let slow = ms(20.0 + 262.1);
        assert!(predicted_large(slow, ms(20.0)) > LARGE_PROBE_BUDGET);
        let rate = bytes_per_second((SMALL_PROBE_BYTES, slow), None, ms(20.0));
        assert!((124_000..=126_000).contains(&rate), "{rate}");
        // 100 Mbit/s: the larger one comes well within the budget.
        assert!(predicted_large(ms(22.62), ms(20.0)) < LARGE_PROBE_BUDGET);
        // Loopback: the larger reply no slower than the smaller by the clock.
        let rate = bytes_per_second(small(0.30), large(0.30), ms(0.10));
        assert_eq!(rate, (LARGE_PROBE_BYTES as f64 / 0.0002) as u64);
        // A reply faster than the round trip (noise) stays finite.
        assert!(bytes_per_second(small(0.05), None, ms(0.10)) > 0);
    }
}
