#!/usr/bin/env bash
# The cost of `column_type: infer` (issues 11 and 20): the same 10-attribute source pivoted with
# `column_type: text` and with `column_type: infer`, on SQLite, PostgreSQL and MariaDB, with
# `--strategy stream` and `--strategy pushdown`; every round runs each binary × strategy × type
# once, alternated, so all cells see the same machine. Then 1,000 nine-digit integer attributes
# on PostgreSQL, which need two text tables (split: auto) but one typed table.
# Prints one line per run (binary, engine, strategy, type, seconds), then per binary × engine ×
# strategy the median of each type and the ratio infer/text.
#   benches/typed/run.sh                  # 1M rows (100,000 entities x 10)
#   benches/typed/run.sh 1000000          # 10M rows (1,000,000 entities x 10)
#   PG=postgres://postgres@127.0.0.1/test RUNS=3 benches/typed/run.sh
#   ENGINES="postgres mariadb" STRATEGIES=pushdown benches/typed/run.sh
#   BINS="main=bin-main/eavpivot new=target/release/eavpivot" benches/typed/run.sh  # side by side
#   SKIP_WIDE=1 benches/typed/run.sh      # without the 1,000-attribute PostgreSQL case
#   LOCK=/work/wt/bench.lock benches/typed/run.sh   # each round under flock (a shared machine)
#   HAND=1 benches/typed/run.sh           # with the hand-written peer in every round (below)
# The hand-written peer ("hand", HAND=1): what a user would run instead of eavpivot's pushdown,
# through the engine's own client: discovery's GROUP BY, then one CREATE TABLE … AS SELECT
# e, MAX(CASE …) … GROUP BY e, with text columns ("text") or cast to the types eavpivot infers
# on that engine ("infer"). No print-back check, no verification: the floor the SQL sets.
set -euo pipefail
cd "$(dirname "$0")/../.."
entities=${1:-100000}
runs=${RUNS:-3}
pg=${PG:-postgres://postgres@127.0.0.1:5432/test}
my=${MY:-mysql://root@127.0.0.1:3306/test}
engines=${ENGINES:-sqlite postgres mariadb}
strategies=${STRATEGIES:-stream pushdown}
bins=${BINS:-new=${BIN:-target/release/eavpivot}}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mariadb_cli() { mariadb -h 127.0.0.1 -u root test "$@"; }
locked() { if [ -n "${LOCK:-}" ]; then flock "$LOCK" "$@"; else "$@"; fi; }

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
values_mariadb="CASE k
  WHEN 0 THEN CAST(e * 7 % 100000 AS CHAR)
  WHEN 1 THEN CAST(e % 1000 - 500 AS CHAR)
  WHEN 2 THEN CONCAT(e % 1000, '.', LPAD(e % 100, 2, '0'))
  WHEN 3 THEN DATE_FORMAT(DATE '2000-01-01' + INTERVAL (e % 9000) DAY, '%Y-%m-%d')
  WHEN 4 THEN DATE_FORMAT(TIMESTAMP '2000-01-01 00:00:00' + INTERVAL (e % 100000000) SECOND, '%Y-%m-%d %H:%i:%s')
  WHEN 5 THEN CONCAT('word', e % 50)
  WHEN 6 THEN LPAD(e % 100000, 5, '0')
  WHEN 7 THEN CAST(e * 1000003 AS CHAR)
  WHEN 8 THEN IF(e % 2 = 0, 'true', 'false')
  ELSE IF(e % 1000 = 0, 'N/A', CAST(e AS CHAR)) END"

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

once() { # once LABEL BIN CONNECTION JOB STRATEGY: one timed run, one result line
  local start end
  start=$(date +%s.%N)
  "$2" run "$4" --connection "$3" --strategy "$5" --preview 0 --json > "$work/out.json"
  end=$(date +%s.%N)
  printf '%s %.2f s tables=%s\n' "$1" "$(echo "$end - $start" | bc)" \
    "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["tables"]))' "$work/out.json")" \
    | tee -a "$work/results"
}

round() { # round ENGINE CONNECTION SOURCE TARGET: every binary x strategy x type once
  for b in $bins; do
    for s in $strategies; do
      for ty in text infer; do
        job "$work/$1_$ty.yaml" "$ty" "$3" "$4" off
        once "${b%%=*} $1 $s $ty" "${b#*=}" "$2" "$work/$1_$ty.yaml" "$s"
      done
    done
  done
}

# hand_sql ENGINE TYPE SOURCE: the hand-written peer's statements (see the top).
hand_sql() {
  local cols="" k cast
  for k in 0 1 2 3 4 5 6 7 8 9; do
    cast=""
    if [ "$2" = infer ]; then
      case $1:$k in
        sqlite:0 | sqlite:1 | sqlite:7) cast=INTEGER ;;
        postgres:0 | postgres:1) cast=integer ;;
        postgres:2) cast="numeric(18,2)" ;;
        postgres:3) cast=date ;;
        postgres:4) cast="timestamp(0)" ;;
        postgres:7) cast=bigint ;;
        postgres:8) cast=boolean ;;
        mariadb:0 | mariadb:1 | mariadb:7) cast=SIGNED ;;
        mariadb:2) cast="DECIMAL(18,2)" ;;
        mariadb:3) cast=DATE ;;
        mariadb:4) cast="DATETIME(0)" ;;
      esac
    fi
    local max="MAX(CASE WHEN a = 'a$k' THEN v END)"
    [ -n "$cast" ] && max="CAST($max AS $cast)"
    cols="$cols, $max AS a$k"
  done
  echo "SELECT a, COUNT(*), COUNT(v) FROM $3 GROUP BY a;
DROP TABLE IF EXISTS typed_bench_hand;
CREATE TABLE typed_bench_hand AS SELECT e$cols FROM $3 GROUP BY e;"
}

hand() { # hand ENGINE SOURCE CLIENT...: the hand-written peer, text and infer, a line each
  local engine=$1 source=$2 ty start end
  shift 2
  for ty in text infer; do
    start=$(date +%s.%N)
    if ! hand_sql "$engine" "$ty" "$source" | "$@" > /dev/null; then
      echo "the hand-written $ty statements failed on $engine" >&2
      exit 1
    fi
    end=$(date +%s.%N)
    printf '%s %.2f s tables=1\n' "hand $engine pushdown $ty" "$(echo "$end - $start" | bc)" | tee -a "$work/results"
  done
}

rows=$((entities * 10))
echo "# ${rows} source rows ($entities entities x 10), $runs rounds; $(uptime)"
for engine in $engines; do
  case $engine in
  sqlite)
    db="$work/bench.db"
    sqlite3 "$db" "CREATE TABLE kv (e INTEGER, a TEXT, v TEXT, PRIMARY KEY (e, a));
      WITH RECURSIVE n(e) AS (SELECT 1 UNION ALL SELECT e + 1 FROM n WHERE e < $entities),
      a(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM a WHERE k < 9)
      INSERT INTO kv SELECT e, 'a' || k, $values_sqlite FROM n, a;"
    for _ in $(seq "$runs"); do locked bash -c "$(declare -f round job once); bins='$bins' strategies='$strategies' work='$work' round sqlite 'sqlite:$db' kv wide"; if [ -n "${HAND:-}" ]; then locked bash -c "$(declare -f hand hand_sql); work='$work' hand sqlite kv sqlite3 -bail '$db'"; fi; done
    rm -f "$db"
    ;;
  postgres)
    psql "$pg" -q -c "DROP TABLE IF EXISTS typed_bench_kv, typed_bench_wide, typed_bench_wide_2;
      CREATE TABLE typed_bench_kv (e INT, a TEXT, v TEXT, PRIMARY KEY (e, a));
      INSERT INTO typed_bench_kv SELECT e, 'a' || k, $values_pg
        FROM generate_series(1, $entities) e, generate_series(0, 9) k; ANALYZE typed_bench_kv;"
    for _ in $(seq "$runs"); do locked bash -c "$(declare -f round job once); bins='$bins' strategies='$strategies' work='$work' round postgres '$pg' typed_bench_kv typed_bench_wide"; if [ -n "${HAND:-}" ]; then locked bash -c "$(declare -f hand hand_sql); work='$work' hand postgres typed_bench_kv psql -X -q -v ON_ERROR_STOP=1 '$pg'"; fi; done
    psql "$pg" -q -c "DROP TABLE IF EXISTS typed_bench_kv, typed_bench_wide, typed_bench_wide_2, typed_bench_hand"
    ;;
  mariadb)
    mariadb_cli -e "DROP TABLE IF EXISTS typed_bench_kv, typed_bench_wide, typed_bench_wide_2;
      CREATE TABLE typed_bench_kv (e INT, a VARCHAR(16), v VARCHAR(64), PRIMARY KEY (e, a));
      INSERT INTO typed_bench_kv SELECT e, CONCAT('a', k), $values_mariadb
        FROM (SELECT CAST(seq AS SIGNED) AS e FROM seq_1_to_$entities) n, (SELECT CAST(seq AS SIGNED) AS k FROM seq_0_to_9) a;
      ANALYZE TABLE typed_bench_kv;" > /dev/null
    for _ in $(seq "$runs"); do locked bash -c "$(declare -f round job once); bins='$bins' strategies='$strategies' work='$work' round mariadb '$my' typed_bench_kv typed_bench_wide"; if [ -n "${HAND:-}" ]; then locked bash -c "$(declare -f hand hand_sql); work='$work' hand mariadb typed_bench_kv mariadb -h 127.0.0.1 -u root test"; fi; done
    mariadb_cli -e "DROP TABLE IF EXISTS typed_bench_kv, typed_bench_wide, typed_bench_wide_2, typed_bench_hand"
    ;;
  esac
done

# Medians and the ratio infer/text per binary x engine x strategy.
python3 - "$work/results" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    b, engine, strategy, ty, secs = line.split()[:5]
    times.setdefault((b, engine, strategy), {}).setdefault(ty, []).append(float(secs))
print("| binary | engine | strategy | text (median) | infer (median) | infer/text |")
print("|---|---|---|---|---|---|")
for (b, engine, strategy), t in times.items():
    text, infer = statistics.median(t["text"]), statistics.median(t["infer"])
    print(f"| {b} | {engine} | {strategy} | {text:.2f} s | {infer:.2f} s | {infer / text:.2f} |")
hands = {e: t for (b, e, s), t in times.items() if b == "hand"}
if hands:
    print("\n| binary | engine | pushdown text / hand text | pushdown infer / hand infer |")
    print("|---|---|---|---|")
    for (b, engine, strategy), t in times.items():
        if b == "hand" or strategy != "pushdown" or engine not in hands:
            continue
        h = hands[engine]
        ratio = lambda ty: statistics.median(t[ty]) / statistics.median(h[ty])
        print(f"| {b} | {engine} | {ratio('text'):.2f} | {ratio('infer'):.2f} |")
PY
echo "# done; $(uptime)"

if [ -z "${SKIP_WIDE:-}" ] && psql "$pg" -qc 'SELECT 1' > /dev/null 2>&1; then
  psql "$pg" -q -c "DROP TABLE IF EXISTS typed_bench_kv, typed_bench_wide, typed_bench_wide_2;
    CREATE TABLE typed_bench_kv (e INT, a TEXT, v TEXT, PRIMARY KEY (e, a));
    INSERT INTO typed_bench_kv SELECT e, 'a' || lpad(k::text, 4, '0'), (100000000 + e * 1000 + k)::text
      FROM generate_series(1, 1000) e, generate_series(0, 999) k; ANALYZE typed_bench_kv;"
  for b in $bins; do
    for ty in text infer; do
      job "$work/pg1k_$ty.yaml" "$ty" typed_bench_kv typed_bench_wide auto
      for _ in $(seq "$runs"); do
        locked bash -c "$(declare -f once); work='$work' once '${b%%=*} postgres-1000x1000 auto $ty' '${b#*=}' '$pg' '$work/pg1k_$ty.yaml' auto"
      done
    done
  done
  psql "$pg" -q -c "DROP TABLE IF EXISTS typed_bench_kv, typed_bench_wide, typed_bench_wide_2"
fi
