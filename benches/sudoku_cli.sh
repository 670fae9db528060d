#!/usr/bin/env bash
# Whole-process Sudoku solving: `eavpivot sudoku --file SET` against the `sudoku` crate's
# equivalent program, same files, same answers, start-up and I/O included.
#
# The peer: the `sudoku` crate (0.8, a JCZSolve port) ships no solving program of its own
# (its examples are one block-format puzzle and Project Euler 96), so this script builds the
# minimal equivalent main in a throwaway crate under target/ (the crate is AGPL-3.0 and must
# never enter eavpivot's dependency tree): read the file line by line, skip blank and `#`
# lines, `Sudoku::from_str_line`, `solutions_up_to_buffer(.., 2)`, print the solution line or
# `no_solution` / `multiple_solutions` / `invalid` through a locked, buffered stdout — the
# same output as eavpivot's, checked byte for byte before timing.
#
# Timing: per set, ROUNDS rounds, each running both programs (order alternating) with
# output to /dev/null; wall time and user CPU of the child from getrusage; medians and the
# ratio eavpivot / peer (below 1 = eavpivot faster). Each set's timed rounds hold
# `flock /work/wt/bench.lock` (a few seconds per set). Then instruction counts under
# `valgrind --tool=callgrind` (load-independent) on the first CALLGRIND_PUZZLES puzzles of
# each set, both programs.
#
#   bash benches/sudoku_cli.sh [DATA_DIR] [ROUNDS]   (default ../shared/data/sudoku, 7)
#   EAVPIVOT_ARGS="--threads 1"    extra arguments for eavpivot (e.g. one solving thread)
#   EAVPIVOT_BIN=/path/eavpivot    time that binary (e.g. an earlier build) instead of building
#   CALLGRIND_PUZZLES=0            skip the instruction counts
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
data="${1:-$repo/../shared/data/sudoku}"
rounds="${2:-7}"
target="${CARGO_TARGET_DIR:-$repo/target}"
lock="${BENCH_LOCK:-/work/wt/bench.lock}"
callgrind_puzzles="${CALLGRIND_PUZZLES:-3000}"
sets=(17_clue.txt forum_hardest_1905_11plus.txt)

work="$target/sudoku-cli-peer"
mkdir -p "$work/src"
cat > "$work/Cargo.toml" <<'EOF'
[package]
name = "sudoku-cli-peer"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
sudoku = "0.8"
EOF
cat > "$work/src/main.rs" <<'EOF'
use std::io::{BufRead, BufReader, BufWriter, Write};

use sudoku::Sudoku;

fn main() {
    let path = std::env::args().nth(1).expect("usage: sudoku-cli-peer FILE");
    let file = std::fs::File::open(&path).expect("open the puzzle file");
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for line in BufReader::new(file).lines() {
        let line = line.expect("read a line");
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Ok(sudoku) = Sudoku::from_str_line(line) else {
            writeln!(out, "invalid").expect("write");
            continue;
        };
        let mut found = [[0u8; 81]; 2];
        match sudoku.solutions_up_to_buffer(&mut found, 2) {
            0 => writeln!(out, "no_solution"),
            1 => writeln!(out, "{}", Sudoku::from_bytes(found[0]).expect("a solution")),
            _ => writeln!(out, "multiple_solutions"),
        }
        .expect("write");
    }
    out.flush().expect("flush");
}
EOF
cargo build --quiet --release --manifest-path "$work/Cargo.toml" --target-dir "$work/target"
ours="${EAVPIVOT_BIN:-}"
if [ -z "$ours" ]; then
  cargo build --quiet --release --manifest-path "$repo/Cargo.toml" --bin eavpivot
  ours="$target/release/eavpivot"
fi
peer="$work/target/release/sudoku-cli-peer"
read -r -a extra <<< "${EAVPIVOT_ARGS:-}"

for set in "${sets[@]}"; do
  cmp <("$ours" sudoku --file "$data/$set" "${extra[@]}") <("$peer" "$data/$set") \
    || { echo "outputs differ on $set" >&2; exit 1; }
done
echo "outputs identical on ${sets[*]}; eavpivot args: sudoku --file SET ${extra[*]}"
echo

echo "| set | puzzles | eavpivot wall (s) | peer wall (s) | wall ratio | eavpivot user CPU (s) | peer user CPU (s) | user ratio | n | load before → after |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for set in "${sets[@]}"; do
  before="$(cut -d' ' -f1-3 /proc/loadavg)"
  row="$(flock "$lock" python3 - "$rounds" "$data/$set" "$ours" "$peer" "${extra[@]}" <<'EOF'
import os, resource, statistics, subprocess, sys, time

rounds, path, ours, peer, extra = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
commands = {"ours": [ours, "sudoku", "--file", path, *extra], "peer": [peer, path]}
wall = {k: [] for k in commands}
user = {k: [] for k in commands}
for r in range(rounds):
    order = ["ours", "peer"] if r % 2 == 0 else ["peer", "ours"]
    for name in order:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        start = time.perf_counter()
        subprocess.run(commands[name], stdout=subprocess.DEVNULL, check=True)
        wall[name].append(time.perf_counter() - start)
        user[name].append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before)
m = {k: (statistics.median(wall[k]), statistics.median(user[k])) for k in commands}
puzzles = sum(1 for l in open(path) if l.strip() and not l.lstrip().startswith("#"))
print(f"| {os.path.basename(path)} | {puzzles:,} | {m['ours'][0]:.3f} | {m['peer'][0]:.3f} | "
      f"{m['ours'][0] / m['peer'][0]:.2f} | {m['ours'][1]:.3f} | {m['peer'][1]:.3f} | "
      f"{m['ours'][1] / m['peer'][1]:.2f} | {rounds}", end="")
EOF
)"
  echo "$row | $before → $(cut -d' ' -f1-3 /proc/loadavg) |"
done

if [ "$callgrind_puzzles" -gt 0 ]; then
  echo
  echo "Instructions (callgrind, first $callgrind_puzzles puzzles of each set, whole process):"
  echo
  echo "| set | eavpivot | peer | ratio |"
  echo "|---|---|---|---|"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  for set in "${sets[@]}"; do
    awk -v n="$callgrind_puzzles" 'NF && !/^#/ { print; if (++c == n) exit }' "$data/$set" > "$tmp/$set"
    count() {
      valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$@" > /dev/null 2> "$tmp/log"
      sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/log"
    }
    a="$(count "$ours" sudoku --file "$tmp/$set" "${extra[@]}")"
    b="$(count "$peer" "$tmp/$set")"
    python3 -c "import sys; a, b = int(sys.argv[2]), int(sys.argv[3]); print(f'| {sys.argv[1]} | {a:,} | {b:,} | {a / b:.2f} |')" "$set" "$a" "$b"
  done
fi
echo
echo "(load average now: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores)"
