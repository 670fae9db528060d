#!/usr/bin/env bash
# Issue 20 item 3: can the type ladder's shape classes be computed on the server, in
# discovery's own scan, instead of shipping every value to eavpivot? Times, on the server
# alone (no client reads the rows: PostgreSQL `COPY (…) TO '/dev/null'`, MariaDB a SELECT
# of aggregates; MariaDB's `ship` goes to the mariadb client), the statements such a design would run against the two that run today,
# over the typed bench's 1M rows (benches/typed/run.sh's data: 100,000 entities x 10 kinds):
#   text     discovery's text GROUP BY a (what a text run scans)
#   ship     the typed discovery's scan: a, length, v, e for every row (what infer reads)
#   regex1   GROUP BY a with ONE regular-expression count (an integer test)
#   regex4   GROUP BY a with four (integer, decimal, date, timestamp shapes) and max length
#   shapes   GROUP BY a, the value with every digit made 9 (shape classes by translate/REPLACE)
# Each statement RUNS times, alternated per round; prints medians and the ratio to `text`.
#   bash benches/typed/shape_classes.sh            # PostgreSQL and MariaDB at 127.0.0.1
#   RUNS=5 ENGINES=postgres bash benches/typed/shape_classes.sh
set -euo pipefail
runs=${RUNS:-5}
engines=${ENGINES:-postgres mariadb}
entities=${ENTITIES:-100000}
cd "$(dirname "$0")/../.."
pg() { psql -X -q -h 127.0.0.1 -U postgres test "$@"; }
my() { mariadb -h 127.0.0.1 -u root test "$@"; }

values_pg=$(sed -n '/^values_pg="/,/END"$/p' benches/typed/run.sh | sed '1s/^values_pg="//; $s/"$//')
values_mariadb=$(sed -n '/^values_mariadb="/,/END"$/p' benches/typed/run.sh | sed '1s/^values_mariadb="//; $s/"$//')

int='^-?(0|[1-9][0-9]*)$'
dec='^-?(0|[1-9][0-9]*)[.][0-9]+$'
date='^[0-9]{4}-[0-9]{2}-[0-9]{2}$'
ts='^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,6})?$'

declare -A sql
sql_pg() {
  sql[text]="COPY (SELECT a, COUNT(*), COUNT(v), MIN(octet_length(v)), MAX(octet_length(v)) FROM shape_kv GROUP BY a) TO '/dev/null'"
  sql[ship]="COPY (SELECT a, octet_length(v), v, e FROM shape_kv) TO '/dev/null'"
  sql[regex1]="COPY (SELECT a, COUNT(*), COUNT(*) FILTER (WHERE v ~ '$int') FROM shape_kv GROUP BY a) TO '/dev/null'"
  sql[regex4]="COPY (SELECT a, COUNT(*), MAX(octet_length(v)), COUNT(*) FILTER (WHERE v ~ '$int'), COUNT(*) FILTER (WHERE v ~ '$dec'), COUNT(*) FILTER (WHERE v ~ '$date'), COUNT(*) FILTER (WHERE v ~ '$ts') FROM shape_kv GROUP BY a) TO '/dev/null'"
  sql[shapes]="COPY (SELECT a, translate(v, '012345678', '999999999'), COUNT(*), MIN(v) FROM shape_kv GROUP BY 1, 2) TO '/dev/null'"
}
sql_mariadb() {
  local nines="REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(v, '0', '9'), '1', '9'), '2', '9'), '3', '9'), '4', '9'), '5', '9'), '6', '9'), '7', '9'), '8', '9')"
  sql[text]="SELECT COUNT(*) FROM (SELECT a, COUNT(*), COUNT(v), MIN(LENGTH(v)), MAX(LENGTH(v)) FROM shape_kv GROUP BY a) x"
  # Shipped to the mariadb client (--quick: row by row, as eavpivot reads): a lower bound
  # of what a client pays, since it is C and prints to /dev/null.
  sql[ship]="SELECT a, LENGTH(v), v, e FROM shape_kv"
  sql[regex1]="SELECT COUNT(*) FROM (SELECT a, COUNT(*), SUM(v REGEXP '$int') FROM shape_kv GROUP BY a) x"
  sql[regex4]="SELECT COUNT(*) FROM (SELECT a, COUNT(*), MAX(LENGTH(v)), SUM(v REGEXP '$int'), SUM(v REGEXP '$dec'), SUM(v REGEXP '$date'), SUM(v REGEXP '$ts') FROM shape_kv GROUP BY a) x"
  sql[shapes]="SELECT COUNT(*) FROM (SELECT a, $nines AS s, COUNT(*), MIN(v) FROM shape_kv GROUP BY a, s) x"
}

names=(text ship regex1 regex4 shapes)
for engine in $engines; do
  case $engine in
    postgres)
      pg -c "DROP TABLE IF EXISTS shape_kv; CREATE TABLE shape_kv (e INT, a TEXT, v TEXT, PRIMARY KEY (e, a));
        INSERT INTO shape_kv SELECT e, 'a' || k, $values_pg FROM generate_series(1, $entities) e, generate_series(0, 9) k;
        ANALYZE shape_kv;"
      sql_pg
      timed() { local s; s=$(date +%s.%N); pg -c "${sql[$1]}" > /dev/null; echo "$(date +%s.%N) - $s" | bc; }
      ;;
    mariadb)
      my -e "DROP TABLE IF EXISTS shape_kv; CREATE TABLE shape_kv (e INT, a VARCHAR(16), v VARCHAR(64), PRIMARY KEY (e, a));
        INSERT INTO shape_kv SELECT e, CONCAT('a', k), $values_mariadb
        FROM (SELECT CAST(seq AS SIGNED) AS e FROM seq_1_to_$entities) n, (SELECT CAST(seq AS SIGNED) AS k FROM seq_0_to_9) a;
        ANALYZE TABLE shape_kv;" > /dev/null
      sql_mariadb
      timed() { local s; s=$(date +%s.%N); my --quick -e "${sql[$1]}" > /dev/null; echo "$(date +%s.%N) - $s" | bc; }
      ;;
  esac
  declare -A all=()
  for _ in $(seq "$runs"); do
    for n in "${names[@]}"; do all[$n]+="$(timed "$n") "; done
  done
  median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  base=$(echo "${all[text]}" | median)
  echo "## $engine ($((entities * 10)) rows, median of $runs, load $(cut -d' ' -f1 /proc/loadavg))"
  for n in "${names[@]}"; do
    m=$(echo "${all[$n]}" | median)
    printf '%-7s %6.3f s  %5.2fx text\n' "$n" "$m" "$(echo "$m / $base" | bc -l)"
  done
  case $engine in
    postgres) pg -c "DROP TABLE shape_kv" ;;
    mariadb) my -e "DROP TABLE shape_kv" ;;
  esac
  unset all
done
