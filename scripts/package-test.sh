#!/usr/bin/env bash
# The Debian packages, as a venue installs them, on this machine (as root: it installs them
# system-wide, then purges them):
#   1. scripts/package.sh builds them (lintian: no error);
#   2. apt installs them: the presence system user, /etc/presence with its environment files as
#      conffiles (0600), the password files (0600), the units enabled but not started, man pages
#      and documentation; the installed units verify clean and rate 2.0 or less in
#      `systemd-analyze security`; the shipped rules pass promtool;
#   3. `presencectl migrate` and the registry, then the aggregator, run as the installed unit says
#      (its user, environment file, state folder and credentials, by scripts/run-unit.py: systemd
#      need not be PID 1) against private servers (scripts/servers.sh): a node's batches make an
#      enter, stored in PostgreSQL and counted on /metrics; it runs traced, and the trace meets
#      every restriction of the unit that a trace can show (system calls, socket families,
#      writable and executable memory, files written, /proc);
#   4. the same build packaged with a higher version installs over it: the edited environment
#      file, the password file and the journal are kept, and the aggregator starts again on them;
#   5. purge leaves nothing but what Debian policy keeps (the presence user).
# Whatever happens, the packages are purged and the servers stopped at the end. A lock keeps two
# runs on one machine (other worktrees) apart, since the user, /etc/presence and the units are
# the machine's. Prints "ok"/"not ok" per check, then "N passed, N failed"; exits 1 on a failure.
#
#   scripts/package-test.sh [--skip-build]     (--skip-build: package the release build there)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

[ "$(id -u)" -eq 0 ] || { echo "scripts/package-test.sh installs packages system-wide: run it as root" >&2; exit 2; }
build_flag=()
[ "${1:-}" != "--skip-build" ] || build_flag=(--skip-build)

exec 9>/run/lock/presence-package-test.lock
if ! flock -w 900 9; then echo "another package test held the lock for 15 minutes" >&2; exit 1; fi

programs=(presence-aggregator presence-scanner presencectl)
packages=("${programs[@]}" presence-swift-runtime)
tmp=$(mktemp -d /tmp/presence-package-test.XXXXXX)
chmod 0755 "$tmp"
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
check() {  # check DESCRIPTION COMMAND...: the command's success is the check's
  local what=$1
  shift
  if "$@" >"$tmp/check.out" 2>&1; then ok "$what"; else not_ok "$what"; sed 's/^/    /' "$tmp/check.out" | tail -n 20; fi
}

purge() {
  local installed=()
  for p in "${packages[@]}"; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed\|config-files'; then installed+=("$p"); fi
  done
  [ ${#installed[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${installed[@]}" >/dev/null
}

program_pid() { { pgrep -f "^/usr/bin/$1( |\$)" || true; } | head -n 1; }  # an installed program itself (not strace, not run-unit.py)

cleanup() {
  local status=$?
  for program in presence-aggregator presence-scanner; do
    pid=$(program_pid "$program")
    if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; fi
  done
  purge || echo "purging the packages failed" >&2
  bash scripts/servers.sh stop "$tmp/servers" >/dev/null 2>&1 || true
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT

# Left over by a run that was killed before its own clean-up.
purge
leftovers() { find -H /etc /usr /lib /var/lib -path '*presence*' 2>/dev/null | grep -v '^/var/lib/dpkg/' | sort || true; }
leftovers > "$tmp/before"

echo "# building the packages"
started=$(date +%s)
bash scripts/package.sh --out "$tmp/v1" "${build_flag[@]}" > "$tmp/v1.list"
version=$(dpkg-deb -f "$(head -n 1 "$tmp/v1.list")" Version)
bash scripts/package.sh --out "$tmp/v2" --skip-build --no-lintian --version "$version+1" > "$tmp/v2.list" 2>"$tmp/v2.err" ||
  { cat "$tmp/v2.err" >&2; exit 1; }
echo "# packages $version and $version+1 built in $(($(date +%s) - started)) s"
check "four packages built" test "$(wc -l < "$tmp/v1.list")" -eq 4
check "$version+1 sorts after $version" dpkg --compare-versions "$version+1" gt "$version"

echo "# installing $version"
started=$(date +%s)
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(cat "$tmp/v1.list") >/dev/null
for p in "${packages[@]}"; do
  check "$p $version installed" test "$(dpkg-query -W -f='${Status} ${Version}' "$p")" = "install ok installed $version"
done
check "the presence user is a system user without a login" \
  bash -c '[ "$(getent passwd presence | cut -d: -f3)" -lt 1000 ] && [ "$(getent passwd presence | cut -d: -f7)" = /usr/sbin/nologin ]'
check "the presence group exists" getent group presence
for f in aggregator scanner; do
  check "/etc/presence/$f.env is a conffile, 0600 root" \
    bash -c "dpkg-query -W -f='\${Conffiles}' presence-$f | grep -q ' /etc/presence/$f.env ' && [ \"\$(stat -c '%a %U' /etc/presence/$f.env)\" = '600 root' ]"
  check "/etc/presence/$f-broker.password is made empty, 0600 root" \
    bash -c "[ \"\$(stat -c '%a %U %s' /etc/presence/$f-broker.password)\" = '600 root 0' ]"
  check "presence-$f.service is enabled and not started" \
    bash -c "[ -L /etc/systemd/system/multi-user.target.wants/presence-$f.service ] && ! pgrep -f '^/usr/bin/presence-$f( |\$)'"
  check "presence-$f.service verifies clean" bash -c "out=\$(systemd-analyze verify /lib/systemd/system/presence-$f.service 2>&1); echo \"\$out\"; [ -z \"\$out\" ]"
  exposure=$(systemd-analyze security --offline=true /lib/systemd/system/presence-$f.service 2>/dev/null | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
  check "presence-$f.service's exposure $exposure is 2.0 or less" awk -v e="$exposure" 'BEGIN { exit !(e != "" && e <= 2.0) }'
done
for p in "${programs[@]}"; do
  check "$p's man page and documentation" bash -c "[ -f /usr/share/man/man1/$p.1.gz ] && [ -f /usr/share/doc/$p/copyright ] && [ -f /usr/share/doc/$p/changelog.gz ] && ls /usr/share/doc/$p/$p.txt*"
done
check "presence-scanner's copyright notes libbluetooth's GPL" grep -q 'GPL-2.0-or-later' /usr/share/doc/presence-scanner/copyright
check "the installed rules pass promtool, and the example configuration loads them" \
  bash -c 'cd /usr/share/presence-aggregator/prometheus && promtool test rules presence-rules.test.yml && promtool check config /usr/share/doc/presence-aggregator/examples/prometheus.yml'
check "the Grafana dashboard is installed where the provisioning example points" \
  bash -c 'grep -q "path: /usr/share/presence-aggregator/grafana/dashboards" /usr/share/doc/presence-aggregator/examples/provisioning/dashboards/presence.yml && python3 -m json.tool /usr/share/presence-aggregator/grafana/dashboards/presence.json >/dev/null'
check "the programs load the Swift runtime from presence-swift-runtime, nothing from a toolchain" \
  bash -c 'out=$(ldd /usr/bin/presence-aggregator /usr/bin/presence-scanner /usr/bin/presencectl); echo "$out" | grep -q "libswiftCore.so => /usr/lib/presence/" && ! echo "$out" | grep -E "not found|/opt/swift"'
echo "# installed in $(($(date +%s) - started)) s"

echo "# running presencectl and the aggregator as the installed unit says"
started=$(date +%s)
bash scripts/servers.sh start "$tmp/servers" --owner $$ > "$tmp/servers.env"
broker=$(sed -n 's/^PRESENCE_BROKER_URL=//p' "$tmp/servers.env")
server=$(sed -n 's/^PRESENCE_DATABASE_URL=//p' "$tmp/servers.env")
database=pkgtest_$RANDOM$RANDOM
psql "$server" -qc "CREATE DATABASE $database"
prefix=pkgtest$RANDOM
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
unit=/lib/systemd/system/presence-aggregator.service
python3 - "$broker" "${server%/*}/$database" "$prefix" "$port" <<'EOF'
import re, sys
broker, database, prefix, port = sys.argv[1:]
path = "/etc/presence/aggregator.env"
text = open(path).read()
text = re.sub(r"(?m)^PRESENCE_BROKER_URL=.*$", f"PRESENCE_BROKER_URL={broker}", text)
text = re.sub(r"(?m)^PRESENCE_DATABASE_URL=.*$", f"PRESENCE_DATABASE_URL={database}", text)
text = re.sub(r"(?m)^#PRESENCE_TOPIC_PREFIX=.*$", f"PRESENCE_TOPIC_PREFIX={prefix}", text)
text = re.sub(r"(?m)^PRESENCE_AGGREGATOR_ARGS=.*$", f"PRESENCE_AGGREGATOR_ARGS=--http 127.0.0.1:{port} --stats-interval 1s", text)
open(path, "w").write(text)
EOF
cp /etc/presence/aggregator.env "$tmp/aggregator.env.edited"
as_unit() { python3 scripts/run-unit.py run "$unit" --exec "$@"; }
traces=$tmp/traces  # written by strace, which runs as the unit's user
install -d -m 0700 -o presence -g presence "$traces"
check "presencectl migrate as the aggregator's user and environment" as_unit /usr/bin/presencectl migrate
check "the registry: a venue, a beacon, its node, a user and her tag" bash -c "
  python3 scripts/run-unit.py run $unit --exec /usr/bin/presencectl venue add hall &&
  python3 scripts/run-unit.py run $unit --exec /usr/bin/presencectl beacon add stand-1 --venue hall &&
  python3 scripts/run-unit.py run $unit --exec /usr/bin/presencectl node add node-1 --venue hall --beacon stand-1 &&
  python3 scripts/run-unit.py run $unit --exec /usr/bin/presencectl user add ada &&
  python3 scripts/run-unit.py run $unit --exec /usr/bin/presencectl device add ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:5:5 --user ada"

run_aggregator() {  # run_aggregator TRACE: starts it as the unit says, waits until /readyz answers 200
  python3 scripts/run-unit.py run "$unit" --trace "$1" > "$tmp/aggregator.log" 2>&1 &
  aggregator_pid=$!
  for _ in $(seq 1 300); do
    if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then return 0; fi
    kill -0 "$aggregator_pid" 2>/dev/null || break
    sleep 0.2
  done
  tail -n 20 "$tmp/aggregator.log"
  return 1
}
stop_aggregator() {  # SIGTERM, as systemd stops it; its status
  kill -TERM "$(program_pid presence-aggregator)"
  local status=0
  wait "$aggregator_pid" || status=$?
  aggregator_pid=""
  return "$status"
}
metric() { curl -fsS "http://127.0.0.1:$port/metrics" | awk -v name="$1" '$1 == name { print $2 }'; }

check "the aggregator starts as the unit says and is ready" run_aggregator "$traces/1"
check "it runs as the presence user" bash -c "ps -o user= -p $(program_pid presence-aggregator) | grep -qx presence"
for seq in 1 2 3 4 5; do
  now=$(($(date +%s%N) / 1000000))
  mosquitto_pub -L "$broker/$prefix/v1/sightings/node-1" -q 1 \
    -m "{\"v\":1,\"node\":\"node-1\",\"seq\":$seq,\"sent\":$now,\"sightings\":[{\"ts\":$now,\"id\":\"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:5:5\",\"rssi\":-52,\"tx\":-59}]}"
  sleep 0.5
done
entered() {
  for _ in $(seq 1 40); do
    [ "$(metric 'presence_events_total{kind="enter"}')" = 1 ] &&
      [ "$(psql "${server%/*}/$database" -Atc "SELECT count(*) FROM presence.sessions_v WHERE user_key = 'ada' AND beacon_key = 'stand-1'")" = 1 ] && return 0
    sleep 0.5
  done
  return 1
}
check "a node's batches make an enter, counted on /metrics and stored in PostgreSQL" entered
check "the journal is in the unit's state folder, 0700 presence" \
  bash -c '[ "$(stat -c "%a %U" /var/lib/presence-aggregator)" = "700 presence" ] && [ -n "$(find /var/lib/presence-aggregator -path "*journal*" -type f)" ]'
check "SIGTERM stops it cleanly" stop_aggregator
# libdispatch's worker threads set their QoS nice level with setpriority, best effort: the unit's
# filter refuses it (as the kernel refuses the presence user a negative one anyway), and the
# threads run at the process's priority.
check "the trace meets the unit's restrictions" python3 scripts/run-unit.py check "$unit" "$traces/1" --harmless setpriority

# The scanner as its unit says, on a simulated venue instead of an adapter (there is none here):
# its publishing and spool meet its unit's restrictions; raw HCI scanning is not exercised.
scanner_unit=/lib/systemd/system/presence-scanner.service
sed -i -e "s#^PRESENCE_BROKER_URL=.*#PRESENCE_BROKER_URL=$broker#" -e "s/^#PRESENCE_TOPIC_PREFIX=.*/PRESENCE_TOPIC_PREFIX=$prefix/" \
  /etc/presence/scanner.env
cat > "$tmp/venue.json" <<'VENUE'
{"venue": "hall", "seed": 3, "radio": {"advertisingInterval": "500ms"},
 "beacons": [{"key": "stand-1", "x": 0, "y": 0}], "nodes": [{"key": "node-1", "x": 0, "y": 0, "beacon": "stand-1"}],
 "people": [{"user": "ada", "device": "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:5:5", "arrive": "0s",
             "entrance": {"x": 1, "y": 1}, "speed": 1, "stops": [{"beacon": "stand-1", "dwell": "60s"}]}]}
VENUE
chmod 0644 "$tmp/venue.json"
scan_briefly() {
  python3 scripts/run-unit.py run "$scanner_unit" --trace "$traces/scanner" --exec /usr/bin/presence-scanner \
    --simulate "$tmp/venue.json" --spool-dir /var/lib/presence-scanner > "$tmp/scanner.log" 2>&1 &
  local pid=$!
  sleep 6
  kill -TERM "$(program_pid presence-scanner)"
  wait "$pid"
}
check "a scanner runs as its unit says and stops cleanly" scan_briefly
check "its trace meets its unit's restrictions" python3 scripts/run-unit.py check "$scanner_unit" "$traces/scanner" --harmless setpriority
echo "# ran in $(($(date +%s) - started)) s"

echo "# upgrading to $version+1"
started=$(date +%s)
echo "not a real password" > /etc/presence/scanner-broker.password
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(cat "$tmp/v2.list") >/dev/null
for p in "${packages[@]}"; do
  check "$p $version+1 installed over $version" test "$(dpkg-query -W -f='${Status} ${Version}' "$p")" = "install ok installed $version+1"
done
check "the edited environment file is kept, 0600" bash -c "cmp /etc/presence/aggregator.env $tmp/aggregator.env.edited && [ \"\$(stat -c %a /etc/presence/aggregator.env)\" = 600 ]"
check "the password file is kept" grep -qx "not a real password" /etc/presence/scanner-broker.password
check "the aggregator starts again on its journal and database" run_aggregator "$traces/2"
check "nobody enters twice" test "$(psql "${server%/*}/$database" -Atc "SELECT count(*) FROM presence.events WHERE kind = 'enter'")" = 1
check "SIGTERM stops it cleanly again" stop_aggregator
echo "# upgraded in $(($(date +%s) - started)) s"

echo "# purging"
purge
leftovers > "$tmp/after"
check "purge leaves nothing under /etc, /usr, /lib and /var/lib" diff "$tmp/before" "$tmp/after"
check "the presence user stays, as Debian policy asks" getent passwd presence
check "the units are disabled" bash -c '! ls /etc/systemd/system/multi-user.target.wants/presence-* 2>/dev/null'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
