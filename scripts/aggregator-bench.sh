#!/usr/bin/env bash
# The aggregator end to end, through real servers: a private mosquitto and PostgreSQL (fsync on)
# on loopback, a release build of presence-aggregator, and presence-bench's load generator and
# subscriber. Prints one row per scenario (see the README's "Aggregator end to end").
#
#   scripts/aggregator-bench.sh [--quick] [--only TEXT]... [--pass FLAG]... [--transports plain,tls]
#                               [--seconds S] [--rss-every S] [--aggregator PATH --migrate PRESENCECTL]
#
# The broker also listens with TLS (PRESENCE_BROKER_TLS=on), for --transports tls.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product presence-aggregator
swift build -c release --product presence-bench
dir=/tmp/presence-bench-$$
trap 'bash scripts/servers.sh stop "$dir" >/dev/null 2>&1; rm -rf "$dir"' EXIT
PRESENCE_PG_FSYNC=on PRESENCE_BROKER_TLS=on bash scripts/servers.sh start "$dir" --owner $$ >/dev/null
set -a
. "$dir/env"
set +a
.build/release/presence-bench aggregator --broker-pid "$(cat "$dir/mosquitto/mosquitto.pid")" "$@"
