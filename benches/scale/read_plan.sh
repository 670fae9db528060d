#!/bin/bash
# PostgreSQL's ordered read alone (the stream's `SELECT … ORDER BY entity`), timed through psql's
# COPY to /dev/null under one planner setting, with the database's temp bytes and the peak of
# base/pgsql_tmp: at 100M rows the planner picks a parallel seq scan + external sort where at 10M
# it scans the primary key; `SET enable_sort = off` gives the index scan back.
#   flock /work/wt/bench.lock benches/scale/read_plan.sh LABEL 'SET enable_sort = off' TABLE
label=$1; settings=$2; t=$3
q="SELECT s.e0, s.a, s.v FROM (SELECT k.entity AS e0, k.attr AS a, k.val AS v FROM $t k) s ORDER BY s.e0"
P="psql -X -q -At -h 127.0.0.1 -U postgres -d test"
temp="select temp_bytes from pg_stat_database where datname = 'test'"
samples=$(mktemp)
t0=$($P -c "$temp")
s=$(date +%s.%N); l=$(cut -d' ' -f1 /proc/loadavg)
( while sleep 1; do du -sb /var/lib/postgresql/15/main/base/pgsql_tmp 2>/dev/null | cut -f1; done ) > "$samples" &
sampler=$!
$P -c "$settings" -c "COPY ($q) TO STDOUT" > /dev/null
rc=$?
e=$(date +%s.%N); kill $sampler
sleep 1  # the cumulative statistics are flushed within a second
t1=$($P -c "$temp")
peak=$(sort -n "$samples" | tail -1); rm -f "$samples"
echo "$label settings='$settings' rc=$rc load_before=$l load_after=$(cut -d' ' -f1 /proc/loadavg) wall=$(echo "$e - $s" | bc) temp_bytes=$((t1 - t0)) pgsql_tmp_peak=$peak at=$(date -u +%H:%M:%S)"
