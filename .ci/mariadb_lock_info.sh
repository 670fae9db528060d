#!/usr/bin/env bash
# Optional: lets eavpivot name who holds a MariaDB metadata lock (LOCK TABLES, DDL, RENAME)
# that a run waits for. Without the plugin the wait and its timeout are still reported, with
# the server's state and the waiting statement instead of the holder. Idempotent.
set -euo pipefail
status=$(mariadb -h 127.0.0.1 -P 3306 -uroot -Nse \
  "SELECT PLUGIN_STATUS FROM information_schema.ALL_PLUGINS WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO'" || true)
if [ "$status" != "ACTIVE" ]; then
  mariadb -h 127.0.0.1 -P 3306 -uroot -e "INSTALL SONAME 'metadata_lock_info'"
fi
