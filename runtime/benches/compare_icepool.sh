#!/usr/bin/env bash
# Times the four benchmark queries (runtime/benches/queries.sand) in sandtable and in icepool,
# cold (a whole process each) and warm (in-process, per computation), prints the ratios, and
# checks that both give identical fractions for every outcome of every query (it fails, exit 1,
# on any difference).
#
# Warm sandtable figures come in two kinds: "scratch" recomputes each time in a fresh exact
# session (nothing remembered between repeats), "kept" repeats the query in one session, which
# remembers its answers (as icepool keeps its own caches between calls).
#
# icepool is installed in a throwaway virtualenv outside the repository.
# Usage: bash runtime/benches/compare_icepool.sh
#   SANDTABLE_BIN   the sandtable binary (default: ./target/release/sandtable)
#   ICEPOOL_VENV    the virtualenv (default: /tmp/icepool-venv), created with icepool if absent
#   ICEPOOL_PYTHON  a python that already imports icepool (default: the virtualenv's)
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${ICEPOOL_VENV:-/tmp/icepool-venv}"
if [ -n "${ICEPOOL_PYTHON:-}" ]; then
  py=$ICEPOOL_PYTHON
else
  [ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q icepool; }
  py=$venv/bin/python
fi
B="${SANDTABLE_BIN:-./target/release/sandtable}"
[ -x "$B" ] || { echo "no sandtable binary at $B (build with cargo build --release, or set SANDTABLE_BIN)" >&2; exit 2; }
Q=runtime/benches/queries.sand
PY=("$py" runtime/benches/icepool_queries.py)
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
us() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
ratio() { [ "$2" = "-" ] && { echo "-"; return; }; awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "inf" }'; }

# Identical fractions, outcome by outcome (outcomes of probability 0 are left out on both
# sides: sandtable lists named outcomes the dice cannot reach, icepool does not).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() {
  local q=$1
  "$B" prob "$Q" "$q" --json >"$tmp/st.json"
  "${PY[@]}" "$q" show >"$tmp/ic.txt"
  python3 - "$q" "$tmp/st.json" "$tmp/ic.txt" <<'EOF'
import json, sys
from fractions import Fraction
q = sys.argv[1]
st = json.load(open(sys.argv[2]))
ic = open(sys.argv[3]).read()
ours = {o["outcome"]: Fraction(o["probability"]) for o in st["outcomes"]}
ours = {k: v for k, v in ours.items() if v != 0}
theirs = {}
for line in ic.splitlines():
    k, p = line.rsplit(" ", 1)
    if Fraction(p) != 0:
        theirs[k] = Fraction(p)
if ours != theirs:
    print(f"MISMATCH {q}:", file=sys.stderr)
    for k in sorted(set(ours) | set(theirs), key=str):
        a, b = ours.get(k), theirs.get(k)
        if a != b:
            print(f"  {k}: sandtable {a}, icepool {b}", file=sys.stderr)
    sys.exit(1)
print(f"{q}: {len(ours)} outcomes, identical fractions")
EOF
}

status=0
for q in opposed_d10 hit_save_pool sum_100d6 highest_3_of_10d6; do
  check "$q" || status=1
done
[ "$status" = 0 ] || { echo "fractions differ: see above" >&2; exit 1; }

printf '%-18s | %-44s | %s\n' query "cold (whole process, median)" "warm (per computation)"
for q in opposed_d10 hit_save_pool sum_100d6 highest_3_of_10d6; do
  sc=$(for _ in $(seq 11); do us "$B" prob "$Q" "$q"; done | med)
  ic=$(for _ in $(seq 5); do us "${PY[@]}" "$q" cold; done | med)
  rep=$("$B" prob "$Q" "$q" --repeat 1000 2>&1 >/dev/null)
  # A build from before sessions kept answers prints one figure: from scratch.
  sw=$(grep -v 'kept' <<<"$rep" | grep -o '[0-9.]* µs' | head -1 | cut -d' ' -f1)
  sk=$(grep 'kept' <<<"$rep" | grep -o '[0-9.]* µs' | cut -d' ' -f1 || true)
  sk=${sk:--}
  iw=$("${PY[@]}" "$q" 300 | grep -o '[0-9.]* us' | cut -d' ' -f1)
  printf '%-18s | sandtable %6s µs, icepool %7s µs, ×%-5s | sandtable scratch %8s µs (×%s), kept %7s µs (×%s); icepool %8s µs\n' \
    "$q" "$sc" "$ic" "$(ratio "$ic" "$sc")" "$sw" "$(ratio "$iw" "$sw")" "$sk" "$(ratio "$iw" "$sk")" "$iw"
done
