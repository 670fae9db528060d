//! `auto` with a measured link ([`super::remote`]): the engine's costs against the link's
//! round trip and throughput; without costs or a throughput where it decides, the pivot is
//! pushed down while its columns are few enough ([`super::REMOTE_PUSHDOWN_COLUMNS`]);
//! unmeasured (embedded) the width rules decide as before, and the note says which.

use std::time::Duration;

use super::{build_plan, remote, Discovered, Discovery, Link, PlanOptions, Strategy};
use crate::config::StrategyName;
use crate::dialect::{Dialect, MariaDb, MsSql, Postgres};

/// `entities` × `attributes`, every cell present.
fn discovery(entities: u64, attributes: usize) -> Discovery {
    Discovery {
        attributes: (0..attributes)
            .map(|i| Discovered {
                name: format!("attr_{i:04}"),
                rows: entities,
                values: entities,
                // The bench's values: `v0000_000012345`.
                widths: Some((15, 15)),
            })
            .collect(),
        ..Discovery::default()
    }
}

/// A plain job: `kv (id, a, v)` into `wide`.
fn job() -> crate::config::Job {
    let text = "name: t\nsource: { table: kv }\nentity: [id]\nattribute: a\nvalue: v\ntarget: { table: wide }\n";
    crate::config::parse_job(text, std::path::Path::new("t.yaml")).expect("job")
}

fn choose(
    dialect: &dyn Dialect,
    entities: u64,
    attributes: usize,
    round_trip_us: Option<u64>,
    asked: Option<StrategyName>,
) -> (Strategy, String) {
    let link = round_trip_us.map(|us| Link {
        round_trip: Duration::from_micros(us),
        throughput: None,
    });
    choose_with(dialect, (entities, attributes), link, asked)
}

fn choose_with(
    dialect: &dyn Dialect,
    (entities, attributes): (u64, usize),
    link: Option<Link>,
    asked: Option<StrategyName>,
) -> (Strategy, String) {
    let job = job();
    let options = PlanOptions {
        strategy: asked,
        link,
        ..PlanOptions::default()
    };
    let plan = build_plan(
        &job,
        dialect,
        &discovery(entities, attributes),
        &[None],
        options,
    )
    .expect("plan");
    (plan.strategy, plan.strategy_reason)
}

#[test]
fn without_a_throughput_where_it_decides_the_width_of_32_still_does() {
    // Unmeasured (embedded, or the probe failed): the width rule, its wording unchanged.
    let (strategy, reason) = choose(&Postgres, 100_000, 10, None, None);
    assert_eq!(strategy, Strategy::Stream);
    assert!(
        reason.starts_with("auto: on postgres the stream measured faster")
            && !reason.contains("round trip"),
        "{reason}"
    );
    for (us, shown) in [(120, "0.12"), (1_350, "1.35"), (20_850, "20.85")] {
        // 10 columns: the pushdown costs less than the stream's own work, so no throughput
        // is needed and the costs decide on any link.
        let (strategy, reason) = choose(&Postgres, 100_000, 10, Some(us), None);
        assert_eq!(strategy, Strategy::Pushdown, "{reason}");
        assert!(
            reason.starts_with(&format!("auto: round trip to postgres measured {shown} ms; estimated pushdown 0.61 s (1000000 source rows x 10 CASE columns) <= the stream's own work 0.67 s"))
                && reason.ends_with("(throughput not measured: it cannot change this)"),
            "{reason}"
        );
        // 100 columns: the throughput decides, and none was measured: the old rule.
        let (strategy, reason) = choose(&Postgres, 10_000, 100, Some(us), None);
        assert_eq!(strategy, Strategy::Stream, "{reason}");
        assert!(
            reason.starts_with("auto: on postgres the stream measured faster")
                && reason.ends_with(&format!(
                    "(round trip measured {shown} ms; the link's throughput, which decides here, could not be measured: the pushdown wins only up to 32 columns)"
                )),
            "{reason}"
        );
    }
    // The boundary: 32 columns go down, 33 do not.
    assert_eq!(
        choose(&Postgres, 20_000, 32, Some(2_000), None).0,
        Strategy::Pushdown
    );
    assert_eq!(
        choose(&Postgres, 20_000, 33, Some(2_000), None).0,
        Strategy::Stream
    );
    // An engine without calibrated costs keeps the round-trip rule whatever the throughput.
    let fast = Some(Link {
        round_trip: Duration::from_micros(300),
        throughput: Some(1_000_000_000),
    });
    let (strategy, reason) = choose_with(&MsSql, (10_000, 100), fast, None);
    assert_eq!(strategy, Strategy::Stream);
    assert!(
        reason.ends_with("(round trip measured 0.30 ms: the pushdown wins only up to 32 columns)"),
        "{reason}"
    );
}

/// One cell of BENCHMARKS.md "Remote links", quiet machine (coordinator, 06:39-06:43 UTC,
/// main at 905cc28): the link as the probe measures it, and both strategies' times.
struct Cell {
    dialect: &'static dyn Dialect,
    shape: (u64, usize),
    round_trip_us: u64,
    bytes_per_s: u64,
    stream_s: f64,
    pushdown_s: f64,
}

/// Loopback, the 1 ms / 1 Gbit/s and the 20 ms / 100 Mbit/s proxy as the probe measured
/// them through benches/pivot/netproxy.py (BENCHMARKS.md "Remote links", session 7, loaded
/// machine): PostgreSQL on loopback 1,323 Mbit/s, MariaDB through 1 Gbit/s 710 Mbit/s and
/// through 100 Mbit/s 80.6 Mbit/s (the lowest the 100 Mbit/s link read for MariaDB).
const DIRECT: (u64, u64) = (60, 165_000_000);
const GBIT: (u64, u64) = (1_340, 88_700_000);
const SLOW: (u64, u64) = (20_910, 10_075_000);

fn cells() -> Vec<Cell> {
    let cell = |dialect: &'static dyn Dialect,
                shape: (u64, usize),
                (rtt, bps): (u64, u64),
                stream_s: f64,
                pushdown_s: f64| Cell {
        dialect,
        shape,
        round_trip_us: rtt,
        bytes_per_s: bps,
        stream_s,
        pushdown_s,
    };
    let (narrow, wide) = ((100_000, 10), (10_000, 100));
    vec![
        cell(&Postgres, narrow, DIRECT, 0.97, 0.91),
        cell(&Postgres, wide, DIRECT, 0.83, 2.48),
        cell(&Postgres, narrow, GBIT, 1.12, 0.95),
        cell(&Postgres, wide, GBIT, 1.08, 2.61),
        cell(&Postgres, narrow, SLOW, 5.40, 1.78),
        cell(&Postgres, wide, SLOW, 5.28, 3.23),
        cell(&MariaDb, narrow, DIRECT, 2.14, 2.10),
        cell(&MariaDb, wide, DIRECT, 1.85, 6.06),
        cell(&MariaDb, narrow, GBIT, 2.24, 1.90),
        cell(&MariaDb, wide, GBIT, 1.95, 6.04),
        cell(&MariaDb, narrow, SLOW, 4.86, 2.60),
        cell(&MariaDb, wide, SLOW, 4.63, 6.56),
    ]
}

#[test]
fn on_every_bench_link_auto_runs_within_ten_percent_of_the_better_strategy() {
    for c in cells() {
        let link = Link {
            round_trip: Duration::from_micros(c.round_trip_us),
            throughput: Some(c.bytes_per_s),
        };
        let (strategy, reason) = choose_with(c.dialect, c.shape, Some(link), None);
        let ran = match strategy {
            Strategy::Stream => c.stream_s,
            Strategy::Pushdown => c.pushdown_s,
        };
        let better = c.stream_s.min(c.pushdown_s);
        assert!(
            ran / better <= 1.10,
            "{} {:?} at {} us: {} took {ran} s, the better {better} s: {reason}",
            c.dialect.name(),
            c.shape,
            c.round_trip_us,
            strategy.as_str()
        );
        assert!(reason.starts_with("auto: round trip to"), "{reason}");
    }
}

#[test]
fn one_link_two_engines_two_choices_with_the_numbers_in_the_note() {
    // 20 ms / 100 Mbit/s, 10,000 x 100: PostgreSQL's CASE is cheap enough to beat moving
    // 1M rows through the link, MariaDB's is not.
    let link = Some(Link {
        round_trip: Duration::from_micros(SLOW.0),
        throughput: Some(SLOW.1),
    });
    let (strategy, reason) = choose_with(&Postgres, (10_000, 100), link, None);
    assert_eq!(strategy, Strategy::Pushdown, "{reason}");
    assert_eq!(
        reason,
        "auto: round trip to postgres measured 20.91 ms, throughput 80.6 Mbit/s; estimated pushdown 2.18 s (1000000 source rows x 100 CASE columns), stream 6.96 s (its own work 0.67 s overlapping 70.1 MB over the link): pushdown"
    );
    let (strategy, reason) = choose_with(&MariaDb, (10_000, 100), link, None);
    assert_eq!(strategy, Strategy::Stream, "{reason}");
    assert!(reason.ends_with(": stream"), "{reason}");
}

#[test]
fn the_throughput_is_probed_only_where_it_can_turn_the_choice() {
    let job = job();
    let matters = |dialect: &dyn Dialect, (entities, attributes): (u64, usize)| {
        remote::throughput_matters(&job, dialect, &discovery(entities, attributes))
    };
    // The pushdown beats the stream's own work: no link makes the stream win.
    assert!(!matters(&Postgres, (100_000, 10)));
    // It does not: a fast link favours the stream, a slow one the pushdown.
    assert!(matters(&Postgres, (10_000, 100)));
    assert!(matters(&MariaDb, (10_000, 100)));
    // A small source goes down anyway; an engine without costs has no probe.
    assert!(!matters(&Postgres, (50, 100)));
    assert!(!matters(&MsSql, (10_000, 100)));
}

#[test]
fn the_link_never_overrides_an_asked_strategy_or_the_earlier_rules() {
    // Asked for: as asked, whatever the link.
    let (strategy, reason) = choose(
        &Postgres,
        100_000,
        10,
        Some(20_000),
        Some(StrategyName::Stream),
    );
    assert_eq!(
        (strategy, reason.as_str()),
        (Strategy::Stream, "strategy: stream was asked for")
    );
    // A small source: the pushdown and the small-source note, near or remote.
    for link in [None, Some(100), Some(20_000)] {
        let (strategy, reason) = choose(&Postgres, 500, 10, link, None);
        assert_eq!(strategy, Strategy::Pushdown);
        assert!(reason.contains("source rows < 10000"), "{reason}");
    }
    // Where the width rule already pushes down (SQL Server, 10 <= 32 columns) it stays down.
    let (strategy, reason) = choose(&MsSql, 100_000, 10, Some(300), None);
    assert_eq!(strategy, Strategy::Pushdown);
    assert!(
        reason.starts_with("auto: 10 columns <= 32 on mssql")
            && reason.ends_with("(round trip measured 0.30 ms)"),
        "{reason}"
    );
}
