//! `strategy: auto` on a server behind a measured link (issue 20, item 2): which strategy
//! costs less, from the engine's costs ([`crate::dialect::Query::pivot_costs`]), discovery's
//! counts and widths, and the link. The pushdown moves nothing but evaluates one CASE per
//! column per source row; the stream moves every source row to eavpivot and every wide row
//! back, its own work overlapping the transfer (loopback rows of BENCHMARKS.md "Remote
//! links": the stream costs the same at 10 and 100 columns; through 100 Mbit/s it costs the
//! bytes). One width cannot serve both engines: PostgreSQL's 100-column pushdown beats its
//! stream over 100 Mbit/s, MariaDB's (2.5× the CASE cost) does not.

use std::collections::HashSet;
use std::time::Duration;

use super::{Discovery, Link, Strategy, REMOTE_PUSHDOWN_COLUMNS, SMALL_SOURCE_ROWS};
use crate::config::Job;
use crate::dialect::{Dialect, PivotCosts};

/// Bytes taken for an entity key in text: discovery does not measure keys (the bench's are 1
/// to 6 digits, a BIGINT has up to 20).
const ENTITY_BYTES: u64 = 8;
/// Bytes taken for a value where discovery measured no widths.
const UNMEASURED_VALUE_BYTES: u64 = 16;

/// The two strategies' costs as modelled, before the link's throughput is known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The pushdown's `INSERT … SELECT`, seconds.
    pub pushdown_s: f64,
    /// The stream's own work, seconds: what it costs on a link of unlimited throughput.
    pub stream_work_s: f64,
    /// What the stream moves over the link: the source rows it reads and the wide rows it
    /// writes back.
    pub stream_bytes: u64,
}

impl Estimate {
    /// The stream over a link of `bytes_per_s`: its work and the transfer overlap.
    pub fn stream_s(&self, bytes_per_s: u64) -> f64 {
        let transfer = self.stream_bytes as f64 / bytes_per_s.max(1) as f64;
        self.stream_work_s.max(transfer)
    }

    /// Whether the link's throughput can turn the choice: only when the pushdown costs more
    /// than the stream's own work (else the pushdown wins on any link).
    pub fn throughput_decides(&self) -> bool {
        self.pushdown_s > self.stream_work_s
    }
}

/// The estimate for `source_rows` rows pivoted into the attributes `columns`, from what
/// discovery counted and measured.
pub fn estimate(
    costs: &PivotCosts,
    discovery: &Discovery,
    columns: &[&str],
    source_rows: u64,
) -> Estimate {
    let rows = source_rows as f64;
    let pushdown_ns = rows * (costs.pushdown_row_ns + columns.len() as f64 * costs.case_cell_ns);
    let selected: HashSet<&str> = columns.iter().copied().collect();
    let per_row = costs.row_overhead_bytes + ENTITY_BYTES;
    let mut read = discovery.empty_name_rows * per_row;
    let mut written = 0;
    let mut entities = 0;
    for d in &discovery.attributes {
        let value = d
            .widths
            .map_or(UNMEASURED_VALUE_BYTES, |(lo, hi)| (lo + hi).div_ceil(2));
        read += d.rows * (per_row + d.name.len() as u64) + d.values * value;
        if selected.contains(d.name.as_str()) {
            written += d.values * (value + costs.field_overhead_bytes);
            // At least as many entities as the most frequent attribute has rows.
            entities = entities.max(d.rows);
        }
    }
    written += entities * (ENTITY_BYTES + costs.field_overhead_bytes);
    Estimate {
        pushdown_s: pushdown_ns * 1e-9,
        stream_work_s: rows * costs.stream_row_ns * 1e-9,
        stream_bytes: read + written,
    }
}

/// Whether `auto` needs the link's throughput for this job: a server with calibrated costs
/// ([`crate::dialect::Query::pivot_costs`]), `auto` itself deciding (no transform, not a
/// small source; the caller measures only for `auto`), and a pushdown that only wins on a slow enough link.
/// Run before planning, so the probe is only sent when its answer can matter.
pub fn throughput_matters(job: &Job, dialect: &dyn Dialect, discovery: &Discovery) -> bool {
    let Some(costs) = dialect.pivot_costs() else {
        return false;
    };
    let source_rows = super::discovered_rows(discovery);
    if !job.transforms.is_empty() || source_rows < SMALL_SOURCE_ROWS {
        return false;
    }
    let (attributes, _) = super::select_attributes(job, discovery);
    let columns: Vec<&str> = attributes.iter().map(String::as_str).collect();
    estimate(&costs, discovery, &columns, source_rows).throughput_decides()
}

/// `auto` with a measured link: by the engine's costs where it has them and the link's
/// throughput is known or not needed; else by the round trip and
/// [`REMOTE_PUSHDOWN_COLUMNS`], as before the costs (the note says which).
pub(super) fn choose_on_link(
    dialect: &dyn Dialect,
    link: Link,
    estimate: Option<Estimate>,
    by_width: (Strategy, String),
    (source_rows, columns): (u64, usize),
) -> (Strategy, String) {
    let name = dialect.name();
    let rtt = ms(link.round_trip);
    let Some(e) = estimate else {
        return by_round_trip(name, rtt, by_width, (source_rows, columns), "");
    };
    let pushdown = format!(
        "pushdown {:.2} s ({source_rows} source rows x {columns} CASE columns)",
        e.pushdown_s
    );
    if !e.throughput_decides() {
        return (
            Strategy::Pushdown,
            format!(
                "auto: round trip to {name} measured {rtt:.2} ms; estimated {pushdown} <= the stream's own work {:.2} s, so the pushdown on any link (throughput not measured: it cannot change this)",
                e.stream_work_s
            ),
        );
    }
    let Some(bytes_per_s) = link.throughput else {
        return by_round_trip(
            name,
            rtt,
            by_width,
            (source_rows, columns),
            "; the link's throughput, which decides here, could not be measured",
        );
    };
    let stream_s = e.stream_s(bytes_per_s);
    let strategy = if e.pushdown_s <= stream_s {
        Strategy::Pushdown
    } else {
        Strategy::Stream
    };
    (
        strategy,
        format!(
            "auto: round trip to {name} measured {rtt:.2} ms, throughput {:.1} Mbit/s; estimated {pushdown}, stream {stream_s:.2} s (its own work {:.2} s overlapping {:.1} MB over the link): {}",
            bytes_per_s as f64 * 8e-6,
            e.stream_work_s,
            e.stream_bytes as f64 * 1e-6,
            strategy.as_str()
        ),
    )
}

/// The rule before the costs (session 6): with a server, up to [`REMOTE_PUSHDOWN_COLUMNS`]
/// columns go down and wider ones keep to the width rule. `why` (appended to the
/// round trip) says why the costs did not decide.
fn by_round_trip(
    name: &str,
    rtt: f64,
    (strategy, reason): (Strategy, String),
    (source_rows, columns): (u64, usize),
    why: &str,
) -> (Strategy, String) {
    let most = REMOTE_PUSHDOWN_COLUMNS;
    match strategy {
        Strategy::Stream if columns <= most => (
            Strategy::Pushdown,
            format!(
                "auto: round trip to {name} measured {rtt:.2} ms{why}: the stream would move {source_rows} source rows over the link and the wide rows back, which costs more than {columns} CASE columns in the database (benches/pivot: pushdown up to {most} columns on every link measured)"
            ),
        ),
        Strategy::Stream => (
            strategy,
            format!(
                "{reason} (round trip measured {rtt:.2} ms{why}: the pushdown wins only up to {most} columns)"
            ),
        ),
        Strategy::Pushdown => (
            strategy,
            format!("{reason} (round trip measured {rtt:.2} ms{why})"),
        ),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
