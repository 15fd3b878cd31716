#!/usr/bin/env bash
# Writes docs/accuracy.md: the accuracy benchmark's tuning part (where defaults may be chosen:
# the `sim` scenarios and the even-numbered runs of each dataset) and its held-out reporting part
# (the channel grid, the calibration experiment and the odd-numbered dataset runs), then the
# evidence decision on the held-out part. About 8 minutes on 2 cores.
#
# usage: scripts/accuracy-report.sh [--quick]   (--quick: small simulations, about 1 minute)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=()
if [[ "${1:-}" == "--quick" ]]; then quick=(--quick); fi
if [[ $# -gt 1 || ( $# -eq 1 && "$1" != "--quick" ) ]]; then
    echo "usage: scripts/accuracy-report.sh [--quick]" >&2
    exit 64
fi

swift build -c release --product presence-bench >&2
bench=.build/release/presence-bench
out=docs/accuracy.md
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
started=$(date +%s)

{
    echo "# Accuracy benchmark, latest run"
    echo
    echo "Produced by \`scripts/accuracy-report.sh${quick:+ --quick}\` on $(date -u +%Y-%m-%d) ($(nproc) cores). Defaults are the contract's"
    echo "(\`--decide dwell\`, margin 4 dB, dwell 3 s); settings may be chosen on the **tuning part** only (the \`sim\`"
    echo "scenarios and the even-numbered runs of each dataset) and are judged on the **reporting part**, held out: the"
    echo "channel grid, the calibration experiment and the odd-numbered dataset runs. Accuracy is given on both"
    echo "timelines (history: what the sessions table says, every method dated by the engine's rule; live: when a"
    echo "subscriber learns of it). \`scripts/accuracy-sweep.py\` ranks settings on the tuning part by their worst case."
    echo
    echo "## Reporting part (held out)"
    echo
    "$bench" accuracy --markdown --part reporting "${quick[@]}" | sed 's/^## /### /'
    echo
    echo "## Tuning part"
    echo
    "$bench" accuracy --markdown --part tuning "${quick[@]}" | sed 's/^## /### /'
    echo
    echo "## The evidence decision on the reporting part"
    echo
    echo "The same held-out part with \`--decide evidence --switch-margin 1 --switch-evidence 12\`, the evidence"
    echo "setting that ranked best on the tuning part by its worst dataset (\`scripts/accuracy-sweep.py decide=evidence"
    echo "switch-margin=1,2,3,4 switch-evidence=2,4,6,8,12\`, with the small simulations of \`--quick\`)."
    echo
    "$bench" accuracy --markdown --part reporting "${quick[@]}" --set decide=evidence --set switch-margin=1 --set switch-evidence=12 | sed 's/^## /### /'
} > "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "wrote $out in $(( $(date +%s) - started )) s" >&2
