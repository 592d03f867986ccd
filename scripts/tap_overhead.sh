#!/usr/bin/env bash
# The tap's cost (issue 32): forwarding 100 MiB of command lines to an
# engine that reads and discards them (`sh -c 'cat >/dev/null'`), through
# `serve-command tap` and through the bare pipe, and the tap's peak memory.
# Also the floor of any proxy in user space: a plain `cat` in the middle,
# one more pipe hop with no judging.
# The goal: at most 1.5x the bare pipe's time, memory bounded by the line
# limit. A measurement, not a test: run it by hand on a quiet machine.
#
#   bash scripts/tap_overhead.sh [MiB] [runs]
#
# Builds the release binary (-j1), writes two inputs under $TMPDIR (small
# lines only, and mixed with long prompts), then for each times each
# pipeline `runs` times (default 5), alternating, by the wall clock, and
# prints every run, the medians and their ratios.
# Also times the tap with --log /dev/null (every record formatted and
# written) and reports the tap's maximum resident set size (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
mib="${1:-100}"
runs="${2:-5}"

cargo build --release -j1 --features cli --quiet
bin="$(pwd)/target/release/serve-command"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# What controllers send: short commands and prompts of a few hundred
# bytes (`small`), and the same with a 12 KiB pasted prompt after each six
# (`mixed`, most of its bytes in the long prompts). Each line canonical, so
# the tap reports nothing and the time is the forwarding and the judging.
{
  "$bin" encode prompt "Why does the test in src/lib.rs fail after the last change? Look at the error first, then at the diff, and keep the public API unchanged."
  "$bin" encode steer "Also run clippy" --submission-id sub-1
  "$bin" encode jobs-snapshot req-1
  "$bin" encode cancel
  "$bin" encode goal set "cargo test passes" --auto
  "$bin" encode approval appr-7 --allow
} >"$work/small.block"
{
  cat "$work/small.block"
  head -c 12288 /dev/zero | tr '\0' 'x' | "$bin" encode prompt -
} >"$work/mixed.block"

# One run: the wall-clock seconds of `cat input | PIPELINE`.
seconds() {
  local start end
  start=$(date +%s.%N)
  eval "$1"
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { echo "$1 / $2" | bc -l; }

for mix in small mixed; do
  input="$work/$mix.jsonl"
  block="$work/$mix.block"
  block_size=$(stat -c %s "$block")
  copies=$(( (mib * 1024 * 1024 + block_size - 1) / block_size ))
  # Doubled until big enough, then cut to whole blocks.
  cp "$block" "$input"
  while [ "$(stat -c %s "$input")" -lt $((copies * block_size)) ]; do
    cat "$input" "$input" >"$input.2" && mv "$input.2" "$input"
  done
  head -c $((copies * block_size)) "$input" >"$input.2" && mv "$input.2" "$input"
  size=$(stat -c %s "$input")
  lines=$(wc -l <"$input")
  echo "== $mix: $size bytes, $lines lines ($copies copies of a $block_size-byte block)"

  engine="sh -c 'cat >/dev/null'"
  bare="cat '$input' | $engine"
  floor="cat '$input' | cat | $engine"
  tap="cat '$input' | '$bin' tap -- $engine"
  logged="cat '$input' | '$bin' tap --log /dev/null -- $engine"
  # Warm the page cache and the binaries.
  eval "$bare"
  eval "$tap" 2>/dev/null
  : >"$work/bare" >"$work/floor" >"$work/tap" >"$work/logged"
  for run in $(seq "$runs"); do
    b=$(seconds "$bare")
    f=$(seconds "$floor")
    t=$(seconds "$tap 2>/dev/null")
    l=$(seconds "$logged 2>/dev/null")
    printf 'run %d: bare %.3f s, cat in the middle %.3f s, tap %.3f s, tap --log /dev/null %.3f s\n' "$run" "$b" "$f" "$t" "$l"
    echo "$b" >>"$work/bare"
    echo "$f" >>"$work/floor"
    echo "$t" >>"$work/tap"
    echo "$l" >>"$work/logged"
  done
  mb=$(median <"$work/bare")
  mf=$(median <"$work/floor")
  mt=$(median <"$work/tap")
  ml=$(median <"$work/logged")
  printf 'median: bare %.3f s; cat in the middle %.3f s (%.2fx); tap %.3f s (%.2fx the bare pipe, %.2fx cat in the middle); tap --log /dev/null %.3f s (%.2fx); goal: tap <= 1.5x the bare pipe\n' \
    "$mb" "$mf" "$(ratio "$mf" "$mb")" "$mt" "$(ratio "$mt" "$mb")" "$(ratio "$mt" "$mf")" "$ml" "$(ratio "$ml" "$mb")"
done

# Peak memory of the tap alone on the mixed input, at the default limit
# and at 1 MiB.
for limit in 64MiB 1MiB; do
  rss=$( { cat "$work/mixed.jsonl" | /usr/bin/time -f '%M' "$bin" tap --max-line-len "$limit" -- sh -c 'cat >/dev/null'; } 2>&1 | tail -n 1)
  echo "tap --max-line-len $limit: max RSS $rss KiB"
done
