//! `strategy: auto` measures the link to a server where its throughput can turn the choice
//! (issue 20, item 2): on PostgreSQL and MariaDB, straight to the server and through
//! benches/pivot/netproxy.py at 20 ms / 100 Mbit/s, the plan's reason names the round trip
//! and a throughput the link really has.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::kv_fixture::{Fixture, Kv};
use crate::servers;

/// 300 entities × 40 attributes: 12,000 rows (past the small-source rule) and wide enough
/// that on both engines the pushdown costs more than the stream's own work, so the
/// throughput decides and is measured.
const KV: Kv = Kv::new(300, 40);

/// netproxy on a free loopback port in front of `server`; killed when dropped.
struct Proxy {
    child: Child,
    port: u16,
}

impl Proxy {
    /// None (the reason printed) where python3 cannot run it.
    fn start(server: u16, rtt_ms: u32, mbit: u32) -> Option<Proxy> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/pivot/netproxy.py");
        let child = Command::new("python3")
            .args([script, "--listen", &port.to_string()])
            .args(["--to", &format!("127.0.0.1:{server}")])
            .args(["--rtt-ms", &rtt_ms.to_string(), "--mbit", &mbit.to_string()])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(child) = child else {
            eprintln!("skipped: python3 cannot run {script}");
            return None;
        };
        let proxy = Proxy { child, port };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "netproxy never listened on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(proxy)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The number before `unit` after `label` in `text`.
fn number_after(text: &str, label: &str, unit: &str) -> Option<f64> {
    let rest = &text[text.find(label)? + label.len()..];
    rest[..rest.find(unit)?].trim().parse().ok()
}

/// Run `auto` over `url` and return the plan's strategy reason.
fn auto_reason(fx: &Fixture, url: &str) -> String {
    let job = fx.job(&fx.target, "replace");
    let out = servers::run(&["run", job.to_str().expect("utf-8 path"), "--json"], url);
    assert!(out.status.success(), "{}", servers::stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json report");
    report["strategy_reason"]
        .as_str()
        .expect("strategy_reason")
        .to_string()
}

/// The port a connection string names (`…@host:PORT/db`).
fn port_of(url: &str) -> Option<u16> {
    let host = &url[url.rfind('@')? + 1..];
    let host = &host[..host.find('/')?];
    host.rsplit_once(':')?.1.parse().ok()
}

fn probe_on(db: servers::Db) {
    let rt = servers::runtime();
    let Some(mut conn) = rt.block_on(servers::connect_or_skip(db.what, &db.url)) else {
        return;
    };
    let prefix = format!("remote_probe_{}_{}", db.what, std::process::id());
    let fx = rt.block_on(Fixture::new(conn.as_mut(), prefix, KV));

    // Straight to the server: loopback moves far more than the proxy's 100 Mbit/s below.
    let reason = auto_reason(&fx, &db.url);
    let mbit =
        number_after(&reason, "throughput ", " Mbit/s").unwrap_or_else(|| panic!("{reason}"));
    assert!(mbit > 150.0, "loopback measured {mbit} Mbit/s: {reason}");

    // Through 20 ms / 100 Mbit/s: what the proxy gives, within its pacing and the load.
    let port = port_of(&db.url).unwrap_or_else(|| panic!("no port in {}", db.url));
    if let Some(proxy) = Proxy::start(port, 20, 100) {
        let url = db
            .url
            .replacen(&format!(":{port}/"), &format!(":{}/", proxy.port), 1);
        let reason = auto_reason(&fx, &url);
        let rtt = number_after(&reason, "measured ", " ms").unwrap_or_else(|| panic!("{reason}"));
        let mbit =
            number_after(&reason, "throughput ", " Mbit/s").unwrap_or_else(|| panic!("{reason}"));
        assert!(
            (19.5..200.0).contains(&rtt),
            "round trip {rtt} ms: {reason}"
        );
        // The order of magnitude, not the cap to 10 %: the asyncio proxy, delayed on a loaded
        // machine, catches up in bursts (151 Mbit/s seen in a clean-clone CI rehearsal), and
        // `auto`'s choices on this link stay the same at 1.5x the throughput (BENCHMARKS.md,
        // "Remote links": PostgreSQL's 100-column stream 3.7 s vs pushdown 2.2 s even then).
        assert!((40.0..=200.0).contains(&mbit), "{mbit} Mbit/s: {reason}");
    }
    rt.block_on(fx.drop_tables(conn.as_mut()));
}

#[test]
fn auto_measures_the_links_throughput_on_postgres() {
    probe_on(servers::postgres());
}

#[test]
fn auto_measures_the_links_throughput_on_mariadb() {
    probe_on(servers::mariadb());
}
