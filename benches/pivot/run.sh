#!/usr/bin/env bash
# The pivot benchmark (issue 6): builds the release binary, installs polars and DuckDB from
# PyPI into target/bench-venv, and runs benches/pivot/bench.py, which writes BENCHMARKS.md.
#   benches/pivot/run.sh                 # the three 1M-row shapes on sqlite, postgres, mariadb
#   benches/pivot/run.sh --scale         # also 10M x 100 (slow: generation alone takes minutes)
#   benches/pivot/run.sh --engines sqlite --runs 1
#   benches/pivot/run.sh --engines babelfish --shapes 10000x10 --out target/bench-babelfish.md
#     (Babelfish from ../shared/babelfish on 127.0.0.1:1433; labelled Babelfish, not SQL Server)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --locked --bin eavpivot
venv=target/bench-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check polars duckdb pyarrow python-tds
exec "$venv/bin/python" benches/pivot/bench.py "$@"
