#!/usr/bin/env bash
# One chunk of a fuzzing campaign: each target named (all five if none) runs for SECONDS at the
# lowest priority in one job, then its executions and crashes are printed as a row for the
# record in docs/fuzzing.md. Build the targets first (docs/fuzzing.md); this runs the built
# binaries directly, so it never starts a build.
#   compiler/fuzz/campaign.sh SECONDS [TARGET...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
secs="${1:?usage: campaign.sh SECONDS [TARGET...]}"
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(parse compile prob resolve log)
bin="${CARGO_TARGET_DIR:-$here/target}/x86_64-unknown-linux-gnu/release"
cd "$here"
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t" "logs" "work/$t"
  before=$(find "artifacts/$t" -type f | wc -l)
  log="logs/$t-$(date -u +%Y%m%dT%H%M%S).log"
  # -jobs=1 runs the fuzzer in a child whose output goes to fuzz-0.log in the working folder:
  # one folder per target, so chunks of different targets may run at once.
  (cd "work/$t" && nice -n 19 "$bin/$t" "../../corpus/$t" -jobs=1 -workers=1 \
    -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="../../artifacts/$t/" >/dev/null 2>&1) || true
  mv "work/$t/fuzz-0.log" "$log"
  runs=$(grep -oE '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1 || true)
  after=$(find "artifacts/$t" -type f | wc -l)
  echo "| $(date -u +%F) | \`$t\` | ${secs} | ${runs:-no Done line (see $log)} | $((after - before)) |"
done
