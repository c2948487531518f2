#!/usr/bin/env bash
# Seed the fuzz corpora from the bundled rules and examples (and game logs played from the
# examples). Run from anywhere; writes compiler/fuzz/corpus/<target>/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
corpus="$here/corpus"
mkdir -p "$corpus/parse" "$corpus/compile" "$corpus/prob" "$corpus/log" "$corpus/resolve"
# Each file is cut into pieces of at most campaign.sh's -max_len (split.awk says why).
max_len=4096
n=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
while IFS= read -r -d '' f; do
  awk -v max="$max_len" -v out="$tmp/$(echo "${f#"$root"/}" | tr '/' '_')" -f "$here/split.awk" "$f"
  n=$((n + 1))
done < <(find "$root/rules" "$root/examples" "$root/stdlib" "$root/tests/diagnostics" -name '*.sand' -print0)
for t in parse compile prob; do cp "$tmp"/* "$corpus/$t/"; done
echo "seeded $(ls "$tmp" | wc -l) pieces of $n .sand files into parse, compile and prob"
# Logs: play bundled scenarios with the debug binary, if it is built.
bin="${SANDTABLE_BIN:-$root/target/debug/sandtable}"
if [ -x "$bin" ]; then
  logs=0
  for game in "rules/plastic_battle total-destruction" "examples/scenario.sand the-cache" \
      "examples/scenario.sand meeting" "examples/tutorial/paddy_patrol into-the-paddies"; do
    set -- $game
    for seed in 1 2 3; do
      out="$corpus/log/$(basename "$1" .sand)_$2_$seed.jsonl"
      if "$bin" run "$root/$1" --scenario "$2" --seed "$seed" --log "$out" >/dev/null 2>&1; then
        logs=$((logs + 1))
      else
        rm -f "$out"
      fi
    done
  done
  echo "seeded $logs game logs into log"
else
  echo "no sandtable binary at $bin (set SANDTABLE_BIN): log corpus left empty"
fi
