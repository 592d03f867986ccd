#!/usr/bin/env bash
# A short fuzz run of every target, for CI: installs cargo-fuzz when it is
# missing, builds every target with nightly, and runs each for
# FUZZ_SECONDS (default 30) from the committed seeds with the dictionary,
# FUZZ_JOBS (default 2) at a time. Fails on any crash, panic, leak, timeout
# or out-of-memory.
#
#   bash fuzz/ci.sh                 # every target, 30 s each
#   FUZZ_SECONDS=5 bash fuzz/ci.sh decode_line
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${FUZZ_SECONDS:-30}"

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

# cargo-fuzz needs nightly flags. Without a nightly toolchain (only one
# toolchain can be had on some machines), stable is told to accept them.
# FUZZ_TOOLCHAIN=stable forces that.
toolchain="${FUZZ_TOOLCHAIN:-}"
if [ -z "$toolchain" ]; then
  if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    toolchain=nightly
  else
    toolchain=stable
  fi
fi
if [ "$toolchain" = nightly ]; then
  fuzz=(cargo +nightly fuzz)
else
  echo "no nightly: building with RUSTC_BOOTSTRAP=1 on $(rustc --version)"
  export RUSTC_BOOTSTRAP=1
  fuzz=(cargo fuzz)
fi

# Release optimisations with debug assertions (cargo-fuzz's default), so
# an arithmetic overflow is a finding too.
"${fuzz[@]}" build

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <("${fuzz[@]}" list)
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# One target's run, its output in $work/$t.log.
run_one() {
  local t="$1" dict=src/command.dict
  mkdir -p "$work/$t"
  # New inputs go to a scratch corpus; the seeds are only read. A crash
  # leaves its input in fuzz/artifacts/$t/.
  # The later revision's targets get its words too; the event targets the
  # events' (src/event_v2.dict).
  case "$t" in *_v2) dict=src/command_v2.dict ;; shell) dict=fuzz/shell.dict ;; *_event) dict=src/event_v2.dict ;; esac
  # engine_session runs engines on threads: a scoped thread is joined when
  # its closure returns, while its OS thread may still be freeing its start
  # box, which LeakSanitizer then reports now and again as a leak of the
  # input, or, in its check at exit (ASAN_OPTIONS, which -detect_leaks
  # does not reach), as a crash of no input (`crash-da39a3ee...`, the
  # empty input's name, exit status 1). Leaks are not checked there;
  # every other finding is.
  local leaks=1 asan="${ASAN_OPTIONS:-}"
  if [ "$t" = engine_session ]; then
    leaks=0
    asan="detect_leaks=0${asan:+:$asan}"
  fi
  ASAN_OPTIONS="$asan" "${fuzz[@]}" run "$t" "$work/$t" "fuzz/seeds/$t" -- \
    -max_total_time="$secs" -dict="$dict" -print_final_stats=1 -detect_leaks="$leaks" \
    >"$work/$t.log" 2>&1
}
# Two at a time (FUZZ_JOBS): each run is one process on one core, and the
# step's time halves on a two-core machine.
jobs="${FUZZ_JOBS:-2}"
failed=()
for ((k = 0; k < ${#targets[@]}; k += jobs)); do
  batch=("${targets[@]:k:jobs}")
  pids=()
  for t in "${batch[@]}"; do
    run_one "$t" &
    pids+=("$!")
  done
  for j in "${!batch[@]}"; do
    t="${batch[$j]}"
    printf '\n-- %s: %s s\n' "$t" "$secs"
    if wait "${pids[$j]}"; then
      grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec)' "$work/$t.log" || true
      grep -E '#[0-9]+[[:space:]]+DONE' "$work/$t.log" || true
    else
      # The finding's own lines first (a long input's Debug can fill any
      # tail), then the tail; the whole log is kept beside the artifacts.
      mkdir -p "fuzz/artifacts/$t"
      cp "$work/$t.log" "fuzz/artifacts/$t/fuzz.log"
      grep -E -m 20 'panicked at|ERROR: |SUMMARY: |Test unit written|deadly signal' "$work/$t.log" || true
      echo "(the whole log: fuzz/artifacts/$t/fuzz.log)"
      tail -n 60 "$work/$t.log"
      failed+=("$t")
    fi
  done
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in fuzz/artifacts/; see fuzz/README.md)"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${secs} s each, no finding"
