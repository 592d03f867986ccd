#!/bin/bash -eu
# Builds every fuzz target for ClusterFuzzLite / OSS-Fuzz and puts in $OUT,
# per target: the binary, `<target>.dict` (src/command.dict; for a `_v2`
# target src/command_v2.dict; for `shell` fuzz/shell.dict; for an `_event`
# target src/event_v2.dict), and
# `<target>_seed_corpus.zip` (fuzz/seeds/<target>/).
#
# Run here with temporary $SRC and $OUT: bash fuzz/test_cflite_build.sh.
cd "$SRC/serve-command"

# Optimised, with debug assertions: an arithmetic overflow is a finding.
cargo fuzz build -O --debug-assertions

triple="${CARGO_BUILD_TARGET:-x86_64-unknown-linux-gnu}"
bin_dir="fuzz/target/$triple/release"
for target in $(cargo fuzz list); do
  cp "$bin_dir/$target" "$OUT/"
  # The later revision's targets get its words too; the event targets the
  # events'.
  dict=src/command.dict
  case "$target" in *_v2) dict=src/command_v2.dict ;; shell) dict=fuzz/shell.dict ;; *_event) dict=src/event_v2.dict ;; esac
  cp "$dict" "$OUT/$target.dict"
  rm -f "$OUT/${target}_seed_corpus.zip"
  (cd "fuzz/seeds/$target" && zip -q -X -r "$OUT/${target}_seed_corpus.zip" .)
done
