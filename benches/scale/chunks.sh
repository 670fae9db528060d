#!/usr/bin/env bash
# What exists today for a run that must not restart from zero (docs/resume.md, "Is it needed?"):
# a first entity range loaded with if_exists: replace, the rest merged range by range with
# source.changed, one failure in the middle, the loop resumed at the failed range; the result
# compared cell by cell with one uninterrupted run. SQLite, small, under target/scale/chunks/.
#   benches/scale/chunks.sh [entities] [attrs] [ranges]     (default 20000 10 4)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${EAVPIVOT_BIN:-target/release/eavpivot}
entities=${1:-20000} attrs=${2:-10} ranges=${3:-4}
dir=target/scale/chunks
rm -rf "$dir" && mkdir -p "$dir"
db=$dir/chunks.db step=$((entities / ranges))
sqlite3 "$db" <<SQL
CREATE TABLE kv (entity INTEGER NOT NULL, attr TEXT NOT NULL, val TEXT, PRIMARY KEY (entity, attr));
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $((entities * attrs - 1)))
INSERT INTO kv SELECT i / $attrs, printf('attr_%04d', i % $attrs), printf('v%04d_%09d', i % $attrs, i / $attrs)
  FROM n WHERE (i / $attrs) % 7 <> 3 OR i % $attrs < 2;   -- some entities without some attributes
-- an attribute that only the last range has: the merge must add its column
INSERT INTO kv SELECT entity, 'late', 'x' || entity FROM kv WHERE attr = 'attr_0000' AND entity >= $((entities - step));
SQL
# job FILE NAME SOURCE TARGET: one job file; only the source and the target differ.
job() {
  printf 'name: %s\nsource: %s\nentity: [s.entity]\nattribute: s.attr\nvalue: s.val\ntarget: %s\n' \
    "$2" "$3" "$4" > "$dir/$1.yaml"
}
job whole chunks_whole '{ table: kv, alias: s }' '{ table: wide_whole, if_exists: replace }'
job first chunks '{ table: kv, alias: s, where: "s.entity < ${hi}" }' \
  '{ table: wide_chunked, if_exists: replace }'
job rest chunks '{ table: kv, alias: s, changed: "s.entity >= ${lo} AND s.entity < ${hi}" }' \
  '{ table: wide_chunked, if_exists: merge }'
run() { "$bin" -q run "$@" --connection "sqlite:$db" --preview 0; }
run "$dir/whole.yaml"
run "$dir/first.yaml" --var hi=$step
failed=""
lo=$step
while [ $lo -lt $entities ]; do
  hi=$((lo + step))
  if [ -z "$failed" ] && [ $lo -ge $((entities / 2)) ]; then
    # A run that dies in the middle of a range: killed at 50 % of its stream.
    failed=$lo
    set +e
    EAVPIVOT_FAULT_PAUSE=stream:50 "$bin" run "$dir/rest.yaml" --connection "sqlite:$db" \
      --preview 0 --var lo=$lo --var hi=$hi 2> "$dir/killed.err" &
    pid=$!
    for _ in $(seq 300); do grep -q "paused at" "$dir/killed.err" && break; sleep 0.1; done
    grep -q "paused at" "$dir/killed.err" || { echo "the run never reached its pause"; exit 1; }
    kill -9 $pid; wait $pid; echo "range [$lo, $hi) killed with -9 at 50 % of its stream: exit $?"
    set -e
    continue   # the loop resumes at the failed range
  fi
  run "$dir/rest.yaml" --var lo=$lo --var hi=$hi
  lo=$hi
done
# Columns compared by name (a column the merge added comes last), rows as sets.
cols_whole=$(sqlite3 "$db" "SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info('wide_whole') ORDER BY name)")
cols_chunked=$(sqlite3 "$db" "SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info('wide_chunked') ORDER BY name)")
[ "$cols_whole" = "$cols_chunked" ] || { echo "columns differ: $cols_whole / $cols_chunked"; exit 1; }
diff=$(sqlite3 "$db" "SELECT (SELECT COUNT(*) FROM (SELECT $cols_whole FROM wide_whole EXCEPT SELECT $cols_whole FROM wide_chunked))
  + (SELECT COUNT(*) FROM (SELECT $cols_whole FROM wide_chunked EXCEPT SELECT $cols_whole FROM wide_whole)),
  (SELECT COUNT(*) FROM wide_whole), (SELECT COUNT(*) FROM wide_chunked), (SELECT COUNT(*) FROM kv)")
echo "rows differing | rows whole | rows chunked | source rows: $diff"
[ "${diff%%|*}" = 0 ] && echo "same result" || { echo "DIFFERENT"; exit 1; }
