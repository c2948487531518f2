#!/usr/bin/env bash
# Times the four benchmark queries (runtime/benches/queries.sand) in sandtable and in icepool,
# cold (a whole process each) and warm (in-process, per computation), and prints the ratios.
# icepool is installed in a throwaway virtualenv outside the repository.
# Usage: bash runtime/benches/compare_icepool.sh   (after `cargo build --release`)
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${ICEPOOL_VENV:-/tmp/icepool-venv}"
[ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q icepool; }
B=./target/release/sandtable
Q=runtime/benches/queries.sand
PY="$venv/bin/python runtime/benches/icepool_queries.py"
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
us() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
for q in opposed_d10 hit_save_pool sum_100d6 highest_3_of_10d6; do
  sc=$(for _ in $(seq 11); do us $B prob $Q $q; done | med)
  ic=$(for _ in $(seq 5); do us $PY $q cold; done | med)
  sw=$($B prob $Q $q --repeat 1000 2>&1 >/dev/null | grep -o '[0-9.]* µs' | cut -d' ' -f1)
  iw=$($PY $q 300 | grep -o '[0-9.]* us' | cut -d' ' -f1)
  echo "$q | cold: sandtable ${sc} µs, icepool ${ic} µs, ×$(echo "scale=1; $ic/$sc" | bc) | warm: sandtable ${sw} µs, icepool ${iw} µs, ×$(echo "scale=1; $iw/$sw" | bc)"
done
