#!/usr/bin/env bash
# How fast `presencectl replay` runs over a large recording, end to end: writes a simulated expo
# hour as `presencectl record` would (presence-bench replay --write), registers its venue in a
# private PostgreSQL, then times `presencectl replay` (release build) over the file, reading it,
# deciding and printing every event, and reports observations per second and peak memory.
#
#   scripts/replay-bench.sh [PEOPLE] [MINUTES]      (defaults 60 and 60)
set -euo pipefail
cd "$(dirname "$0")/.."
people=${1:-60}
minutes=${2:-60}
bash scripts/install-deps.sh
swift build -c release --product presencectl >/dev/null
swift build -c release --product presence-bench >/dev/null
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d)
chmod 755 "$work"
trap 'scripts/servers.sh stop "$work/servers" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
scripts/servers.sh start "$work/servers" >/dev/null
set -a
# shellcheck disable=SC1091
source "$work/servers/env"
set +a
"$bin/presence-bench" replay --people "$people" --minutes "$minutes" --write "$work/day.jsonl"
"$bin/presencectl" migrate >/dev/null
xargs -L1 "$bin/presencectl" < "$work/day.jsonl.registry" >/dev/null
/usr/bin/time -f "%e %M" -o "$work/time" "$bin/presencectl" replay "$work/day.jsonl" >"$work/events.jsonl" 2>"$work/summary"
read -r wall kilobytes < "$work/time"
summary=$(cat "$work/summary")
echo "$summary"
python3 - "$wall" "$kilobytes" "$summary" "$(wc -l < "$work/events.jsonl")" "$(stat -c %s "$work/day.jsonl")" <<'PY'
import re, sys
wall, kb, summary, events, size = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
observations = int(re.search(r"(\d+) observations", summary).group(1))
print(f"presencectl replay: {size / 1e6:.0f} MB, {observations} observations, {events} events in {wall:.2f} s "
      f"= {observations / wall / 1e6:.2f} M observations/s (wall, one core, file read and output included); peak memory {kb // 1024} MB")
PY
