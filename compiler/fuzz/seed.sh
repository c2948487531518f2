#!/usr/bin/env bash
# Seed the fuzz corpora from the bundled rules and examples (and game logs played from the
# examples). Run from anywhere; writes compiler/fuzz/corpus/<target>/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
corpus="$here/corpus"
mkdir -p "$corpus/parse" "$corpus/compile" "$corpus/prob" "$corpus/log"
n=0
while IFS= read -r -d '' f; do
  name="$(echo "${f#"$root"/}" | tr '/' '_')"
  for t in parse compile prob; do cp "$f" "$corpus/$t/$name"; done
  n=$((n + 1))
done < <(find "$root/rules" "$root/examples" "$root/stdlib" "$root/tests/diagnostics" -name '*.sand' -print0)
echo "seeded $n .sand files into parse, compile and prob"
# Logs: play the example scenarios with the debug binary if it is built.
bin="${SANDTABLE_BIN:-$root/target/debug/sandtable}"
if [ -x "$bin" ]; then
  logs=0
  for seed in 1 2 3; do
    if "$bin" run "$root/examples/tutorial/paddy_patrol" --scenario into-the-paddies --seed "$seed" \
        --log "$corpus/log/paddy_patrol_$seed.log" >/dev/null 2>&1; then
      logs=$((logs + 1))
    fi
  done
  echo "seeded $logs game logs into log"
else
  echo "no sandtable binary at $bin (set SANDTABLE_BIN): log corpus left empty"
fi
