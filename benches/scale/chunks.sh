#!/usr/bin/env bash
# What exists today for a run that must not restart from zero (docs/resume.md, "Is it needed?"):
# a first entity range loaded with if_exists: replace, the rest merged range by range with
# source.changed, one failure in the middle, the loop resumed at the failed range; the result
# compared cell by cell with one uninterrupted run. By default on SQLite, small, generated here
# (target/scale/chunks/):
#   benches/scale/chunks.sh [entities] [attrs] [ranges]     (default 20000 10 4)
# At scale, on a source made by `scale.py gen sqlite <E>x<A>` (same columns; its database file
# also gets the two wide tables), with every step timed:
#   CHUNKS_DB=target/scale/scale_kv_1000000x10.db CHUNKS_TABLE=scale_kv_1000000x10 \
#     benches/scale/chunks.sh 1000000 10 10
# PostgreSQL (database test on 127.0.0.1, a source made by `scale.py gen postgres <E>x<A>`),
# where `auto` pushes down, so the killed range dies with its rows loaded, before verification:
#   CHUNKS_DB=postgres CHUNKS_TABLE=scale_kv_1000000x10 CHUNKS_PAUSE=loaded \
#     benches/scale/chunks.sh 1000000 10 10
# CHUNKS_PAUSE: where the killed range dies (EAVPIVOT_FAULT_PAUSE; default stream:50, 50 % of
# the stream). CHUNKS_WAIT: seconds the killed range may take to get there (default 600; a
# PostgreSQL range of 10M rows took 65-70 s before session 13's direct delta).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${EAVPIVOT_BIN:-target/release/eavpivot}
entities=${1:-20000} attrs=${2:-10} ranges=${3:-4}
dir=target/scale/chunks
rm -rf "$dir" && mkdir -p "$dir"
step=$((entities / ranges))
pause=${CHUNKS_PAUSE:-stream:50}
wait=${CHUNKS_WAIT:-600}
kv=${CHUNKS_TABLE:-kv}
# sql TEXT: one statement's result, unaligned, on the engine under test.
if [ "${CHUNKS_DB:-}" = postgres ]; then
  [ -n "${CHUNKS_TABLE:-}" ] || { echo "CHUNKS_DB=postgres needs CHUNKS_TABLE (a scale.py source)" >&2; exit 2; }
  conn=postgres://postgres@127.0.0.1:5432/test
  sql() { psql -X -q -A -t -F '|' -v ON_ERROR_STOP=1 -h 127.0.0.1 -U postgres -d test -c "$1"; }
  columns() { sql "SELECT string_agg(quote_ident(column_name), ',' ORDER BY column_name) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '$1'"; }
else
  db=${CHUNKS_DB:-$dir/chunks.db}
  conn=sqlite:$db
  sql() { sqlite3 "$db" "$1"; }
  columns() { sql "SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info('$1') ORDER BY name)"; }
fi
if [ -n "${CHUNKS_DB:-}" ]; then
  sql "DROP TABLE IF EXISTS wide_whole; DROP TABLE IF EXISTS wide_chunked;"
else
sqlite3 "$db" <<SQL
CREATE TABLE kv (entity INTEGER NOT NULL, attr TEXT NOT NULL, val TEXT, PRIMARY KEY (entity, attr));
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $((entities * attrs - 1)))
INSERT INTO kv SELECT i / $attrs, printf('attr_%04d', i % $attrs), printf('v%04d_%09d', i % $attrs, i / $attrs)
  FROM n WHERE (i / $attrs) % 7 <> 3 OR i % $attrs < 2;   -- some entities without some attributes
-- an attribute that only the last range has: the merge must add its column
INSERT INTO kv SELECT entity, 'late', 'x' || entity FROM kv WHERE attr = 'attr_0000' AND entity >= $((entities - step));
SQL
fi
# job FILE NAME SOURCE TARGET: one job file; only the source and the target differ.
job() {
  printf 'name: %s\nsource: %s\nentity: [s.entity]\nattribute: s.attr\nvalue: s.val\ntarget: %s\n' \
    "$2" "$3" "$4" > "$dir/$1.yaml"
}
job whole chunks_whole "{ table: $kv, alias: s }" '{ table: wide_whole, if_exists: replace }'
job first chunks "{ table: $kv, alias: s, where: \"s.entity < \${hi}\" }" \
  '{ table: wide_chunked, if_exists: replace }'
job rest chunks "{ table: $kv, alias: s, changed: \"s.entity >= \${lo} AND s.entity < \${hi}\" }" \
  '{ table: wide_chunked, if_exists: merge }'
now() { date +%s.%N; }
# run JOB ARGS…: one run, its wall time printed and added to the chunked total.
chunked=0
run() {
  local t0 t
  t0=$(now)
  "$bin" -q run "$@" --connection "$conn" --preview 0
  t=$(echo "$(now) - $t0" | bc)
  echo "$(basename "$1") ${*:2}: $t s"
  [ "$(basename "$1")" = whole.yaml ] || chunked=$(echo "$chunked + $t" | bc)
}
run "$dir/whole.yaml"
run "$dir/first.yaml" --var hi=$step
failed=""
lo=$step
while [ $lo -lt $entities ]; do
  hi=$((lo + step))
  if [ -z "$failed" ] && [ $lo -ge $((entities / 2)) ]; then
    # A run that dies in the middle of a range (at 50 % of its stream, by default).
    failed=$lo
    set +e
    EAVPIVOT_FAULT_PAUSE=$pause "$bin" run "$dir/rest.yaml" --connection "$conn" \
      --preview 0 --var lo=$lo --var hi=$hi 2> "$dir/killed.err" &
    pid=$!
    for _ in $(seq $((wait * 10))); do grep -q "paused at" "$dir/killed.err" && break; sleep 0.1; done
    grep -q "paused at" "$dir/killed.err" || {
      kill -9 $pid 2>/dev/null
      echo "range [$lo, $hi) did not reach its pause ($pause) within ${wait} s (CHUNKS_WAIT)"; exit 1; }
    kill -9 $pid; wait $pid; echo "range [$lo, $hi) killed with -9 at $pause: exit $?"
    set -e
    continue   # the loop resumes at the failed range
  fi
  run "$dir/rest.yaml" --var lo=$lo --var hi=$hi
  lo=$hi
done
echo "chunked: $chunked s in all (the killed range not counted)"
# Columns compared by name (a column the merge added comes last), rows as sets.
cols_whole=$(columns wide_whole)
cols_chunked=$(columns wide_chunked)
[ "$cols_whole" = "$cols_chunked" ] || { echo "columns differ: $cols_whole / $cols_chunked"; exit 1; }
diff=$(sql "SELECT (SELECT COUNT(*) FROM (SELECT $cols_whole FROM wide_whole EXCEPT SELECT $cols_whole FROM wide_chunked) d1)
  + (SELECT COUNT(*) FROM (SELECT $cols_whole FROM wide_chunked EXCEPT SELECT $cols_whole FROM wide_whole) d2),
  (SELECT COUNT(*) FROM wide_whole), (SELECT COUNT(*) FROM wide_chunked), (SELECT COUNT(*) FROM $kv)")
echo "rows differing | rows whole | rows chunked | source rows: $diff"
[ "${diff%%|*}" = 0 ] && echo "same result" || { echo "DIFFERENT"; exit 1; }
