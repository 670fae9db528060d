#!/usr/bin/env bash
# Side by side: sudoku_solve engine rust (the streaming transform), sql (the recursive CTE)
# and sql_join (one generated join per puzzle over its empty cells), on each backend, one
# puzzle at a time, the engines alternating in every round so load swings hit all three.
# Each cell is the median wall-clock time of the whole `eavpivot run` (process start to exit:
# discovery, solve, write, verify, commit). A run past TIMEOUT seconds is reported as such.
#
#   bash benches/sudoku_engines.sh [ROUNDS] [TIMEOUT]      (default 3 rounds, 300 s)
#
# Backends: SQLite (a temp file), PostgreSQL and MariaDB at EAVPIVOT_PG_URL /
# EAVPIVOT_MARIADB_URL (default: the local ones; skipped when unreachable).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${1:-3}"
timeout_s="${2:-300}"
cargo build --release --quiet --manifest-path "$repo/Cargo.toml"
bin="$repo/target/release/eavpivot"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# name | empty cells | puzzle. The nearly complete ones are the SQLite docs' puzzle with only
# its first 10/20/30/40 blanks left blank (a superset of a unique puzzle's givens: unique).
puzzles=(
  "docs-10|10|53..7....6..195..8198342567859761423426853791713924856961537284287419635345286179"
  "docs-20|20|53..7....6..195....98....6.8...61423426853791713924856961537284287419635345286179"
  "docs-30|30|53..7....6..195....98....6.8...6...34..8.3..17..924856961537284287419635345286179"
  "docs-40|40|53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28.287419635345286179"
  "docs (SQLite docs)|51|53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
  "article (T-SQL)|55|86....3...2...1..7....74...27.9..1...8.....7...1..7.95...56....4..1...5...3....81"
  "AI Escargot|58|1....7.9..3..2...8..96..5....53..9...1..8...26....4...3......1..4......7..7...3.."
  "17 givens (one round)|64|...8.1..........435............7.8........1...2..3....6......75..34........2..6..|1"
)

job() { # engine target
  cat > "$work/$1.yaml" <<EOF
name: bench_$1
source:
  table: SDK_BENCH_GIVENS
entity: [puzzle, row]
attribute: col
value: value
pivot:
  order: natural
  column_type: INTEGER
target:
  table: $2
  if_exists: replace
transforms:
  - sudoku_solve: { engine: $1 }
EOF
}
job rust SDK_BENCH_RUST
job sql SDK_BENCH_SQL
job sql_join SDK_BENCH_JOIN

# Seconds for one run, or "timeout"/"error"/"unsolved".
time_run() { # connection engine
  local start end status=0
  start=$(date +%s.%N)
  timeout "$timeout_s" "$bin" run "$work/$2.yaml" --connection "$1" --json >"$work/out" 2>&1 || status=$?
  end=$(date +%s.%N)
  if [ "$status" -eq 124 ]; then
    cancel_leftovers "$1"
    echo timeout
  elif grep -q 'empty cells:' "$work/out"; then
    echo refused
  elif [ "$status" -ne 0 ]; then
    echo error
  elif grep -Eq '"solved": ?1\b' "$work/out"; then
    echo "$end - $start" | bc
  else
    # A run that wrote no solved grid is not a time for solving it.
    echo unsolved
  fi
}

# Killing the client does not stop the server's statement: cancel this benchmark's own
# INSERT, or it keeps a core busy and holds its locks through the runs that follow.
cancel_leftovers() { # connection
  case "$1" in
    postgres:*) psql "$1" -X -q -At -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'INSERT INTO SDK_BENCH_%' AND pid <> pg_backend_pid()" >/dev/null ;;
    mariadb:*)
      for id in $(mariadb_cmd "$1" -N -e "SELECT id FROM information_schema.processlist WHERE info LIKE 'INSERT INTO SDK_BENCH_%'"); do
        mariadb_cmd "$1" -e "KILL QUERY $id" || true
      done ;;
  esac
}

# The median of the timed runs, or the first failure when none finished.
summary() {
  local ok
  ok=$(printf '%s' "$1" | grep -E '^[0-9.]+$' || true)
  if [ -n "$ok" ]; then
    printf '%s\n' "$ok" | sort -g | awk '{v[NR]=$0} END {print v[int((NR+1)/2)]}'
  else
    printf '%s' "$1" | head -1
  fi
}

fmt() { case "$1" in timeout) echo ">${timeout_s} s";; error|unsolved|refused|-) echo "$1";; *) printf '%.3f s' "$1";; esac; }

ratio() { # a b -> a/b
  case "$1$2" in *[a-z-]*) echo "-";; *) printf '%.1f×' "$(echo "$1 / $2" | bc -l)";; esac
}

bench_backend() { # label connection
  local label="$1" conn="$2"
  echo
  echo "### $label"
  echo
  echo "| puzzle | empty cells | rust | sql (CTE) | sql_join | sql_join / rust | sql_join / sql |"
  echo "|---|---|---|---|---|---|---|"
  for entry in "${puzzles[@]}"; do
    IFS='|' read -r name empty line once <<<"$entry"
    echo "$line" > "$work/puzzle.txt"
    reset_givens "$conn" >/dev/null 2>&1
    local rust="" sql="" sql_join=""
    for _ in $(seq "${once:-$rounds}"); do
      rust+="$(time_run "$conn" rust)"$'\n'
      sql+="$(time_run "$conn" sql)"$'\n'
      sql_join+="$(time_run "$conn" sql_join)"$'\n'
    done
    local r s j
    r=$(summary "$rust"); s=$(summary "$sql"); j=$(summary "$sql_join")
    echo "| $name | $empty | $(fmt "$r") | $(fmt "$s") | $(fmt "$j") | $(ratio "$j" "$r") | $(ratio "$j" "$s") |"
  done
}

# The givens table holds exactly the puzzle in $work/puzzle.txt.
reset_givens() { # connection
  local conn="$1"
  case "$conn" in
    sqlite:*) sqlite3 "${conn#sqlite:}" "DROP TABLE IF EXISTS SDK_BENCH_GIVENS; DROP TABLE IF EXISTS SDK_BENCH_GIVENS_NEW" ;;
    postgres:*) psql "$conn" -X -q -c "DROP TABLE IF EXISTS SDK_BENCH_GIVENS; DROP TABLE IF EXISTS SDK_BENCH_GIVENS_NEW" ;;
    mariadb:*) mariadb_cmd "$conn" -e "DROP TABLE IF EXISTS SDK_BENCH_GIVENS; DROP TABLE IF EXISTS SDK_BENCH_GIVENS_NEW" ;;
  esac
  "$bin" sudoku --import "$work/puzzle.txt" --connection "$conn" --table SDK_BENCH_GIVENS >/dev/null
}

mariadb_cmd() { # mariadb://user@host:port/db args...
  local url="${1#*://}"; shift
  local user="${url%%@*}" rest="${url#*@}"
  local hostport="${rest%%/*}" db="${rest#*/}"
  mariadb -h "${hostport%%:*}" -P "${hostport##*:}" -u "${user%%:*}" "$db" "$@"
}

echo "## sudoku_solve engines side by side ($(date -u '+%Y-%m-%d %H:%M') UTC, $rounds rounds, median)"
touch "$work/bench.db"
bench_backend "SQLite" "sqlite:$work/bench.db"
pg="${EAVPIVOT_PG_URL:-postgres://postgres@127.0.0.1:5432/test}"
if psql "$pg" -X -q -c 'SELECT 1' >/dev/null 2>&1; then
  bench_backend "PostgreSQL" "$pg"
  psql "$pg" -X -q -c "DROP TABLE IF EXISTS SDK_BENCH_GIVENS, SDK_BENCH_RUST, SDK_BENCH_RUST_status, SDK_BENCH_SQL, SDK_BENCH_JOIN"
else
  echo; echo "(PostgreSQL at $pg unreachable: skipped)"
fi
my="${EAVPIVOT_MARIADB_URL:-mariadb://root@127.0.0.1:3306/test}"
if mariadb_cmd "$my" -e 'SELECT 1' >/dev/null 2>&1; then
  bench_backend "MariaDB" "$my"
  mariadb_cmd "$my" -e "DROP TABLE IF EXISTS SDK_BENCH_GIVENS, SDK_BENCH_RUST, SDK_BENCH_RUST_status, SDK_BENCH_SQL, SDK_BENCH_JOIN"
else
  echo; echo "(MariaDB unreachable: skipped)"
fi
