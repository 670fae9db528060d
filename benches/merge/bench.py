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
"""
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


def timed(args):
    start = time.perf_counter()
    out = subprocess.run([BIN, "run", *args, "--preview", "0", "--json"], capture_output=True)
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


def main():
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
