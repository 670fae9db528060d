#!/usr/bin/env bash
# The runs behind BENCHMARKS.md "100 million rows", in the order of issue 20 item 4's second
# session: each 100M run right after its 10M reference, so both see the same machine. Each run
# takes the bench lock itself and releases it when done (scale.py run).
#   EAVPIVOT_BIN=bin/eavpivot SCALE_RUNS=benches/scale/runs-2026-12-02b.jsonl benches/scale/queue.sh [step...]
# Steps: pg-stream pg-stream-cache pg-pushdown pg-pushdown-cache sqlite-pushdown pg-wide-stream.
# The sources must exist (scale.py gen); a 100M run may take up to SCALE_TIMEOUT (890 s here).
set -uo pipefail
cd "$(dirname "$0")/../.."
export SCALE_TIMEOUT=${SCALE_TIMEOUT:-890}
# STOP_AT (HHMM, UTC): start no run after it (the session's deadline).
run() {
  if [ -n "${STOP_AT:-}" ] && [ "$(date -u +%H%M)" -ge "$STOP_AT" ]; then
    echo "not run (past STOP_AT $STOP_AT): $*"; return
  fi
  df -h /work | tail -1
  python3 benches/scale/scale.py run "$@"
}
# PostgreSQL's planner with the server's effective_cache_size (4GB, the default) against one
# that knows the table fits in the OS cache: the only difference is the connection's options
# (written without a space: eavpivot re-encodes a URL's space as '+', which the server refuses).
# At 10M rows both settings plan the same index scan / GroupAggregate (EXPLAIN).
cache="-ceffective_cache_size=16GB"
for step in "${@:-pg-stream pg-pushdown sqlite-pushdown}"; do
  for s in $step; do
    case $s in
      pg-stream) run postgres 1000000x10 stream; run postgres 10000000x10 stream ;;
      pg-stream-cache) SCALE_PG_OPTIONS=$cache run postgres 1000000x10 stream
                       SCALE_PG_OPTIONS=$cache run postgres 10000000x10 stream ;;
      pg-pushdown) run postgres 1000000x10 pushdown; run postgres 10000000x10 pushdown ;;
      pg-pushdown-cache) SCALE_PG_OPTIONS=$cache run postgres 1000000x10 pushdown
                         SCALE_PG_OPTIONS=$cache run postgres 10000000x10 pushdown ;;
      sqlite-pushdown) run sqlite 1000000x10 pushdown; run sqlite 10000000x10 pushdown ;;
      pg-wide-stream) run postgres 100000x100 stream; run postgres 1000000x100 stream ;;
      *) echo "unknown step $s" >&2; exit 2 ;;
    esac
  done
done
