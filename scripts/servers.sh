#!/usr/bin/env bash
# Private servers on loopback for tests and the demo: a mosquitto broker and a PostgreSQL cluster
# on free ports, everything under one state folder, nothing system-wide.
#
#   scripts/servers.sh start DIR [--owner PID]
#                                     start both; print PRESENCE_BROKER_URL and PRESENCE_DATABASE_URL
#                                     lines (also written to DIR/env) for `eval` or `source`; with
#                                     --owner, both stop (and DIR is removed) once process PID ends
#   scripts/servers.sh stop DIR       stop both and keep DIR
#   scripts/servers.sh broker DIR     start a broker alone under DIR (a second broker, or one a test
#                                     stops and restarts); print its URL
#   scripts/servers.sh broker-stop DIR
#   scripts/servers.sh postgres DIR   start a PostgreSQL alone under DIR (one a test stops and
#                                     restarts, keeping its data and port); print its URL
#   scripts/servers.sh postgres-stop DIR
#
# PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user and runs
# through runuser. The cluster listens on 127.0.0.1 only, with trust authentication, and without
# fsync unless PRESENCE_PG_FSYNC=on (benchmarks measure with it).
set -euo pipefail

cmd=${1:-}
dir=${2:-}
owner=""
if [ "${3:-}" = "--owner" ]; then owner=${4:?--owner needs a process id}; fi
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|broker|broker-stop|postgres|postgres-stop DIR" >&2; exit 2; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

wait_port() {
  local port=$1 what=$2
  for _ in $(seq 1 150); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$what did not start listening on port $port; see $dir" >&2
  return 1
}

pg_bindir() {
  local b
  b=$(pg_config --bindir 2>/dev/null || true)
  if [ -n "$b" ] && [ -x "$b/initdb" ]; then echo "$b"; return; fi
  b=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$b" ] && [ -x "$b/initdb" ] || { echo "PostgreSQL server binaries not found: run scripts/install-deps.sh" >&2; exit 1; }
  echo "$b"
}

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_broker() {
  local bdir=$1 port
  mkdir -p "$bdir"
  port=$(cat "$bdir/port" 2>/dev/null || free_port)
  echo "$port" > "$bdir/port"
  cat > "$bdir/mosquitto.conf" <<CONF
listener $port 127.0.0.1
allow_anonymous true
persistence false
max_inflight_messages 1000
set_tcp_nodelay true
max_queued_messages 100000
message_size_limit 4194304
CONF
  # In its own session, so that a Ctrl-C meant for the demo does not stop the broker before the
  # nodes and the aggregator have said goodbye.
  setsid mosquitto -c "$bdir/mosquitto.conf" >"$bdir/mosquitto.log" 2>&1 &
  echo $! > "$bdir/mosquitto.pid"
  wait_port "$port" mosquitto
  echo "mqtt://127.0.0.1:$port"
}

stop_pidfile() {
  local f=$1
  [ -f "$f" ] || return 0
  local pid; pid=$(cat "$f")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$f"
}

start_postgres() {
  local pgdir=$1 bin pgport
  bin=$(pg_bindir)
  mkdir -p "$pgdir"
  [ "$(id -u)" -ne 0 ] || chown postgres "$pgdir"
  if [ ! -f "$pgdir/data/PG_VERSION" ]; then
    as_pg "$bin/initdb" -D "$pgdir/data" -U postgres --auth=trust -E UTF8 >"$pgdir/initdb.log" 2>&1
  fi
  pgport=$(cat "$pgdir/port" 2>/dev/null || free_port)
  echo "$pgport" > "$pgdir/port"
  as_pg "$bin/pg_ctl" -D "$pgdir/data" -l "$pgdir/postgres.log" -w -t 60 \
    -o "-p $pgport -k $pgdir -c listen_addresses=127.0.0.1 -c fsync=${PRESENCE_PG_FSYNC:-off} -c max_connections=200" start >/dev/null
  wait_port "$pgport" postgres
  echo "postgres://postgres@127.0.0.1:$pgport/postgres"
}

stop_postgres() {
  local pgdir=$1
  if [ -f "$pgdir/data/postmaster.pid" ]; then
    as_pg "$(pg_bindir)/pg_ctl" -D "$pgdir/data" -m fast -w stop >/dev/null || true
  fi
}

case "$cmd" in
  start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    broker=$(start_broker "$dir/mosquitto")
    database=$(start_postgres "$dir/postgres")
    {
      echo "PRESENCE_BROKER_URL=$broker"
      echo "PRESENCE_DATABASE_URL=$database"
    } > "$dir/env"
    cat "$dir/env"
    if [ -n "$owner" ]; then
      # A reaper that outlives this script: tests that crash still leave no servers behind.
      nohup bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; "$2" stop "$3"; rm -rf "$3"' \
        reaper "$owner" "$0" "$dir" >/dev/null 2>&1 &
    fi
    ;;
  stop)
    [ -d "$dir" ] || exit 0
    stop_pidfile "$dir/mosquitto/mosquitto.pid"
    stop_postgres "$dir/postgres"
    ;;
  broker)
    start_broker "$dir"
    ;;
  broker-stop)
    stop_pidfile "$dir/mosquitto.pid"
    ;;
  postgres)
    mkdir -p "$dir"
    start_postgres "$(cd "$dir" && pwd)"
    ;;
  postgres-stop)
    stop_postgres "$dir"
    ;;
  *)
    echo "unknown command '$cmd': expected start, stop, broker, broker-stop, postgres or postgres-stop" >&2
    exit 2
    ;;
esac
