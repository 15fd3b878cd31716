#!/usr/bin/env bash
# Installs what the project needs and the machine lacks: Debian packages (the C libraries, the
# servers the tests and the demo start, the headless browser of the page test, rsvg-convert for
# `presencectl visits --chart FILE.png`, Prometheus and promtool for the alert and dashboard tests,
# valgrind for scripts/instruction-cost.sh, and what scripts/package.sh and scripts/package-test.sh
# build, check and trace Debian packages with) and the Python packages of the contract check, the
# schema test and the page test. Safe to run again: it only installs what is missing.
set -euo pipefail

debs=(curl mosquitto mosquitto-clients libmosquitto-dev postgresql libpq-dev libbluetooth-dev bluez time chromium fonts-dejavu-core librsvg2-bin
  prometheus dpkg-dev debhelper lintian help2man patchelf strace valgrind binutils)
missing=()
for p in "${debs[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Debian starts its own mosquitto, PostgreSQL and Prometheus services on install; the project runs
# private servers on free loopback ports instead, so the system ones are left alone.

if ! python3 -c 'import paho.mqtt, psycopg, jsonschema, websocket' 2>/dev/null; then
  echo "installing Python packages: paho-mqtt psycopg jsonschema websocket-client"
  python3 -m pip install -q --disable-pip-version-check paho-mqtt 'psycopg[binary]' jsonschema websocket-client
fi
