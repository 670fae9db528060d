#!/usr/bin/env bash
# The runs behind BENCHMARKS.md "100 million rows", most important first (the session had an
# hour): each large run right after its 10M reference, so both see the same machine. Each run
# takes the bench lock itself and releases it when done.
set -uo pipefail
cd "$(dirname "$0")/../.."
# STOP_AT (HHMM, UTC): start no run after it (the session's deadline).
run() {
  if [ -n "${STOP_AT:-}" ] && [ "$(date -u +%H%M)" -ge "$STOP_AT" ]; then
    echo "not run (past STOP_AT $STOP_AT): $*"; return
  fi
  python3 benches/scale/scale.py run "$@"
}
run sqlite 1000000x10 stream;     run sqlite 10000000x10 stream
run postgres 1000000x10 stream;   run postgres 10000000x10 stream
run sqlite 100000x100 stream;     run sqlite 300000x100 stream
run postgres 100000x100 stream
run postgres 1000000x10 pushdown; run postgres 10000000x10 pushdown
run sqlite 1000000x10 pushdown;   run sqlite 10000000x10 pushdown
run sqlite 100000x100 pushdown;   run sqlite 300000x100 pushdown
run postgres 100000x100 pushdown
