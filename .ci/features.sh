#!/usr/bin/env bash
# Each database driver alone builds: `cargo check` of the library, the binary and the tests
# with one driver feature (sqlite, postgres, mariadb, mssql) and none of the others, then with
# none at all (dialects only: `script` works, every connection is refused by feature name).
# Usage: bash .ci/features.sh [feature…]   (default: all four, then none)
set -euo pipefail
cd "$(dirname "$0")/.."
features=("$@")
if [ ${#features[@]} -eq 0 ]; then
    features=(sqlite postgres mariadb mssql "")
fi
for feature in "${features[@]}"; do
    label=${feature:-none}
    start=$(date +%s)
    if [ "$feature" = sqlite ]; then
        # The tests need SQLite; the other drivers' tests are cfg'd out.
        cargo check --locked --quiet --no-default-features --features sqlite --lib --bins --tests
    elif [ -n "$feature" ]; then
        cargo check --locked --quiet --no-default-features --features "$feature" --lib --bins
    else
        cargo check --locked --quiet --no-default-features --lib --bins
    fi
    echo "features.sh: --features ${label}: ok ($(( $(date +%s) - start )) s)"
done
