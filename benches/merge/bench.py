#!/usr/bin/env python3
"""Merge benchmark (issue 12): a 1 % delta merged into the target of a 1M-row source, side by
side with a full replace of the same target, on SQLite, PostgreSQL and MariaDB.

Source: 100,000 entities x 10 attributes (1,000,000 key-value rows) with a `modified` column.
1,000 entities (1 %) are changed and marked; then, interleaved, `n` times each:
  replace: the whole source pivoted into a new table swapped in (if_exists: replace);
  merge:   only the changed entities (where: "s.modified >= ${since}", --var since=1) merged
           into the existing target (if_exists: merge, on_missing: keep).
Medians are reported with the ratio replace / merge. Run: python3 benches/merge/bench.py
(builds nothing: run `cargo build --release` first). Prints a Markdown table.

RERUN=1 with BINS="main=<binary> new=<binary>": instead, the whole unchanged source merged again
into the target it made (if_exists: merge, no where: every entity unchanged), each binary once
per round, alternated; medians per binary and the ratio to the first. What it measures: the cost
of a nightly re-merge of a source that did not change (the upsert writing no row, or every row).
"""
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "target", "release", "eavpivot")
ENTITIES, ATTRIBUTES, CHANGED = 100_000, 10, 1_000
RUNS = int(os.environ.get("RUNS", "3"))
PG = "postgres://postgres@127.0.0.1:5432/test"
MARIA = "mariadb://root@127.0.0.1:3306/test"


def psql(sql):
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-qAt", "-v",
                    "ON_ERROR_STOP=1", "-c", sql], check=True, capture_output=True)


def maria(sql):
    subprocess.run(["mariadb", "-h", "127.0.0.1", "-uroot", "test", "-e", sql], check=True,
                   capture_output=True)


def setup_sqlite(path):
    db = sqlite3.connect(path)
    db.executescript("DROP TABLE IF EXISTS mb_kv; DROP TABLE IF EXISTS mb_wide;"
                     "CREATE TABLE mb_kv (entity_id INTEGER, attr TEXT, val TEXT, modified INTEGER);")
    db.executemany("INSERT INTO mb_kv VALUES (?, ?, ?, 0)",
                   ((e, f"a{a}", f"v{e}.{a}") for e in range(1, ENTITIES + 1)
                    for a in range(1, ATTRIBUTES + 1)))
    db.execute("CREATE INDEX mb_kv_m ON mb_kv (modified)")
    db.commit()
    return db


def change_sqlite(db):
    db.execute(f"UPDATE mb_kv SET val = val || 'x', modified = 1 WHERE entity_id % 100 = 0")
    db.commit()


def setup_pg():
    psql("DROP TABLE IF EXISTS mb_kv, mb_wide;"
         "CREATE TABLE mb_kv (entity_id int, attr varchar(10), val varchar(40), modified int);"
         f"INSERT INTO mb_kv SELECT e, 'a' || a, 'v' || e || '.' || a, 0 FROM generate_series(1, {ENTITIES}) e,"
         f" generate_series(1, {ATTRIBUTES}) a; CREATE INDEX mb_kv_m ON mb_kv (modified); ANALYZE mb_kv;")


def setup_maria():
    maria("DROP TABLE IF EXISTS mb_kv, mb_wide;"
          "CREATE TABLE mb_kv (entity_id int, attr varchar(10), val varchar(40), modified int, KEY (modified));"
          f"INSERT INTO mb_kv SELECT e.seq, CONCAT('a', a.seq), CONCAT('v', e.seq, '.', a.seq), 0"
          f" FROM seq_1_to_{ENTITIES} e, seq_1_to_{ATTRIBUTES} a;")


def job(dirname, name, if_exists, where):
    path = os.path.join(dirname, f"{name}.yaml")
    with open(path, "w") as f:
        f.write(f"name: mb\nsource: {{table: mb_kv, alias: s, where: \"{where}\"}}\n"
                "entity: [s.entity_id]\nattribute: s.attr\nvalue: s.val\n"
                f"target: {{table: mb_wide, if_exists: {if_exists}}}\nstrategy: stream\n")
    return path


def timed(args, binary=BIN):
    start = time.perf_counter()
    out = subprocess.run([binary, "run", *args, "--preview", "0", "--json"], capture_output=True)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"eavpivot {' '.join(args)} failed: {out.stderr.decode()}")
    return elapsed, out.stdout.decode()


def bench(engine, url, dirname):
    full = job(dirname, "full", "replace", "1 = 1")
    delta = job(dirname, "delta", "merge", "s.modified >= ${since}")
    timed([full, "--connection", url])  # the initial load
    replace, merge = [], []
    for _ in range(RUNS):
        replace.append(timed([full, "--connection", url])[0])
        t, report = timed([delta, "--connection", url, "--var", "since=1"])
        merge.append(t)
    r, m = statistics.median(replace), statistics.median(merge)
    return f"| {engine} | {r:.2f} s | {m:.2f} s | {r / m:.1f}x |"


def rerun(engine, url, dirname, bins):
    full = job(dirname, "full", "replace", "1 = 1")
    again = job(dirname, "again", "merge", "1 = 1")
    timed([full, "--connection", url])  # the initial load
    times = {name: [] for name, _ in bins}
    merged = {}
    for _ in range(RUNS):
        for name, binary in bins:
            t, report = timed([again, "--connection", url], binary)
            times[name].append(t)
            m = json.loads(report)["merged"][0]
            merged[name] = f"{m['updated']} updated, {m['unchanged']} unchanged"
    first = statistics.median(times[bins[0][0]])
    cells = [f"{statistics.median(times[n]):.2f} s" for n, _ in bins]
    ratios = [f"{statistics.median(times[n]) / first:.2f}" for n, _ in bins[1:]]
    return f"| {engine} | {' | '.join(cells)} | {' | '.join(ratios)} | {merged[bins[-1][0]]} |"


def main_rerun():
    bins = [tuple(b.split("=", 1)) for b in os.environ["BINS"].split()]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "mb.db")
        setup_sqlite(path).close()
        rows.append(rerun("SQLite", f"sqlite:{path}", d, bins))
        setup_pg()
        rows.append(rerun("PostgreSQL", PG + "?sslmode=disable", d, bins))
        psql("DROP TABLE IF EXISTS mb_kv, mb_wide")
        setup_maria()
        rows.append(rerun("MariaDB", MARIA, d, bins))
        maria("DROP TABLE IF EXISTS mb_kv, mb_wide")
    names = [n for n, _ in bins]
    print(f"1M-row source ({ENTITIES:,} entities x {ATTRIBUTES}) merged again unchanged; medians "
          f"of {RUNS} alternated runs per binary, release builds, stream strategy\n")
    print(f"| engine | {' | '.join(names)} | {' | '.join(n + '/' + names[0] for n in names[1:])} | last report |")
    print("|---" * (2 * len(names) + 1) + "|")
    print("\n".join(rows))


def main():
    if os.environ.get("RERUN"):
        return main_rerun()
    if not os.path.exists(BIN):
        sys.exit("build first: cargo build --release --locked")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "mb.db")
        db = setup_sqlite(path)
        change_sqlite(db)
        db.close()
        rows.append(bench("SQLite", f"sqlite:{path}", d))
        setup_pg()
        psql("UPDATE mb_kv SET val = val || 'x', modified = 1 WHERE entity_id % 100 = 0")
        rows.append(bench("PostgreSQL", PG + "?sslmode=disable", d))
        psql("DROP TABLE IF EXISTS mb_kv, mb_wide")
        setup_maria()
        maria("UPDATE mb_kv SET val = CONCAT(val, 'x'), modified = 1 WHERE entity_id % 100 = 0")
        rows.append(bench("MariaDB", MARIA, d))
        maria("DROP TABLE IF EXISTS mb_kv, mb_wide")
    print(f"1M-row source ({ENTITIES:,} entities x {ATTRIBUTES}), {CHANGED:,} entities changed; "
          f"medians of {RUNS} interleaved runs, release binary, stream strategy\n")
    print("| engine | full replace | 1 % delta merge | replace / merge |")
    print("|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
