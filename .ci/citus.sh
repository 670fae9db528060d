#!/usr/bin/env bash
# Citus for tests/faults/citus.rs and the differential harness's Citus leg: installs the prebuilt
# extension (../shared/citus/install.sh: adds files to the system PostgreSQL 15, idempotent)
# and starts the three-node cluster (coordinator 127.0.0.1:9700, workers 9701/9702; a second
# call finds it running). Prints the URL to export:
#
#   eval "$(bash .ci/citus.sh)"   # sets EAVPIVOT_CITUS_URL
#
# EAVPIVOT_SHARED names the shared folder when it is not ../shared.
# Start time: 7.8 s measured with the cluster already up (install check, cluster.sh's own
# status and worker registration, on a machine loaded by parallel builds); from nothing it adds
# three initdb runs and CREATE EXTENSION. Root, as the other server scripts of .ci.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${EAVPIVOT_SHARED:-../shared}/citus
bash "$shared/install.sh" >&2
bash "$shared/cluster.sh" start >&2
url=postgres://postgres@127.0.0.1:9700/postgres
for _ in $(seq 1 30); do
  if pg_isready -h 127.0.0.1 -p 9700 -q 2>/dev/null; then
    echo "export EAVPIVOT_CITUS_URL=$url"
    exit 0
  fi
  sleep 1
done
echo "ci: the Citus coordinator did not come up on 127.0.0.1:9700 within 30 s" >&2
exit 1
