#!/usr/bin/env bash
# What each way of deciding costs the aggregator end to end: the aggregator benchmark's loads of
# 5,000 devices (50k sightings/s, and 20k/s with 4 dB of noise on every reading) and of a stadium
# (100,000 devices heard by two nodes each, 200k sightings/s), each under `--decide dwell` and
# `--decide hmm` in turn, ROUNDS times, on fresh servers every time (scripts/aggregator-bench.sh),
# so that the two are measured in the same sitting and a drift of the machine shows as a spread
# rather than as a difference. About 5 minutes a round with --quick.
#
#   scripts/decision-cost.sh [--rounds N] [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=2
quick=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
        --quick) quick=(--quick); shift ;;
        *) echo "decision-cost.sh: argument '$1' is not known: expected --rounds N or --quick" >&2; exit 64 ;;
    esac
done
if ! [[ "$rounds" =~ ^[1-9][0-9]*$ ]]; then
    echo "decision-cost.sh: --rounds '$rounds' is not valid: expected a whole number of at least 1" >&2
    exit 64
fi
rows=()
for round in $(seq "$rounds"); do
    for load in "50 nodes, 5k devices ×3, 50k/s" "20k/s, RSSI σ 4 dB" "stadium"; do
        for decide in dwell hmm; do
            echo "round $round: $load, --decide $decide" >&2
            row=$(bash scripts/aggregator-bench.sh "${quick[@]}" --only "$load" --pass "--decide=$decide" | grep '^| ' | grep -v '^| scenario' | tail -1)
            rows+=("| $round | $decide ${row#| }")
        done
    done
done
echo "| round | decision | scenario | offered /s | read | aggregator CPU | CPU-s per 1k | peak RSS | RSS at end | decision→publish p50 / worst p99 | first enters p50 / p95 / all | move p50 / max | crowd enters published / stored (first to last) | crowd exits published / stored | broker CPU | bench CPU, lag | stop | takeover |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---|---|---:|---|---|---|"
printf '%s\n' "${rows[@]}"
