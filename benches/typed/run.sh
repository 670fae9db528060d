#!/usr/bin/env bash
# The cost of `column_type: infer` (issue 11): the same 10-attribute source pivoted with
# `column_type: text` and with `column_type: infer`, strategy auto, on SQLite and PostgreSQL;
# then 1,000 nine-digit integer attributes on PostgreSQL, which need two text tables
# (split: auto) but one typed table. Prints one line per run: engine, shape, type, seconds.
#   benches/typed/run.sh                  # 1M rows (100,000 entities x 10)
#   benches/typed/run.sh 1000000          # 10M rows (1,000,000 entities x 10)
#   PG=postgres://postgres@127.0.0.1/test RUNS=3 benches/typed/run.sh
#   SKIP_SQLITE=1 benches/typed/run.sh   # PostgreSQL only
set -euo pipefail
cd "$(dirname "$0")/../.."
entities=${1:-100000}
runs=${RUNS:-3}
pg=${PG:-postgres://postgres@127.0.0.1:5432/test}
bin=${BIN:-target/release/eavpivot}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Ten attributes, one of each kind of the ladder and its traps.
values_sqlite="CASE k
  WHEN 0 THEN CAST(e * 7 % 100000 AS TEXT)
  WHEN 1 THEN CAST(e % 1000 - 500 AS TEXT)
  WHEN 2 THEN printf('%d.%02d', e % 1000, e % 100)
  WHEN 3 THEN date('2000-01-01', '+' || (e % 9000) || ' days')
  WHEN 4 THEN datetime('2000-01-01', '+' || (e % 100000000) || ' seconds')
  WHEN 5 THEN 'word' || (e % 50)
  WHEN 6 THEN printf('%05d', e % 100000)
  WHEN 7 THEN CAST(e * 1000003 AS TEXT)
  WHEN 8 THEN CASE WHEN e % 2 = 0 THEN 'true' ELSE 'false' END
  ELSE CASE WHEN e % 1000 = 0 THEN 'N/A' ELSE CAST(e AS TEXT) END END"
values_pg="CASE k
  WHEN 0 THEN (e * 7 % 100000)::text
  WHEN 1 THEN (e % 1000 - 500)::text
  WHEN 2 THEN (e % 1000)::text || '.' || lpad((e % 100)::text, 2, '0')
  WHEN 3 THEN to_char(date '2000-01-01' + (e % 9000)::int, 'YYYY-MM-DD')
  WHEN 4 THEN to_char(timestamp '2000-01-01' + (e % 100000000) * interval '1 second', 'YYYY-MM-DD HH24:MI:SS')
  WHEN 5 THEN 'word' || (e % 50)
  WHEN 6 THEN lpad((e % 100000)::text, 5, '0')
  WHEN 7 THEN (e::bigint * 1000003)::text
  WHEN 8 THEN CASE WHEN e % 2 = 0 THEN 'true' ELSE 'false' END
  ELSE CASE WHEN e % 1000 = 0 THEN 'N/A' ELSE e::text END END"

job() { # job FILE TYPE SOURCE TARGET SPLIT
  cat > "$1" <<YAML
name: typed_bench
source: { table: $3 }
entity: [e]
attribute: a
value: v
pivot: { column_type: $2 }
target: { table: $4, if_exists: replace, split: $5 }
YAML
}

timed() { # timed LABEL CONNECTION JOB
  for _ in $(seq "$runs"); do
    local start end
    start=$(date +%s.%N)
    "$bin" run "$3" --connection "$2" --preview 0 --json > "$work/out.json"
    end=$(date +%s.%N)
    printf '%s %.2f s tables=%s\n' "$1" "$(echo "$end - $start" | bc)" \
      "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["tables"]))' "$work/out.json")"
  done
}

rows=$((entities * 10))
db="$work/bench.db"
if [ -z "${SKIP_SQLITE:-}" ]; then
sqlite3 "$db" "CREATE TABLE kv (e INTEGER, a TEXT, v TEXT, PRIMARY KEY (e, a));
  WITH RECURSIVE n(e) AS (SELECT 1 UNION ALL SELECT e + 1 FROM n WHERE e < $entities),
  a(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM a WHERE k < 9)
  INSERT INTO kv SELECT e, 'a' || k, $values_sqlite FROM n, a;"
for ty in text infer; do
  job "$work/$ty.yaml" "$ty" kv wide off
  timed "sqlite ${rows} rows $ty" "sqlite:$db" "$work/$ty.yaml"
done
rm -f "$db"
fi

if psql "$pg" -qc 'SELECT 1' > /dev/null 2>&1; then
  psql "$pg" -q -c "DROP TABLE IF EXISTS typed_bench_kv, typed_bench_wide, typed_bench_wide_2;
    CREATE TABLE typed_bench_kv (e INT, a TEXT, v TEXT, PRIMARY KEY (e, a));
    INSERT INTO typed_bench_kv SELECT e, 'a' || k, $values_pg
      FROM generate_series(1, $entities) e, generate_series(0, 9) k; ANALYZE typed_bench_kv;"
  for ty in text infer; do
    job "$work/pg_$ty.yaml" "$ty" typed_bench_kv typed_bench_wide off
    timed "postgres ${rows} rows $ty" "$pg" "$work/pg_$ty.yaml"
  done
  psql "$pg" -q -c "DROP TABLE IF EXISTS typed_bench_kv, typed_bench_wide, typed_bench_wide_2;
    CREATE TABLE typed_bench_kv (e INT, a TEXT, v TEXT, PRIMARY KEY (e, a));
    INSERT INTO typed_bench_kv SELECT e, 'a' || lpad(k::text, 4, '0'), (100000000 + e * 1000 + k)::text
      FROM generate_series(1, 1000) e, generate_series(0, 999) k; ANALYZE typed_bench_kv;"
  for ty in text infer; do
    job "$work/pg1k_$ty.yaml" "$ty" typed_bench_kv typed_bench_wide auto
    timed "postgres 1000x1000 nine-digit integers $ty" "$pg" "$work/pg1k_$ty.yaml"
  done
  psql "$pg" -q -c "DROP TABLE IF EXISTS typed_bench_kv, typed_bench_wide, typed_bench_wide_2"
else
  echo "postgres at $pg unreachable: skipped"
fi
