#!/usr/bin/env bash
# What each way of deciding costs the aggregator end to end: the aggregator benchmark's loads of
# 5,000 devices (50k sightings/s, and 20k/s with 4 dB of noise on every reading) and of a stadium
# (100,000 devices heard by two nodes each, 200k sightings/s), each under `--decide dwell` and
# `--decide hmm` in turn, ROUNDS times, on fresh servers every time (scripts/aggregator-bench.sh),
# so that the two are measured in the same sitting and a drift of the machine shows as a spread
# rather than as a difference. About 5 minutes a round with --quick.
#
# --load TEXT (repeatable) keeps the loads whose name holds TEXT; --old PATH also runs an older
# build's presence-aggregator (release) under each decision, alternated with this build's, for a
# before/after in one sitting (the schema must not have changed since).
#
#   scripts/decision-cost.sh [--rounds N] [--quick] [--load TEXT]... [--old PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=2
quick=()
loads=()
old=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
        --quick) quick=(--quick); shift ;;
        --load) loads+=("${2:?--load needs the name of a load or part of it}"); shift 2 ;;
        --old) old=${2:?--old needs the path of a presence-aggregator}; shift 2 ;;
        *) echo "decision-cost.sh: argument '$1' is not known: expected --rounds N, --quick, --load TEXT or --old PATH" >&2; exit 64 ;;
    esac
done
if ! [[ "$rounds" =~ ^[1-9][0-9]*$ ]]; then
    echo "decision-cost.sh: --rounds '$rounds' is not valid: expected a whole number of at least 1" >&2
    exit 64
fi
if [ -n "$old" ] && ! [ -x "$old" ]; then
    echo "decision-cost.sh: --old '$old' is not valid: expected an executable presence-aggregator" >&2
    exit 64
fi
[ ${#loads[@]} -gt 0 ] || loads=("50 nodes, 5k devices ×3, 50k/s" "20k/s, RSSI σ 4 dB" "stadium")
builds=(new)
[ -n "$old" ] && builds=(old new)
rows=()
for round in $(seq "$rounds"); do
    for load in "${loads[@]}"; do
        for decide in dwell hmm; do
            for build in "${builds[@]}"; do
                echo "round $round: $load, --decide $decide, $build build" >&2
                other=()
                [ "$build" = old ] && other=(--aggregator "$old")
                row=$(bash scripts/aggregator-bench.sh "${quick[@]}" --only "$load" --pass "--decide=$decide" "${other[@]}" | grep '^| ' | grep -v '^| scenario' | tail -1)
                rows+=("| $round | $build | $decide ${row#| }")
            done
        done
    done
done
echo "| round | build | decision | scenario | offered /s | read | aggregator CPU | CPU-s per 1k | peak RSS | RSS at end | decision→publish p50 / worst p99 | first enters p50 / p95 / all | move p50 / max | crowd enters published / stored (first to last) | crowd exits published / stored | broker CPU | bench CPU, lag | stop | takeover |"
echo "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---|---|---:|---|---|---|"
printf '%s\n' "${rows[@]}"
