"""100 million rows (issue 20 item 4): eavpivot's stream and pushdown at 10M and 100M source
rows on SQLite and PostgreSQL, with wall time, peak RSS and the disk a run needs on the side.

    python3 benches/scale/scale.py gen  postgres 10000000x10      # server-side generation
    python3 benches/scale/scale.py run  postgres 10000000x10 stream
    python3 benches/scale/scale.py drop postgres 10000000x10      # source and wide table
    python3 benches/scale/scale.py report                         # the table for BENCHMARKS.md

Data: `scale_kv_<E>x<A>`, the shape of benches/pivot (entity, attr 'attr_0000', val ~14 bytes,
primary key (entity, attr)), generated inside the engine (generate_series / a recursive CTE), so
the 10M reference and the 100M run read the same kind of table. SQLite: one file per shape,
target/scale/<table>.db (under this worktree, never /tmp), so generating one shape never holds
the write lock of a file another shape's run writes to.

`run` holds the bench lock (`/work/wt/bench.lock`, flock) for that one run only (at most
SCALE_TIMEOUT s, default 590, then the run is interrupted with SIGINT, rolls back, and is logged
as not finished), runs the release binary (EAVPIVOT_BIN) under `/usr/bin/time -v` with
`--verbose` (statement timings), and samples every second, while it runs: bytes used on the file
system, PostgreSQL's pg_wal and pgsql_tmp, SQLite's database, journal and WAL files and its temp
directory, and the 1-minute load. On PostgreSQL it also takes the database's temp files and bytes
(`pg_stat_database`) and the WAL position before and after. It appends one JSON line per run to
SCALE_RUNS (default target/scale/runs.jsonl): rows, engine, strategy, wall, peak RSS, load
average before, during (mean) and after, peak extra disk, `--verbose`'s timed steps.
SCALE_PG_OPTIONS gives every PostgreSQL connection of a run server settings (libpq `options`).
"""

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]
# EAVPIVOT_BIN: a copy of the binary under test (a build elsewhere cannot replace it mid-run).
BIN = Path(os.environ.get("EAVPIVOT_BIN", ROOT / "target" / "release" / "eavpivot"))
WORK = ROOT / "target" / "scale"
# SCALE_RUNS: where the run records go (default target/scale/runs.jsonl).
RUNS = Path(os.environ.get("SCALE_RUNS", WORK / "runs.jsonl"))
# SCALE_TIMEOUT: seconds before a run is stopped (a 100M run may hold the lock up to 15 min).
TIMEOUT = os.environ.get("SCALE_TIMEOUT", "590")
PG_BASE = "postgres://postgres@127.0.0.1:5432/test"
# SCALE_PG_OPTIONS: server settings for every connection of a run (libpq `options`, e.g.
# "-c effective_cache_size=16GB"), to time one plan against another without a code change.
PG_OPTIONS = os.environ.get("SCALE_PG_OPTIONS", "")
PG_URL = PG_BASE + (f"?options={quote(PG_OPTIONS)}" if PG_OPTIONS else "")
PSQL = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", "postgres", "-d", "test"]
PG_DATA = Path("/var/lib/postgresql/15/main")
LOCK = "/work/wt/bench.lock"


def table(entities, attrs):
    return f"scale_kv_{entities}x{attrs}"


def db(entities, attrs):
    return WORK / f"{table(entities, attrs)}.db"


def sh(cmd, stdin=None):
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {r.stderr.strip()[-600:]}")
    return r.stdout


def gen_sql(engine, entities, attrs):
    t, n = table(entities, attrs), entities * attrs
    if engine == "sqlite":
        # Journal off and no syncs for the generation only (the runs use eavpivot's settings).
        return f"""PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144;
DROP TABLE IF EXISTS {t};
CREATE TABLE {t} (entity INTEGER NOT NULL, attr TEXT NOT NULL, val TEXT, PRIMARY KEY (entity, attr));
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {n - 1})
INSERT INTO {t} SELECT i / {attrs}, printf('attr_%04d', i % {attrs}),
  printf('v%04d_%09d', i % {attrs}, i / {attrs}) FROM n;
"""
    return f"""SET maintenance_work_mem = '1GB';
DROP TABLE IF EXISTS {t};
CREATE TABLE {t} (entity BIGINT NOT NULL, attr TEXT NOT NULL, val TEXT);
INSERT INTO {t} SELECT i / {attrs}, 'attr_' || lpad((i % {attrs})::text, 4, '0'),
  'v' || lpad((i % {attrs})::text, 4, '0') || '_' || lpad((i / {attrs})::text, 9, '0')
  FROM generate_series(0, {n - 1}) i;
ALTER TABLE {t} ADD PRIMARY KEY (entity, attr);
VACUUM ANALYZE {t};
"""


def query(engine, sql, shape):
    if engine == "sqlite":
        return sh(["sqlite3", str(db(*shape))], stdin=sql)
    return sh(PSQL + ["-At"], stdin=sql)


def gen(engine, entities, attrs):
    WORK.mkdir(parents=True, exist_ok=True)
    started = time.time()
    query(engine, gen_sql(engine, entities, attrs), (entities, attrs))
    print(f"{engine} {table(entities, attrs)}: {entities * attrs:,} rows generated in "
          f"{time.time() - started:.0f} s", flush=True)


def drop(engine, entities, attrs):
    t = table(entities, attrs)
    if engine == "sqlite":
        db(entities, attrs).unlink(missing_ok=True)
        return
    query(engine, f"DROP TABLE IF EXISTS {t}; DROP TABLE IF EXISTS wide_{t};", (entities, attrs))


def dir_bytes(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def disk_sample(engine, path):
    """Bytes that a run can grow: the file system's used bytes and the engine's own side files."""
    fs = shutil.disk_usage("/work")
    out = {"fs_used": fs.total - fs.free}
    if engine == "postgres":
        out["pg_wal"] = dir_bytes(PG_DATA / "pg_wal")
        out["pgsql_tmp"] = dir_bytes(PG_DATA / "base" / "pgsql_tmp")
    else:
        for suffix in ("", "-journal", "-wal"):
            p = Path(f"{path}{suffix}")
            out[f"db{suffix}"] = p.stat().st_size if p.exists() else 0
        out["tmp"] = dir_bytes(os.environ.get("SQLITE_TMPDIR", "/var/tmp")) + dir_bytes("/tmp")
    return out


def job(engine, entities, attrs):
    t = table(entities, attrs)
    path = WORK / f"job_{engine}_{t}.yaml"
    path.write_text(f"name: {t}\nsource: {{ table: {t}, alias: k }}\nentity: [k.entity]\n"
                    f"attribute: k.attr\nvalue: k.val\n"
                    f"target:\n  table: wide_{t}\n  if_exists: replace\n")
    return path


def run(engine, entities, attrs, strategy):
    url = f"sqlite:{db(entities, attrs)}" if engine == "sqlite" else PG_URL
    # The lock is held for this one run only; a run still going after TIMEOUT is stopped by
    # `timeout` and logged as not finished. It is taken here, not by flock(1) around the
    # binary, so the load and the server's counters are sampled once the machine is ours.
    cmd = ["/usr/bin/time", "-v", "timeout", "-s", "INT", TIMEOUT, str(BIN), "run", str(job(engine, entities, attrs)),
           "--connection", url, "--strategy", strategy, "--preview", "0", "--verbose"]
    lock = open(LOCK, "a")
    waited = time.time()
    fcntl.flock(lock, fcntl.LOCK_EX)
    waited = time.time() - waited
    try:
        rec = timed(engine, entities, attrs, strategy, cmd)
    finally:
        lock.close()
    rec["lock_wait_s"] = round(waited)
    RUNS.parent.mkdir(parents=True, exist_ok=True)
    with open(RUNS, "a") as f:
        f.write(json.dumps(rec) + "\n")
    print(json.dumps(rec), flush=True)


def pg_counters():
    """Database `test`'s temp files and bytes so far and the WAL position (server-wide: other
    sessions' work in the same seconds counts too)."""
    row = sh(PSQL + ["-At", "-F", " ", "-c",
                     "SELECT temp_files, temp_bytes, pg_current_wal_lsn() - '0/0'::pg_lsn, "
                     "current_setting('work_mem'), current_setting('effective_cache_size') "
                     "FROM pg_stat_database WHERE datname = 'test'"]).split()
    return {"temp_files": int(row[0]), "temp_bytes": int(row[1]), "wal_bytes": int(float(row[2])),
            "work_mem": row[3], "effective_cache_size": row[4]}


def timed(engine, entities, attrs, strategy, cmd):
    # Every run creates the wide table afresh (disk: a replace would hold the old 100M-row
    # target and its replacement at once), the 10M reference too, so both measure the same.
    t = table(entities, attrs)
    query(engine, f"DROP TABLE IF EXISTS wide_{t};", (entities, attrs))
    counters = pg_counters() if engine == "postgres" else None
    base = disk_sample(engine, db(entities, attrs))
    peak = dict(base)
    done = threading.Event()

    loads = []

    def sampler():
        while not done.wait(1.0):
            for k, v in disk_sample(engine, db(entities, attrs)).items():
                peak[k] = max(peak[k], v)
            loads.append(float(open("/proc/loadavg").read().split()[0]))

    thread = threading.Thread(target=sampler, daemon=True)
    load_before = open("/proc/loadavg").read().split()[:3]
    thread.start()
    p = subprocess.run(cmd, capture_output=True, text=True)
    done.set()
    thread.join()
    load_after = open("/proc/loadavg").read().split()[:3]
    err = p.stderr
    wide = None
    if engine == "postgres" and p.returncode == 0:
        wide = int(sh(PSQL + ["-At", "-c", f"SELECT pg_total_relation_size('wide_{t}')"]).strip())
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", err)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    secs = None
    if wall:
        parts = [float(x) for x in wall.group(1).split(":")]
        secs = sum(x * 60 ** i for i, x in enumerate(reversed(parts)))
    rec = {
        "engine": engine, "entities": entities, "attrs": attrs, "rows": entities * attrs,
        "strategy": strategy, "ok": p.returncode == 0, "wall_s": secs,
        "rss_mib": int(rss.group(1)) / 1024 if rss else None,
        "load_before": load_before, "load_after": load_after,
        "load_during_mean": round(sum(loads) / len(loads), 2) if loads else None,
        "extra_bytes": {k: peak[k] - base[k] for k in base},
        "peak_bytes": peak, "wide_bytes": wide, "at": time.strftime("%H:%M:%S", time.gmtime()),
        "pg_options": PG_OPTIONS if engine == "postgres" else None,
        "bin": BIN.name,
    }
    if counters:
        time.sleep(1)  # the cumulative statistics are flushed within a second of a commit
        after = pg_counters()
        rec["pg"] = {k: after[k] - counters[k] for k in ("temp_files", "temp_bytes", "wal_bytes")}
        rec["pg"].update(work_mem=counters["work_mem"], effective_cache_size=counters["effective_cache_size"])
    # `--verbose`'s statement timings, for where the time went.
    rec["steps"] = [l.strip() for l in err.splitlines() if re.search(r"\d ms\b|\d(\.\d+)? s\b", l)][:40]
    WORK.mkdir(parents=True, exist_ok=True)
    log = WORK / f"run_{engine}_{entities}x{attrs}_{strategy}_{rec['at'].replace(':', '')}.log"
    log.write_text(err)
    if p.returncode != 0:
        print(err.strip().splitlines()[-25:], file=sys.stderr)
    return rec


def report():
    """The BENCHMARKS.md table from runs.jsonl: each successful run, with its ratio to the 10M
    run of the same engine, strategy and attribute count (the last one logged)."""
    runs = [json.loads(l) for l in open(RUNS) if l.strip()]
    ok = [r for r in runs if r["ok"]]
    key = lambda r: (r["engine"], r["strategy"], r["attrs"], r.get("pg_options") or "")
    ref = {key(r): r for r in ok if r["rows"] == 10_000_000}
    # A run stopped by the lock's time limit (or failed) is listed too: its wall is a bound.
    stopped = [r for r in runs if not r["ok"] and r["wall_s"]]
    gib = lambda b: f"{b / 2**30:.1f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"
    print("| source rows | shape | engine | strategy | wall | ratio to 10M | peak RSS | load before → after | extra disk (peak) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in sorted(ok + stopped, key=lambda r: (r["engine"], r["attrs"], r["strategy"], r["rows"])):
        base, mark = ref.get(key(r)), ""
        if base is None and r.get("pg_options"):
            # No 10M run with these options: the plain one (where its plan is the same, see queue.sh).
            base, mark = ref.get(key({**r, "pg_options": ""})), " to the plain 10M"
        over = "" if r["ok"] else "> "
        ratio = "—" if base is None or r is base else f"{over}{r['wall_s'] / base['wall_s']:.1f}×{mark} ({r['rows'] / base['rows']:g}× rows)"
        extra = r["extra_bytes"]
        pg = r.get("pg")
        side = (f"pg_wal {gib(extra['pg_wal'])}, pgsql_tmp {gib(extra['pgsql_tmp'])}"
                + (f" (temp written {gib(pg['temp_bytes'])}, WAL written {gib(pg['wal_bytes'])})" if pg else "")
                + (f", wide table {gib(r['wide_bytes'])}" if r.get("wide_bytes") else "")
                if r["engine"] == "postgres" else
                f"db file +{gib(extra['db'])}, journal {gib(extra['db-journal'])}, wal {gib(extra['db-wal'])}, tmp {gib(extra['tmp'])}")
        print(f"| {r['rows'] / 1e6:g}M | {r['entities']:,} × {r['attrs']} | {r['engine']} | {r['strategy']}{' (' + r['pg_options'] + ')' if r.get('pg_options') else ''} | "
              f"{'' if r['ok'] else 'not finished: stopped at '}{r['wall_s']:.0f} s | {ratio} | {r['rss_mib']:.0f} MiB | {r['load_before'][0]} → {r['load_after'][0]} | "
              f"file system +{gib(extra['fs_used'])}; {side} |")


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "report":
        return report()
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    what, engine, shape = sys.argv[1:4]
    entities, attrs = map(int, shape.split("x"))
    if what == "gen":
        gen(engine, entities, attrs)
    elif what == "drop":
        drop(engine, entities, attrs)
    elif what == "run":
        run(engine, entities, attrs, sys.argv[4])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
