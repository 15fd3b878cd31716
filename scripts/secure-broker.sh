#!/usr/bin/env bash
# Everything a mosquitto broker needs to serve the presence pipeline securely, in one folder:
# a CA and a server certificate for the broker's host names, one password per registered node
# and for the aggregator and subscribers, the ACL (deploy/mosquitto/acl) and the broker
# configuration (deploy/mosquitto/mosquitto.conf), both rewritten for this folder, port and prefixes
# (the topic prefix, and Home Assistant's discovery prefix, which the aggregator writes with
# --ha-discovery and readers may read).
#
#   scripts/secure-broker.sh DIR --host NAME [--host NAME]... [--port 8883] [--prefix presence]
#                            [--ha-prefix homeassistant] [--nodes KEY,KEY...] [--data DIR]
#
# Nodes are the registry's (PRESENCE_DATABASE_URL or PRESENCE_DATABASE_URL_FILE: fixed nodes and
# scanners registered as devices node:KEY), or those given with --nodes. Run it again after
# registering nodes: the CA, the certificate (unless the host names changed) and existing passwords
# are kept, new nodes get one, nodes no longer registered lose theirs. Prints one line per client:
# its user name and connection URL (the password is also in DIR/secrets/USER.password, mode 0600).
# As root, the files the broker reads are given to the `mosquitto` user.
set -euo pipefail

usage() { echo "usage: $0 DIR --host NAME [--host NAME]... [--port 8883] [--prefix presence] [--ha-prefix homeassistant] [--nodes KEY,...] [--data DIR]" >&2; exit 2; }
fail() { echo "$*" >&2; exit 1; }

dir=${1:-}
[ -n "$dir" ] && [ "${dir#-}" = "$dir" ] || usage
shift
hosts=()
port=8883
prefix=presence
ha_prefix=homeassistant
nodes_given=""
data=""
while [ $# -gt 0 ]; do
  case "$1" in
    --host) hosts+=("${2:?--host needs a name or address}"); shift 2 ;;
    --port) port=${2:?--port needs a number}; shift 2 ;;
    --prefix) prefix=${2:?--prefix needs a topic prefix}; shift 2 ;;
    --ha-prefix) ha_prefix=${2:?--ha-prefix needs a topic prefix}; shift 2 ;;
    --nodes) nodes_given=${2?--nodes needs keys}; nodes_given=${nodes_given:-,}; shift 2 ;;
    --data) data=${2:?--data needs a folder}; shift 2 ;;
    *) fail "unknown option '$1': expected --host, --port, --prefix, --ha-prefix, --nodes or --data" ;;
  esac
done
[ ${#hosts[@]} -gt 0 ] || fail "no --host given: expected the names or addresses clients use to reach the broker"
[[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || fail "--port '$port' is not valid: expected 1 to 65535"
[[ "$prefix" =~ ^[^+#/]+(/[^+#/]+)*$ ]] || fail "--prefix '$prefix' is not valid: expected MQTT topic levels without wildcards or empty levels"
[[ "$ha_prefix" =~ ^[^+#/]+(/[^+#/]+)*$ ]] || fail "--ha-prefix '$ha_prefix' is not valid: expected MQTT topic levels without wildcards or empty levels"
for host in "${hosts[@]}"; do
  [[ "$host" =~ ^[A-Za-z0-9.:-]+$ ]] || fail "--host '$host' is not valid: expected a DNS name or an IP address"
done
for tool in openssl mosquitto_passwd; do
  command -v "$tool" >/dev/null || fail "$tool not found: run scripts/install-deps.sh"
done

here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
data=${data:-$dir/data}
umask 077
mkdir -p "$dir/secrets" "$data"

# The clients: every registered node, plus the aggregator and subscribers.
if [ -n "$nodes_given" ]; then
  nodes=$(printf '%s\n' "$nodes_given" | tr ',' '\n' | sed '/^$/d' | sort -u)
else
  url=${PRESENCE_DATABASE_URL:-}
  if [ -z "$url" ] && [ -n "${PRESENCE_DATABASE_URL_FILE:-}" ]; then url=$(head -n 1 "$PRESENCE_DATABASE_URL_FILE"); fi
  [ -n "$url" ] || fail "no nodes: pass --nodes KEY,... or set PRESENCE_DATABASE_URL to read them from the registry"
  nodes=$(psql "$url" -v ON_ERROR_STOP=1 -qAt -c "SELECT key FROM presence.nodes
      UNION SELECT substr(identity, 6) FROM presence.devices WHERE identity LIKE 'node:%' ORDER BY 1") \
    || fail "cannot read the nodes from the registry"
fi
for node in $nodes; do
  [[ "$node" =~ ^[a-z0-9][a-z0-9._-]{0,63}$ ]] || fail "node key '$node' is not valid: expected a slug [a-z0-9][a-z0-9._-]{0,63}"
  case "$node" in
    presence-aggregator|presence-reader) fail "node key '$node' is reserved for the broker's own accounts: rename the node" ;;
  esac
done
users="presence-aggregator presence-reader $(echo $nodes)"

# The CA (kept), and the broker's certificate for its host names (made again when they change).
if [ ! -f "$dir/ca.key" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" -subj "/CN=presence broker CA" 2>/dev/null
fi
san=$(for host in "${hosts[@]}"; do
  if [[ "$host" =~ ^[0-9.]+$ || "$host" == *:* ]]; then echo "IP:$host"; else echo "DNS:$host"; fi
done | paste -sd, -)
if [ ! -f "$dir/server.crt" ] || [ "$(cat "$dir/server.san" 2>/dev/null)" != "$san" ]; then
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$dir/server.key" -out "$dir/server.csr" -subj "/CN=${hosts[0]}" 2>/dev/null
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san" > "$dir/server.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 825 \
    -extfile "$dir/server.ext" -out "$dir/server.crt" 2>/dev/null
  rm -f "$dir/server.csr" "$dir/server.ext"
  echo "$san" > "$dir/server.san"
fi

# One random password per client, kept across runs; the broker's file holds only their hashes.
rm -f "$dir/passwords.new"
touch "$dir/passwords.new"
for user in $users; do
  secret="$dir/secrets/$user.password"
  [ -s "$secret" ] || openssl rand -base64 24 | tr '+/' '-_' | tr -d '=\n' > "$secret"
  mosquitto_passwd -b "$dir/passwords.new" "$user" "$(cat "$secret")"
done
for secret in "$dir"/secrets/*.password; do
  user=$(basename "$secret" .password)
  case " $users " in *" $user "*) ;; *) rm -f "$secret" ;; esac
done
mv "$dir/passwords.new" "$dir/passwords"

# The ACL and the configuration, rewritten for these prefixes, folder and port.
sed -e "s#presence/v1/#$prefix/v1/#g" -e "s#^topic \([a-z]*\) homeassistant/\##topic \1 $ha_prefix/\##" \
  -e "s#for the topic prefix \`presence\`#for the topic prefix \`$prefix\`#" \
  -e "s#discovery prefix \`homeassistant\`#discovery prefix \`$ha_prefix\`#" "$here/deploy/mosquitto/acl" > "$dir/acl"
sed -e "s#/etc/mosquitto/presence/\([a-z.]*\)\$#$dir/\1#" -e "s#^persistence_location .*#persistence_location $data/#" \
  -e "s#^listener 8883\$#listener $port#" "$here/deploy/mosquitto/mosquitto.conf" > "$dir/mosquitto.conf"

chmod 0755 "$dir"
chmod 0644 "$dir/ca.crt" "$dir/server.crt" "$dir/mosquitto.conf" "$dir/acl"
if [ "$(id -u)" -eq 0 ] && id mosquitto >/dev/null 2>&1; then
  chown mosquitto "$dir/server.key" "$dir/passwords" "$data"
fi

for user in $users; do
  echo "$user mqtts://$user:$(cat "$dir/secrets/$user.password")@${hosts[0]}:$port"
done
echo "CA certificate for clients (--ca-file): $dir/ca.crt" >&2
