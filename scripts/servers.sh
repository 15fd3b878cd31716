#!/usr/bin/env bash
# Private servers on loopback for tests and the demo: a mosquitto broker and a PostgreSQL cluster
# on free ports, everything under one state folder, nothing system-wide.
#
#   scripts/servers.sh start DIR [--owner PID]
#                                     start both; print PRESENCE_BROKER_URL and PRESENCE_DATABASE_URL
#                                     lines (also written to DIR/env) for `eval` or `source`; with
#                                     --owner, both stop (and DIR is removed) once process PID ends.
#                                     With PRESENCE_BROKER_TLS=on the broker also listens with TLS,
#                                     its certificate (127.0.0.1, localhost) signed by a CA made for
#                                     it: PRESENCE_TLS_BROKER_URL and PRESENCE_TLS_BROKER_CA lines follow
#   scripts/servers.sh stop DIR       stop both and keep DIR
#   scripts/servers.sh broker DIR [--persistent]
#                                     start a broker alone under DIR (a second broker, or one a test
#                                     stops and restarts); print its URL; with --persistent it keeps
#                                     sessions, queued and retained messages across a restart, as a
#                                     venue's broker does (give the flag again to restart it)
#   scripts/servers.sh broker-stop DIR
#                                     stop the broker under DIR (a hall broker too), keeping its port
#   scripts/servers.sh hall DIR CENTRAL_URL PREFIX
#                                     start a hall broker under DIR, persistent, whose bridge takes the
#                                     nodes' sightings, status and stats under topic prefix PREFIX to
#                                     the broker at CENTRAL_URL (mqtt://host:port) and brings back the
#                                     venue's configuration and all the aggregator publishes; print its
#                                     URL (docs/mqtt.md, "Bridged and clustered brokers")
#   scripts/servers.sh postgres DIR   start a PostgreSQL alone under DIR (one a test stops and
#                                     restarts, keeping its data and port); print its URL
#   scripts/servers.sh postgres-stop DIR
#   scripts/servers.sh postgres-kill DIR
#                                     stop it at once (`-m immediate`), as a crashed primary stops
#   scripts/servers.sh standby PRIMARY_PGDIR DIR
#                                     take a base backup of the running PostgreSQL of PRIMARY_PGDIR
#                                     and start it under DIR as a streaming standby of it (read-only,
#                                     on a port of its own); print its URL. `postgres DIR` starts it
#                                     again, still a standby until promoted
#   scripts/servers.sh promote DIR    promote the standby under DIR; it takes writes once this returns
#
# PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user and runs
# through runuser. The cluster listens on 127.0.0.1 only, with trust authentication (replication
# connections from 127.0.0.1 included), and without fsync unless PRESENCE_PG_FSYNC=on (benchmarks
# measure with it).
set -euo pipefail

cmd=${1:-}
dir=${2:-}
owner=""
persistent=false
if [ "${3:-}" = "--owner" ]; then owner=${4:?--owner needs a process id}; fi
if [ "${3:-}" = "--persistent" ]; then persistent=true; fi
commands="start, stop, broker, broker-stop, hall, postgres, postgres-stop, postgres-kill, standby or promote"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 COMMAND DIR, COMMAND one of $commands (standby: PRIMARY_PGDIR DIR)" >&2; exit 2; }

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

# A CA and a certificate for 127.0.0.1 and localhost under $1/tls, for a broker's TLS listener.
make_tls_files() {
  local tls=$1/tls key="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30"
  mkdir -p "$tls"
  [ -f "$tls/server.crt" ] && return 0
  command -v openssl >/dev/null || { echo "openssl not found: run scripts/install-deps.sh" >&2; exit 1; }
  openssl req -x509 $key -keyout "$tls/ca.key" -out "$tls/ca.crt" -subj "/CN=presence test broker CA" 2>/dev/null
  openssl req $key -keyout "$tls/server.key" -out "$tls/server.csr" -subj "/CN=localhost" 2>/dev/null
  echo "subjectAltName=IP:127.0.0.1,DNS:localhost" > "$tls/san.cnf"
  openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 30 \
    -extfile "$tls/san.cnf" -out "$tls/server.crt" 2>/dev/null
  # mosquitto started as root reads its key as the `mosquitto` user.
  chmod 0644 "$tls/server.key"
}

start_broker() {
  local bdir=$1 persistent=${2:-false} bridge=${3:-} port tls_port=""
  mkdir -p "$bdir"
  port=$(cat "$bdir/port" 2>/dev/null || free_port)
  echo "$port" > "$bdir/port"
  if [ "${PRESENCE_BROKER_TLS:-off}" = on ]; then
    make_tls_files "$bdir"
    tls_port=$(cat "$bdir/tls-port" 2>/dev/null || free_port)
    echo "$tls_port" > "$bdir/tls-port"
  fi
  {
    cat <<CONF
listener $port 127.0.0.1
allow_anonymous true
max_inflight_messages 1000
set_tcp_nodelay true
max_queued_messages 100000
message_size_limit 4194304
CONF
    if [ "$persistent" = true ]; then
      # Saved at every stop and read at the next start. mosquitto started as root writes it as the
      # `mosquitto` user.
      mkdir -p "$bdir/db"
      [ "$(id -u)" -ne 0 ] || chown mosquitto "$bdir/db"
      printf 'persistence true\npersistence_location %s/db/\n' "$bdir"
    else
      echo "persistence false"
    fi
    [ -z "$bridge" ] || printf '%s\n' "$bridge"
    if [ -n "$tls_port" ]; then
      printf 'listener %s 127.0.0.1\ncafile %s\ncertfile %s\nkeyfile %s\n' "$tls_port" "$bdir/tls/ca.crt" "$bdir/tls/server.crt" "$bdir/tls/server.key"
    fi
  } > "$bdir/mosquitto.conf"
  # In its own session, so that a Ctrl-C meant for the demo does not stop the broker before the
  # nodes and the aggregator have said goodbye.
  setsid mosquitto -c "$bdir/mosquitto.conf" >"$bdir/mosquitto.log" 2>&1 &
  echo $! > "$bdir/mosquitto.pid"
  wait_port "$port" mosquitto
  [ -z "$tls_port" ] || wait_port "$tls_port" "mosquitto's TLS listener"
  echo "mqtt://127.0.0.1:$port"
}

# The bridge of a hall broker to the central one at $1 (mqtt://host:port) for topic prefix $2, named
# after the folder $3: the layout and every line are explained in docs/mqtt.md; what differs from
# deploy/mosquitto/bridge.conf is no TLS, no credentials and a reconnection every second.
hall_bridge() {
  local central=$1 prefix=$2 name
  [[ $central =~ ^mqtt://[^@/]+:[0-9]+$ ]] || { echo "CENTRAL_URL must be mqtt://host:port, not '$central'" >&2; exit 2; }
  name=$(basename "$3")
  cat <<CONF

connection central
address ${central#mqtt://}
remote_clientid presence-hall-${name//[^A-Za-z0-9._-]/-}
cleansession false
bridge_protocol_version mqttv311
try_private true
restart_timeout 1
topic $prefix/v1/sightings/+ out 1
topic $prefix/v1/sightings/+/+ out 1
topic $prefix/v1/nodes/+/status out 1
topic $prefix/v1/nodes/+/stats out 1
topic $prefix/v1/config in 1
topic $prefix/v1/events/# in 1
topic $prefix/v1/state/# in 1
topic $prefix/v1/zones/# in 1
topic $prefix/v1/notify/# in 1
topic $prefix/v1/aggregator/# in 1
topic $prefix/v1/health in 1
CONF
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
  local pgdir=$1 bin
  bin=$(pg_bindir)
  mkdir -p "$pgdir"
  [ "$(id -u)" -ne 0 ] || chown postgres "$pgdir"
  if [ ! -f "$pgdir/data/PG_VERSION" ]; then
    as_pg "$bin/initdb" -D "$pgdir/data" -U postgres --auth=trust -E UTF8 >"$pgdir/initdb.log" 2>&1
  fi
  allow_replication "$pgdir/data/pg_hba.conf"
  run_postgres "$pgdir"
}

# initdb's pg_hba.conf lets replication in from loopback; one written otherwise gets the line.
allow_replication() {
  local hba=$1
  if ! grep -Eq '^[[:space:]]*host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' "$hba"; then
    echo "host replication all 127.0.0.1/32 trust" | as_pg tee -a "$hba" >/dev/null
  fi
}

# Starts the cluster of $1/data (a primary, or a standby if it holds standby.signal) on its port.
run_postgres() {
  local pgdir=$1 bin pgport
  bin=$(pg_bindir)
  pgport=$(cat "$pgdir/port" 2>/dev/null || free_port)
  echo "$pgport" > "$pgdir/port"
  as_pg "$bin/pg_ctl" -D "$pgdir/data" -l "$pgdir/postgres.log" -w -t 60 \
    -o "-p $pgport -k $pgdir -c listen_addresses=127.0.0.1 -c fsync=${PRESENCE_PG_FSYNC:-off} -c max_connections=200" start >/dev/null
  wait_port "$pgport" postgres
  echo "postgres://postgres@127.0.0.1:$pgport/postgres"
}

stop_postgres() {
  local pgdir=$1 mode=${2:-fast}
  if [ -f "$pgdir/data/postmaster.pid" ]; then
    as_pg "$(pg_bindir)/pg_ctl" -D "$pgdir/data" -m "$mode" -w stop >/dev/null || true
  fi
}

# A base backup of the running primary of $1 (streaming the WAL it needs, with the settings that
# make it follow the primary: -R), started under $2 as its standby.
start_standby() {
  local primary=$1 pgdir=$2 bin
  bin=$(pg_bindir)
  [ -f "$primary/port" ] && [ -f "$primary/data/postmaster.pid" ] || { echo "no running PostgreSQL under $primary" >&2; exit 1; }
  mkdir -p "$pgdir"
  [ "$(id -u)" -ne 0 ] || chown postgres "$pgdir"
  if [ ! -f "$pgdir/data/PG_VERSION" ]; then
    as_pg "$bin/pg_basebackup" -R -D "$pgdir/data" -h 127.0.0.1 -p "$(cat "$primary/port")" -U postgres -X stream \
      >"$pgdir/basebackup.log" 2>&1 || { echo "pg_basebackup failed; see $pgdir/basebackup.log" >&2; exit 1; }
  fi
  # The primary's port and socket folder were options of its command line, not of the copied
  # configuration: the standby gets its own.
  run_postgres "$pgdir"
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
      if [ -f "$dir/mosquitto/tls-port" ]; then
        echo "PRESENCE_TLS_BROKER_URL=mqtts://127.0.0.1:$(cat "$dir/mosquitto/tls-port")"
        echo "PRESENCE_TLS_BROKER_CA=$dir/mosquitto/tls/ca.crt"
      fi
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
    start_broker "$dir" "$persistent"
    ;;
  hall)
    central=${3:?hall needs the URL of the central broker}
    prefix=${4:?hall needs the topic prefix}
    mkdir -p "$dir"
    start_broker "$dir" true "$(hall_bridge "$central" "$prefix" "$(cd "$dir" && pwd)")"
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
  postgres-kill)
    stop_postgres "$dir" immediate
    ;;
  standby)
    standby=${3:?usage: $0 standby PRIMARY_PGDIR DIR}
    mkdir -p "$standby"
    start_standby "$(cd "$dir" && pwd)" "$(cd "$standby" && pwd)"
    ;;
  promote)
    as_pg "$(pg_bindir)/pg_ctl" -D "$dir/data" -w -t 60 promote >/dev/null
    ;;
  *)
    echo "unknown command '$cmd': expected $commands" >&2
    exit 2
    ;;
esac
