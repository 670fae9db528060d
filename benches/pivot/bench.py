"""The pivot benchmark of issue 6: eavpivot (auto, pushdown, stream) against what users would
write instead, on the same generated key-value data in SQLite, PostgreSQL and MariaDB.

Run it through benches/pivot/run.sh, which builds the release binary and installs polars and
DuckDB into target/bench-venv. Prints a table of medians and ratios and writes BENCHMARKS.md.

Every method reads the same key-value table and writes a wide table back into the same
database; times are wall-clock of the whole command (process start to exit), medians of
--runs runs (one run for a cell whose first run took longer than --slow seconds).
"""

import argparse
import os
import platform
import re
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "target" / "release" / "eavpivot"
WORK = ROOT / "target" / "bench-pivot"
PG_URL = "postgres://root@127.0.0.1:5432/test"
MY_URL = "mysql://root@127.0.0.1:3306/test"
PSQL = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", "root", "-d", "test"]
MARIADB = ["mariadb", "-h", "127.0.0.1", "-u", "root", "test"]

SHAPES = [(100_000, 10), (10_000, 100), (1_000, 1_000)]
SCALE = (100_000, 100)  # 10M rows
ENGINES = ["sqlite", "postgres", "mariadb", "babelfish"]
# Babelfish for PostgreSQL (../shared/babelfish, started by .ci/run): T-SQL over TDS, labelled
# Babelfish, not SQL Server. Reached with python-tds (pytds) for generation and the hand query.
# Its own database, created when missing, so the tables stay apart from the tests'.
BBF = dict(server="127.0.0.1", port=1433, database="bbf_bench", user="bbf_admin",
           password="Bbf_Passw0rd")
BBF_URL = "mssql://bbf_admin:Bbf_Passw0rd@127.0.0.1:1433/bbf_bench?trust_cert=true"
EAV_METHODS = ["auto", "pushdown", "stream"]
BASE_BIN = ""  # --base-bin: an older binary whose pushdown runs alongside


def attr(a):
    return f"attr_{a:04d}"


def table(entities, attrs):
    return f"kv_{entities}x{attrs}"


def sh(cmd, stdin=None, check=True):
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {r.stderr.strip()[-600:]}")
    return r


# ---------------------------------------------------------------- data generation

def gen_sql(engine, entities, attrs):
    """SQL that creates kv_ExA with entities*attrs rows: value ~14 bytes, PK (entity, attr)."""
    t, n = table(entities, attrs), entities * attrs
    if engine == "sqlite":
        return f"""DROP TABLE IF EXISTS {t};
CREATE TABLE {t} (entity INTEGER NOT NULL, attr TEXT NOT NULL, val TEXT, PRIMARY KEY (entity, attr));
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {n - 1})
INSERT INTO {t} SELECT i / {attrs}, printf('attr_%04d', i % {attrs}),
  printf('v%04d_%09d', i % {attrs}, i / {attrs}) FROM n;
"""
    if engine == "babelfish":
        digits = "(VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS d{}(v)"
        cross = " CROSS JOIN ".join(digits.format(k) for k in range(7))
        number = " + ".join(f"d{k}.v * {10 ** k}" for k in range(7))
        pad = lambda expr, w: f"RIGHT(REPLICATE('0', {w}) + CAST({expr} AS VARCHAR(12)), {w})"
        return f"""DROP TABLE IF EXISTS {t};
CREATE TABLE {t} (entity BIGINT NOT NULL, attr NVARCHAR(64) NOT NULL, val NVARCHAR(64),
  PRIMARY KEY (entity, attr));
INSERT INTO {t} SELECT n.i / {attrs}, CONCAT('attr_', {pad(f"n.i % {attrs}", 4)}),
  CONCAT('v', {pad(f"n.i % {attrs}", 4)}, '_', {pad(f"n.i / {attrs}", 9)})
  FROM (SELECT {number} AS i FROM {cross}) n WHERE n.i < {n};
"""
    if engine == "postgres":
        return f"""DROP TABLE IF EXISTS {t};
CREATE TABLE {t} (entity BIGINT NOT NULL, attr TEXT NOT NULL, val TEXT);
INSERT INTO {t} SELECT i / {attrs}, 'attr_' || lpad((i % {attrs})::text, 4, '0'),
  'v' || lpad((i % {attrs})::text, 4, '0') || '_' || lpad((i / {attrs})::text, 9, '0')
  FROM generate_series(0, {n - 1}) i;
ALTER TABLE {t} ADD PRIMARY KEY (entity, attr);
ANALYZE {t};
"""
    return f"""DROP TABLE IF EXISTS {t};
CREATE TABLE {t} (entity BIGINT NOT NULL, attr VARCHAR(64) NOT NULL, val TEXT,
  PRIMARY KEY (entity, attr)) ENGINE=InnoDB;
INSERT INTO {t} SELECT seq DIV {attrs}, CONCAT('attr_', LPAD(seq MOD {attrs}, 4, '0')),
  CONCAT('v', LPAD(seq MOD {attrs}, 4, '0'), '_', LPAD(seq DIV {attrs}, 9, '0'))
  FROM seq_0_to_{n - 1} ORDER BY seq;
ANALYZE TABLE {t};
"""


def tsql(sql, fetch=False, database=None):
    import pytds
    if database is None:
        tsql(f"IF DB_ID('{BBF['database']}') IS NULL CREATE DATABASE {BBF['database']}",
             database="master")
    with pytds.connect(BBF["server"], database or BBF["database"], BBF["user"], BBF["password"],
                       port=BBF["port"], autocommit=True, login_timeout=10) as c:
        cur = c.cursor()
        cur.execute(sql)
        return cur.fetchone()[0] if fetch else None


def count_rows(engine, t):
    q = f"SELECT COUNT(*) FROM {t}"
    try:
        if engine == "babelfish":
            return int(tsql(q, fetch=True))
        if engine == "sqlite":
            with sqlite3.connect(WORK / "bench.db") as c:
                return c.execute(q).fetchone()[0]
        if engine == "postgres":
            return int(sh(PSQL + ["-At", "-c", q]).stdout.strip())
        return int(sh(MARIADB + ["-N", "-e", q]).stdout.strip())
    except Exception:
        return -1


def generate(engine, entities, attrs):
    t = table(entities, attrs)
    if count_rows(engine, t) == entities * attrs:
        return 0.0
    started = time.time()
    sql = gen_sql(engine, entities, attrs)
    if engine == "sqlite":
        sh(["sqlite3", str(WORK / "bench.db")], stdin=sql)
    elif engine == "babelfish":
        tsql(sql)
    elif engine == "postgres":
        sh(PSQL, stdin=sql)
    else:
        sh(MARIADB, stdin=sql)
    return time.time() - started


# ---------------------------------------------------------------- methods

def url(engine):
    return {"sqlite": f"sqlite:{WORK / 'bench.db'}", "postgres": PG_URL, "mariadb": MY_URL,
            "babelfish": BBF_URL}[engine]


def job_file(engine, entities, attrs, split):
    t = table(entities, attrs)
    path = WORK / f"job_{engine}_{t}.yaml"
    split_line = "  split: auto\n" if split else ""
    path.write_text(
        f"name: bench_{t}\nsource: {{ table: {t}, alias: k }}\nentity: [k.entity]\n"
        f"attribute: k.attr\nvalue: k.val\n"
        f"target:\n  table: wide_{t}\n  if_exists: replace\n{split_line}"
    )
    return path


def run_eavpivot(engine, entities, attrs, strategy, split, binary=None, connection=None):
    job = job_file(engine, entities, attrs, split)
    cmd = ["/usr/bin/time", "-f", "RSS_KB=%M", str(binary or BIN), "run", str(job), "--connection",
           connection or url(engine), "--strategy", strategy, "--preview", "0"]
    started = time.time()
    r = sh(cmd, check=False)
    took = time.time() - started
    rss = re.search(r"RSS_KB=(\d+)", r.stderr)
    if r.returncode != 0:
        lines = [l for l in r.stderr.splitlines() if l and not l.startswith("RSS_KB")]
        return None, (lines[-1] if lines else "failed")[:160], None
    chosen = re.search(r"strategy (\w+) \((.*)\)$", r.stderr, re.M)
    note = f"{chosen.group(1)}" if chosen else ""
    if chosen and strategy == "auto":
        # What auto measured and estimated (round trip, throughput, both costs), last run's.
        AUTO_REASONS[(engine, entities, attrs, connection)] = chosen.group(2)
    return took, note, int(rss.group(1)) if rss else None


AUTO_REASONS = {}  # (engine, entities, attrs, connection) -> auto's strategy reason


def hand_sql(engine, entities, attrs):
    t, w = table(entities, attrs), f"hand_{table(entities, attrs)}"
    q = '"' if engine != "mariadb" else "`"
    cols = ",\n  ".join(
        f"MAX(CASE WHEN attr = '{attr(a)}' THEN val END) AS {q}{attr(a)}{q}" for a in range(attrs)
    )
    if engine == "babelfish":  # T-SQL has no CREATE TABLE AS
        return (f"DROP TABLE IF EXISTS {w};\nSELECT entity,\n  {cols}\nINTO {w}\n"
                f"FROM {t}\nGROUP BY entity;\n")
    return (f"DROP TABLE IF EXISTS {w};\nCREATE TABLE {w} AS\nSELECT entity,\n  {cols}\n"
            f"FROM {t}\nGROUP BY entity;\n")


def discovery_sql(engine, entities, attrs):
    """What any pivot must ask first: the distinct attributes (the hand statement's columns)."""
    t = table(entities, attrs)
    return f"SELECT attr, COUNT(*) FROM {t} GROUP BY attr;\n"


def run_hand(engine, entities, attrs, discover=False):
    """The hand statement; with `discover`, the discovery query first in the same session:
    the floor of any pivot that learns its columns from the data (issue 20's peer)."""
    sql = hand_sql(engine, entities, attrs)
    if discover:
        sql = discovery_sql(engine, entities, attrs) + sql
    if engine == "babelfish":
        started = time.time()
        try:
            tsql(sql)
        except Exception as e:
            return None, str(e).splitlines()[0][:160], None
        return time.time() - started, "", None
    cmd = {"sqlite": ["sqlite3", str(WORK / "bench.db")], "postgres": PSQL, "mariadb": MARIADB}[engine]
    started = time.time()
    r = sh(cmd, stdin=sql, check=False)
    took = time.time() - started
    if r.returncode != 0 or "Error" in r.stderr or "ERROR" in r.stderr:
        return None, r.stderr.strip().splitlines()[-1][:160] if r.stderr.strip() else "failed", None
    return took, "", None


def write_back_sqlite(db, name, columns, rows):
    """What a user's script does: CREATE TABLE and executemany in one transaction."""
    with sqlite3.connect(db) as c:
        c.execute(f'DROP TABLE IF EXISTS "{name}"')
        c.execute(f'CREATE TABLE "{name}" ({", ".join(chr(34) + x + chr(34) for x in columns)})')
        marks = ", ".join("?" * len(columns))
        c.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)


def run_library(which, entities, attrs):
    """polars or DuckDB round trip, in a fresh interpreter (as a user's script would run)."""
    t, db = table(entities, attrs), str(WORK / "bench.db")
    code = f"""
import sqlite3, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from bench import write_back_sqlite
import polars as pl
conn = sqlite3.connect({db!r})
kv = pl.read_database("SELECT entity, attr, val FROM {t}", connection=conn)
conn.close()
if {which!r} == "polars":
    wide = kv.pivot(on="attr", index="entity", values="val", aggregate_function="max")
else:
    import duckdb
    wide = duckdb.sql("PIVOT kv ON attr USING max(val) GROUP BY entity").pl()
write_back_sqlite({db!r}, "{which}_{t}", wide.columns, wide.iter_rows())
"""
    started = time.time()
    r = sh([sys.executable, "-c", code], check=False)
    took = time.time() - started
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1][:160], None
    return took, "", None


# ---------------------------------------------------------------- driver

def measure_interleaved(methods, runs, slow):
    """Round-robin: run 1 of every method, then run 2 of every method, ... so a burst of
    outside load hits all methods alike. A method that failed, or whose first run took more
    than `slow` seconds, is not repeated."""
    times = {name: [] for name, _ in methods}
    notes, rss, failed = {}, {name: [] for name, _ in methods}, {}
    for i in range(runs):
        for name, fn in methods:
            if name in failed or (i > 0 and (not times[name] or times[name][0] > slow)):
                continue
            took, note, kb = fn()
            if took is None:
                failed[name] = note
                continue
            times[name].append(took)
            notes[name] = note
            if kb:
                rss[name].append(kb)
    out = []
    for name, _ in methods:
        if name in failed and not times[name]:
            out.append((name, (None, failed[name], None, 0)))
        else:
            t = times[name]
            out.append((name, (statistics.median(t), notes.get(name, ""),
                               max(rss[name]) if rss[name] else None, len(t))))
    return out


LOADS = []  # 1-minute load average after each shape


def fmt(s):
    return "—" if s is None else f"{s:.2f} s"


def machine():
    model = sh(["lscpu"]).stdout
    name = re.search(r"Model name:\s*(.+)", model)
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{name.group(1).strip() if name else platform.processor()}, {os.cpu_count()} cores, "
            f"{mem:.0f} GiB RAM, {platform.system()} {platform.release()}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--slow", type=float, default=20.0, help="one run only for cells slower than this")
    ap.add_argument("--scale", action="store_true", help="also 10M x 100 (stream, auto; RSS)")
    ap.add_argument("--shapes", default="", help="e.g. 100000x10,1000x1000")
    ap.add_argument("--out", default=str(ROOT / "BENCHMARKS.md"))
    ap.add_argument("--note", default="", help="a line for BENCHMARKS.md (e.g. other load)")
    ap.add_argument("--methods", default="",
                    help="only these methods, e.g. pushdown,discovery + hand")
    ap.add_argument("--base-bin", default="",
                    help="also run this binary's pushdown (pushdown@base): before/after side by side")
    ap.add_argument("--links", default="",
                    help="remote links through benches/pivot/netproxy.py, e.g. "
                         "direct,1ms/1gbit,20ms/100mbit: runs stream, pushdown and auto per link "
                         "(postgres, mariadb) and writes the 'Remote links' table to --out")
    ap.add_argument("--check-links", action="store_true",
                    help="with --links: only measure what each proxy gives (round trip, throughput)")
    ap.add_argument("--bin", default="", help="the eavpivot binary to time (default: this "
                    "tree's target/release/eavpivot)")
    args = ap.parse_args()
    if args.bin:
        global BIN
        BIN = Path(args.bin).resolve()
    if args.links:
        return main_links(args)
    global BASE_BIN
    BASE_BIN = args.base_bin
    WORK.mkdir(parents=True, exist_ok=True)
    engines = args.engines.split(",")
    shapes = [tuple(map(int, s.split("x"))) for s in args.shapes.split(",") if s] or SHAPES
    results = []  # (engine, shape, method, median, note, rss, runs)
    for engine in engines:
        for entities, attrs in shapes + ([SCALE] if args.scale else []):
            scale = (entities, attrs) == SCALE and (entities, attrs) not in shapes
            g = generate(engine, entities, attrs)
            print(f"# {engine} {entities}x{attrs}: data ready ({g:.1f} s to generate)", flush=True)
            split = attrs >= 1000 and engine != "sqlite"
            methods = [(m, lambda m=m: run_eavpivot(engine, entities, attrs, m, split))
                       for m in (["auto", "stream"] if scale else EAV_METHODS)]
            if BASE_BIN:
                methods.append(("pushdown@base",
                                lambda: run_eavpivot(engine, entities, attrs, "pushdown", split,
                                                     BASE_BIN)))
            if not scale:
                methods.append(("hand MAX(CASE)", lambda: run_hand(engine, entities, attrs)))
                methods.append(("discovery + hand",
                                lambda: run_hand(engine, entities, attrs, discover=True)))
                if engine == "sqlite":
                    methods += [(lib, lambda lib=lib: run_library(lib, entities, attrs))
                                for lib in ("polars", "duckdb")]
            if args.methods:
                keep = args.methods.split(",")
                methods = [(n, fn) for n, fn in methods if n in keep]
            runs = 1 if scale else args.runs
            for name, (med, note, rss, n) in measure_interleaved(methods, runs, args.slow):
                results.append((engine, (entities, attrs), name, med, note, rss, n))
                print(f"{engine:9} {entities:>7}x{attrs:<5} {name:15} {fmt(med):>9} "
                      f"(n={n}) {note} {'' if rss is None else f'RSS {rss / 1024:.0f} MiB'}",
                      flush=True)
            LOADS.append(os.getloadavg()[0])
    report = render(results, args)
    print(report)
    Path(args.out).write_text(report)


def render(results, args):
    by = {(e, s, m): (med, note, rss, n) for e, s, m, med, note, rss, n in results}
    engines = sorted({e for e, *_ in results}, key=ENGINES.index)
    shapes = sorted({s for _, s, *_ in results}, key=lambda s: (s[0] * s[1], s[1]))
    lines = ["# Benchmarks: pivot strategies against the alternatives", "",
             f"Machine: {machine()}.", "",
             "Generated by `benches/pivot/run.sh` (see its header for options). Each cell is the "
             "median wall-clock time of the whole command, process start to exit, reading a "
             "key-value table of entities x attributes rows (values ~14 bytes, primary key "
             "(entity, attr)) and writing the wide table back into the same database. eavpivot "
             "runs include discovery, the conflict count (pushdown), verification before commit "
             "and `if_exists: replace`. polars/DuckDB read through Python's sqlite3, pivot in the "
             "library and write back with `executemany` in one transaction (DuckDB's sqlite "
             "extension cannot be downloaded here). n = runs behind the median.", ""]
    if args.note:
        lines += [args.note, ""]
    if LOADS:
        lines += [f"1-minute load average after each shape: {min(LOADS):.2f}-{max(LOADS):.2f} "
                  f"({os.cpu_count()} cores).", ""]
    for engine in engines:
        methods = [m for m in EAV_METHODS + ["pushdown@base", "hand MAX(CASE)",
                                             "discovery + hand", "polars", "duckdb"]
                   if any((engine, s, m) in by for s in shapes)]
        lines += [f"## {engine}", "",
                  "| shape | " + " | ".join(methods) + " | best alternative | auto vs best alt. | auto vs best own | pushdown / (discovery + hand) |",
                  "|---" * (len(methods) + 5) + "|"]
        for s in shapes:
            if not any((engine, s, m) in by for m in methods):
                continue
            cells, alts, own = [], [], []
            for m in methods:
                med, note, rss, n = by.get((engine, s, m), (None, "not run", None, 0))
                cell = fmt(med) if med is not None else f"fails: {note}" if n == 0 and note != "not run" else "—"
                if med is not None and n and n < args.runs:
                    cell += f" (n={n})"
                if m == "auto" and med is not None and note:
                    cell += f" ({note})"
                cells.append(cell)
                if med is not None and m in ("hand MAX(CASE)", "discovery + hand", "polars", "duckdb"):
                    alts.append((med, m))
                if med is not None and m in ("pushdown", "stream"):
                    own.append(med)
            auto = by.get((engine, s, "auto"), (None,))[0]
            best = min(alts) if alts else None
            vs_alt = f"{best[0] / auto:.2f}x faster" if best and auto else "—"
            vs_own = f"{(auto / min(own) - 1) * 100:+.0f}%" if own and auto else "—"
            push = by.get((engine, s, "pushdown"), (None,))[0]
            peer = by.get((engine, s, "discovery + hand"), (None,))[0]
            vs_peer = f"{push / peer:.2f}x" if push and peer else "—"
            lines.append(f"| {s[0]:,} x {s[1]:,} | " + " | ".join(cells) +
                         f" | {best[1] + ' ' + fmt(best[0]) if best else '—'} | {vs_alt} | {vs_own} | {vs_peer} |")
        rss = [(s, m, by[(engine, s, m)][2]) for s in shapes for m in ("stream",)
               if (engine, s, m) in by and by[(engine, s, m)][2]]
        if rss:
            lines += ["", "Peak RSS of eavpivot `stream`: " + ", ".join(
                f"{s[0] * s[1] / 1e6:g}M rows ({s[0]:,} x {s[1]:,}): {kb / 1024:.0f} MiB" for s, m, kb in rss) + "."]
        lines.append("")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- remote links (issue 20, item 2)

# A server reached through benches/pivot/netproxy.py: a round trip and a throughput cap per
# direction, made in userspace on loopback (no `tc netem` on this kernel).
LINK_SERVERS = {"postgres": 5432, "mariadb": 3306}
LINK_PORT = 27000  # netproxy listens on LINK_PORT + server port % 1000 (27432, 27306)


def parse_link(spec):
    """`direct` -> None; `20ms/100mbit` -> (20.0, 100.0)."""
    if spec == "direct":
        return None
    m = re.fullmatch(r"([\d.]+)ms/([\d.]+)(g|m)bit", spec.lower())
    if not m:
        raise SystemExit(f"--links: {spec!r} is not direct or <rtt>ms/<n>mbit (or gbit)")
    return float(m.group(1)), float(m.group(2)) * (1000 if m.group(3) == "g" else 1)


def start_proxy(engine, link):
    """Start netproxy in front of `engine`'s server; returns (process, connection URL)."""
    rtt, mbit = link
    server = LINK_SERVERS[engine]
    port = LINK_PORT + server % 1000
    proc = subprocess.Popen([sys.executable, str(Path(__file__).parent / "netproxy.py"),
                             "--listen", str(port), "--to", f"127.0.0.1:{server}",
                             "--rtt-ms", str(rtt), "--mbit", str(mbit)],
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            import socket
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return proc, url(engine).replace(f":{server}/", f":{port}/")


def psql_timings(port, statements):
    """psql's own `\\timing` of each statement in one session (client-side round trip)."""
    cmd = PSQL[:5] + ["-h", "127.0.0.1", "-p", str(port), "-U", "root", "-d", "test"]
    r = sh(cmd, stdin="\\timing on\n" + "".join(s + "\n" for s in statements))
    return [float(x) / 1000 for x in re.findall(r"Time: ([\d.]+) ms", r.stdout)]


def check_link(spec, link, rounds=20):
    """What the proxy really gives, on PostgreSQL through psql: the round trip of `SELECT 1`
    (min and median of `rounds`) and the throughput of a big SELECT (`\\copy` of the 1M-row
    source to /dev/null, bytes counted by the same query)."""
    t = table(100_000, 10)
    generate("postgres", 100_000, 10)
    size = int(sh(PSQL + ["-At", "-c", f"SELECT SUM(octet_length(t::text) + 1) FROM {t} t"])
               .stdout.strip())
    proc, port = None, LINK_SERVERS["postgres"]
    if link:
        proc, _ = start_proxy("postgres", link)
        port = LINK_PORT + port % 1000
    try:
        rtts = psql_timings(port, ["SELECT 1;"] * rounds)
        copies = psql_timings(port, [f"\\copy (SELECT * FROM {t}) TO '/dev/null'"] * 2)
    finally:
        if proc:
            proc.terminate()
            proc.wait()
    best = min(copies)
    return (f"| {spec} | {min(rtts) * 1000:.2f} ms | {statistics.median(rtts) * 1000:.2f} ms | "
            f"{best:.2f} s | {size / 1e6:.1f} MB | {size * 8 / best / 1e6:.0f} Mbit/s | "
            f"{os.getloadavg()[0]:.2f} |")


def main_links(args):
    """The 'Remote links' table: per link x engine x shape, stream, pushdown and auto
    alternated (n = --runs), auto's choice and its ratio to the better strategy."""
    WORK.mkdir(parents=True, exist_ok=True)
    specs = args.links.split(",")
    if args.check_links:
        lines = ["| link | SELECT 1 min | SELECT 1 median | 1M-row \\copy | bytes | throughput | load |",
                 "|---|---|---|---|---|---|---|"]
        for spec in specs:
            lines.append(check_link(spec, parse_link(spec)))
            print(lines[-1], flush=True)
        Path(args.out).write_text("\n".join(lines) + "\n")
        return
    engines = [e for e in args.engines.split(",") if e in LINK_SERVERS]
    shapes = [tuple(map(int, s.split("x"))) for s in args.shapes.split(",") if s] or SHAPES[:2]
    rows = ["| link | engine | shape | stream | pushdown | auto | auto chose | auto / better | n | load |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    reasons = ["", "`auto`'s reasons (last run of each cell):", ""]
    for spec in specs:
        link = parse_link(spec)
        for engine in engines:
            proc, connection = start_proxy(engine, link) if link else (None, url(engine))
            try:
                for entities, attrs in shapes:
                    generate(engine, entities, attrs)
                    methods = [(m, lambda m=m: run_eavpivot(engine, entities, attrs, m, False,
                                                            connection=connection))
                               for m in ("stream", "pushdown", "auto")
                               if not args.methods or m in args.methods.split(",")]
                    got = dict(measure_interleaved(methods, args.runs, args.slow))
                    for m in ("stream", "pushdown", "auto"):
                        got.setdefault(m, (None, "not run", None, 0))
                    load = os.getloadavg()[0]
                    (stream, _, _, n), (push, _, _, _) = got["stream"], got["pushdown"]
                    auto, chose, _, n_auto = got["auto"]
                    n = max(n, n_auto)
                    better = min(x for x in (stream, push) if x is not None) \
                        if stream or push else None
                    ratio = f"{auto / better:.2f}" if auto and better else "—"
                    rows.append(f"| {spec} | {engine} | {entities:,} x {attrs:,} | {fmt(stream)} | "
                                f"{fmt(push)} | {fmt(auto)} | {chose} | {ratio} | {n} | {load:.2f} |")
                    print(rows[-1], flush=True)
                    reason = AUTO_REASONS.get((engine, entities, attrs, connection))
                    if reason:
                        reasons.append(f"- {spec}, {engine}, {entities:,} x {attrs:,}: {reason}")
                        print(reasons[-1], flush=True)
            finally:
                if proc:
                    proc.terminate()
                    proc.wait()
    Path(args.out).write_text("\n".join(rows + (reasons if len(reasons) > 3 else [])) + "\n")

if __name__ == "__main__":
    main()
