#!/usr/bin/env bash
# What a scanner node costs at a steady report rate: writes a btsnoop capture at RATE reports/s
# for SECONDS, replays it in real time through presence-scanner (release build) to a private
# broker, and prints the CPU the scanner used as a share of one core.
#
#   scripts/scanner-load.sh [RATE] [SECONDS]      (defaults 2000 and 60)
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${1:-2000}
seconds=${2:-60}
bash scripts/install-deps.sh
swift build -c release --product presence-scanner >/dev/null
swift build -c release --product presence-bench >/dev/null
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d)
trap 'scripts/servers.sh broker-stop "$work/broker"; rm -rf "$work"' EXIT
broker=$(scripts/servers.sh broker "$work/broker")
"$bin/presence-bench" capture --out "$work/load.btsnoop" --rate "$rate" --seconds "$seconds"
/usr/bin/time -f "%U %S %e" -o "$work/time" "$bin/presence-scanner" --node load --broker "$broker" \
  --btsnoop "$work/load.btsnoop" --log-level warning
read -r user system wall < "$work/time"
python3 -c "import sys; u, s, w = map(float, sys.argv[1:4]); print(f'scanner at {int(sys.argv[4])} reports/s: {u + s:.2f} s CPU over {w:.1f} s = {100 * (u + s) / w:.1f} % of one core')" "$user" "$system" "$wall" "$rate"
