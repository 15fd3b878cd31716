#!/usr/bin/env bash
# What the decision core costs, counted in instructions by valgrind's callgrind rather than timed.
# On a shared 2-core machine the same timed run varies by ±20 %; a count is the same in every run
# (hashing is seeded alike), so a change of a few percent shows, and `hmm` and `dwell` compare
# exactly. Counted: the core's own calls (AggregatorCore.receive and .tick), not the benchmark
# that makes the sightings.
#
#   - the live load: `presence-bench memory --ticks` (DEVICES devices, each heard by three nodes
#     a second, the core ticked every 100 ms), under `--decide hmm` and `--decide dwell`;
#   - the replay: `presence-bench replay` of a simulated expo (30 people, 10 minutes).
#
# Instructions are not time (a stalled load counts once), so a figure here says what a change
# did to the work, and a timed benchmark says what it did to the clock.
#
#   scripts/instruction-cost.sh [--devices N] [--seconds S] [--old PATH]
#
# --old PATH counts an older build's presence-bench beside this one's, on the same loads.
set -euo pipefail
cd "$(dirname "$0")/.."
devices=10000
seconds=20
old=""
while [ $# -gt 0 ]; do
  case "$1" in
    --devices) devices=${2:?--devices needs a number}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --old) old=${2:?--old needs a path}; shift 2 ;;
    *) echo "instruction-cost.sh: unknown argument '$1' (expected --devices N, --seconds S or --old PATH)" >&2; exit 64 ;;
  esac
done
for value in "$devices" "$seconds"; do
  [[ "$value" =~ ^[1-9][0-9]*$ ]] || { echo "instruction-cost.sh: '$value' is not a positive whole number" >&2; exit 64; }
done
if [ -n "$old" ] && [ ! -x "$old" ]; then
  echo "instruction-cost.sh: --old '$old' is not an executable presence-bench" >&2
  exit 64
fi
bash scripts/install-deps.sh
swift build -c release --product presence-bench >/dev/null
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Valgrind 3.19 cannot read the DWARF 5 that Swift writes: the copies it runs keep their symbols
# and lose their debug information.
strip --strip-debug -o "$work/new" "$bin/presence-bench"
builds=(new)
if [ -n "$old" ]; then
  strip --strip-debug -o "$work/old" "$old"
  builds=(old new)
fi
receive='$s12PresenceCore010AggregatorB0V7receive5topic7payload2atSayAC6ActionOGSS_SWs5Int64VtF'
tick='$s12PresenceCore010AggregatorB0V4tick2atSayAC6ActionOGs5Int64V_tF'

# count BUILD NAME ARGS...: instructions inside the core's calls, and what the benchmark printed.
count() {
  local build=$1 name=$2
  shift 2
  SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --toggle-collect="$receive" --toggle-collect="$tick" \
    --callgrind-out-file="$work/$build-$name.out" "$work/$build" "$@" >"$work/$build-$name.txt" 2>"$work/$build-$name.err" \
    || { echo "instruction-cost.sh: $build $name failed:" >&2; tail -5 "$work/$build-$name.err" >&2; exit 1; }
  grep -o 'Collected : [0-9]*' "$work/$build-$name.err" | awk '{print $3}'
}

echo "| build | load | sightings | core instructions | per sighting | hmm / dwell |"
echo "|---|---|---:|---:|---:|---:|"
for build in "${builds[@]}"; do
  declare -A per=()
  for decide in hmm dwell; do
    total=$(count "$build" "$decide" memory --devices "$devices" --seconds "$seconds" --ticks --set "decide=$decide")
    sightings=$(awk 'NR==1 { for (i = 1; i <= NF; i++) if ($i ~ /^sightings/) print $(i-1) }' "$work/$build-$decide.txt")
    per[$decide]=$(awk -v t="$total" -v s="$sightings" 'BEGIN { printf "%.0f", t / s }')
    ratio=""
    [ "$decide" = dwell ] && ratio=$(awk -v a="${per[hmm]}" -v b="${per[dwell]}" 'BEGIN { printf "%.3f", a / b }')
    echo "| $build | $devices devices, $seconds s, --decide $decide | $sightings | $total | ${per[$decide]} | $ratio |"
  done
  total=$(count "$build" replay replay --people 30 --minutes 10 --runs 1)
  observations=$(awk '/^recording:/ { for (i = 1; i <= NF; i++) if ($i ~ /^sightings/) print $(i-1) }' "$work/$build-replay.txt")
  echo "| $build | replay, 30 people, 10 min | $observations | $total | $(awk -v t="$total" -v s="$observations" 'BEGIN { printf "%.0f", t / s }') | |"
done
