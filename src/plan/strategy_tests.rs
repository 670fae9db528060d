//! `auto` with a measured link ([`super::REMOTE_PUSHDOWN_COLUMNS`]): the pivot is pushed down
//! while its columns are few enough; unmeasured (embedded) the width rules decide as before,
//! and the note says which link was measured.

use std::time::Duration;

use super::{build_plan, Discovered, Discovery, Link, PlanOptions, Strategy};
use crate::config::StrategyName;
use crate::dialect::{Dialect, MsSql, Postgres};

/// `entities` × `attributes`, every cell present.
fn discovery(entities: u64, attributes: usize) -> Discovery {
    Discovery {
        attributes: (0..attributes)
            .map(|i| Discovered {
                name: format!("attr_{i:04}"),
                rows: entities,
                values: entities,
                widths: Some((14, 14)),
            })
            .collect(),
        ..Discovery::default()
    }
}

fn choose(
    dialect: &dyn Dialect,
    entities: u64,
    attributes: usize,
    round_trip_us: Option<u64>,
    asked: Option<StrategyName>,
) -> (Strategy, String) {
    let text = "name: t\nsource: { table: kv }\nentity: [id]\nattribute: a\nvalue: v\ntarget: { table: wide }\n";
    let job = crate::config::parse_job(text, std::path::Path::new("t.yaml")).expect("job");
    let options = PlanOptions {
        strategy: asked,
        link: round_trip_us.map(|us| Link {
            round_trip: Duration::from_micros(us),
        }),
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
fn with_a_server_a_narrow_pivot_goes_down_and_a_wide_one_keeps_streaming() {
    // Unmeasured (embedded, or the probe failed): the width rule, its wording unchanged.
    let (strategy, reason) = choose(&Postgres, 100_000, 10, None, None);
    assert_eq!(strategy, Strategy::Stream);
    assert!(
        reason.starts_with("auto: on postgres the stream measured faster")
            && !reason.contains("round trip"),
        "{reason}"
    );
    // Loopback and the 1 ms and 20 ms bench links: 10 columns go down, 100 keep streaming.
    for (us, shown) in [(120, "0.12"), (1_350, "1.35"), (20_850, "20.85")] {
        let (strategy, reason) = choose(&Postgres, 100_000, 10, Some(us), None);
        assert_eq!(strategy, Strategy::Pushdown, "{reason}");
        assert!(
            reason.starts_with(&format!("auto: round trip to postgres measured {shown} ms"))
                && reason.contains("costs more than 10 CASE columns")
                && reason
                    .ends_with("(benches/pivot: pushdown up to 32 columns on every link measured)"),
            "{reason}"
        );
        let (strategy, reason) = choose(&Postgres, 10_000, 100, Some(us), None);
        assert_eq!(strategy, Strategy::Stream, "{reason}");
        assert!(
            reason.starts_with("auto: on postgres the stream measured faster")
                && reason.ends_with(&format!(
                    "(round trip measured {shown} ms: the pushdown wins only up to 32 columns)"
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
