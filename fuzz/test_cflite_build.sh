#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh as the builder image would, with $SRC and
# $OUT in temporary folders, and checks that every target's binary,
# dictionary and seed zip land in $OUT and that each binary runs its seeds.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export SRC="$tmp/src" OUT="$tmp/out"
mkdir -p "$SRC" "$OUT"
# The image copies the repository to $SRC/serve-command; a link does here
# (and reuses fuzz/target).
ln -s "$repo" "$SRC/serve-command"

# The image's cargo is nightly; here pick nightly, or let stable accept
# nightly flags when it is the only toolchain.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  export RUSTUP_TOOLCHAIN=nightly
else
  export RUSTC_BOOTSTRAP=1
fi
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked

bash "$repo/.clusterfuzzlite/build.sh"

cd "$repo"
mapfile -t targets < <(cargo fuzz list)
[ "${#targets[@]}" -gt 0 ] || { echo "no targets"; exit 1; }
for t in "${targets[@]}"; do
  [ -x "$OUT/$t" ] || { echo "missing binary $OUT/$t"; exit 1; }
  dict=src/command.dict
  case "$t" in *_v2) dict=src/command_v2.dict ;; shell) dict=fuzz/shell.dict ;; *_event) dict=src/event_v2.dict ;; esac
  cmp "$OUT/$t.dict" "$dict" || { echo "bad $t.dict"; exit 1; }
  zip="$OUT/${t}_seed_corpus.zip"
  seeds="$(find "fuzz/seeds/$t" -type f | wc -l)"
  zipped="$(unzip -Z1 "$zip" | grep -vc '/$')"
  [ "$seeds" -gt 0 ] && [ "$seeds" = "$zipped" ] || {
    echo "$zip holds $zipped files, fuzz/seeds/$t $seeds"
    exit 1
  }
  mkdir -p "$tmp/seeds/$t"
  unzip -q "$zip" -d "$tmp/seeds/$t"
  # The binary runs every seed once, with its dictionary, and finds nothing.
  "$OUT/$t" -runs=0 -dict="$OUT/$t.dict" "$tmp/seeds/$t" >"$tmp/$t.log" 2>&1 || {
    tail -n 30 "$tmp/$t.log"
    exit 1
  }
  echo "$t: binary, $t.dict, ${t}_seed_corpus.zip ($zipped seeds) ok"
done
ls -l "$OUT"
