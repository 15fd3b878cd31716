#!/usr/bin/env bash
# The live demo: installs what is missing, builds, starts a private mosquitto and PostgreSQL under
# .state/, registers the expo of demo/expo.json, runs the aggregator and the simulated scanner
# nodes, and prints enter/exit events as they happen. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
echo "building (release)..."
swift build -c release --product presencectl >/dev/null
swift build -c release --product presence-aggregator >/dev/null
swift build -c release --product presence-scanner >/dev/null
bin=$(swift build -c release --show-bin-path)

state="$PWD/.state"
mkdir -p "$state"
scripts/servers.sh start "$state/servers" >/dev/null
set -a
# shellcheck disable=SC1091
source "$state/servers/env"
set +a

pids=()
cleanup() {
  trap - INT TERM EXIT
  # shellcheck disable=SC2046
  kill $(jobs -p) 2>/dev/null || true
  wait 2>/dev/null || true
  scripts/servers.sh stop "$state/servers"
  echo "stopped; the database and logs stay in .state/"
}
trap cleanup INT TERM EXIT

ctl="$bin/presencectl"
"$ctl" migrate
"$ctl" venue add expo --name "Demo expo"
"$ctl" zone add hall --venue expo --name "Hall" >/dev/null
"$ctl" zone add west --venue expo --name "West aisle" --parent hall >/dev/null
"$ctl" zone add east --venue expo --name "East aisle" --parent hall >/dev/null
x=0
for booth in a b c d; do
  aisle=west
  [[ $booth == c || $booth == d ]] && aisle=east
  "$ctl" beacon add "booth-$booth" --venue expo --zone "$aisle" --name "Booth ${booth^^}" --x "$x" --y 0 >/dev/null
  "$ctl" node add "node-$booth" --venue expo --beacon "booth-$booth" --x "$x" --y 0 >/dev/null
  x=$((x + 7))
done
minor=1
for user in alice bob carol; do
  "$ctl" user add "$user" >/dev/null
  "$ctl" device add "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:$minor" --user "$user" >/dev/null
  minor=$((minor + 1))
done
echo "registered venue expo: booths a-d 7 m apart in a hall's west and east aisles, a node at each, alice, bob and carol with tags"

http=${PRESENCE_DEMO_HTTP:-127.0.0.1:8080}
"$bin/presence-aggregator" --http "$http" >"$state/aggregator.log" 2>&1 &
pids+=($!)
"$bin/presence-scanner" --simulate demo/expo.json >"$state/scanner.log" 2>&1 &
pids+=($!)
echo "aggregator and simulated nodes running (logs in .state/); the live page is at http://$http/"
echo "events follow, Ctrl-C to stop"
echo

broker=${PRESENCE_BROKER_URL#mqtt://}
mosquitto_sub -h "${broker%:*}" -p "${broker##*:}" -t 'presence/v1/events/#' -t 'presence/v1/zones/events/#' | python3 -u scripts/show-events.py &
pids+=($!)
wait "${pids[@]}"
