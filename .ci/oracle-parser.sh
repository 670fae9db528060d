#!/usr/bin/env bash
# The independent Oracle parser for tests/golden/oracle_parse.rs (suite golden): sqlglot (pure Python, pinned) in a
# virtual environment under target/ (never committed). Idempotent: a venv that already holds
# the pinned version is left as it is. The test finds it at target/oracle-parser-venv, or
# wherever EAVPIVOT_ORACLE_PARSER_VENV points.
set -euo pipefail
cd "$(dirname "$0")/.."

SQLGLOT_VERSION=30.31.0
venv=${EAVPIVOT_ORACLE_PARSER_VENV:-target/oracle-parser-venv}

if [[ -x $venv/bin/python ]] &&
  [[ $("$venv/bin/python" -c 'import sqlglot; print(sqlglot.__version__)' 2>/dev/null) == "$SQLGLOT_VERSION" ]]; then
  echo "oracle-parser: sqlglot $SQLGLOT_VERSION already in $venv"
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "sqlglot==$SQLGLOT_VERSION"
echo "oracle-parser: sqlglot $SQLGLOT_VERSION installed in $venv"
