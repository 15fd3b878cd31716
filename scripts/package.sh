#!/usr/bin/env bash
# Builds the Debian packages presence-aggregator, presence-scanner, presencectl and
# presence-swift-runtime from this tree, and checks them with lintian (no error allowed; the
# warnings kept are overridden in deploy/debian with their reasons).
#
#   scripts/package.sh [--out DIR] [--version VERSION] [--skip-build] [--no-lintian]
#
# The programs are the release build (`swift build -c release`, which CI and the contract check
# run anyway), and presence-swift-runtime holds the Swift runtime and Foundation libraries they
# load, taken from the toolchain into /usr/lib/presence (their search path is set there with
# patchelf): with Debian's own libraries (libmosquitto, libpq, libbluetooth...: dpkg-shlibdeps
# finds them), that is all a machine needs; it needs no Swift toolchain. Their man pages are made
# by help2man from their own --help, and every presencectl subcommand's help goes into its page and
# into /usr/share/doc/presencectl/presencectl.txt. What goes where is deploy/debian (debhelper,
# built with dpkg-buildpackage); the units are deploy/*.service and the environment files
# deploy/etc/*.env.
#
# The version is deploy/debian/changelog's, followed by +git<commit time>.<commit> unless HEAD is
# tagged v<version>; --version gives another (the upgrade test packages the same build again with a
# higher one). --skip-build packages the release build already there; --no-lintian leaves lintian
# out (the upgrade test's second packaging of the same build). The packages land in DIR (default
# dist/), and the script prints their paths, one a line.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

out=dist
version=""
build=true
lint=true
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --version) version=${2:?--version needs a Debian version}; shift 2 ;;
    --skip-build) build=false; shift ;;
    --no-lintian) lint=false; shift ;;
    *) echo "unknown option '$1': expected --out DIR, --version VERSION, --skip-build or --no-lintian" >&2; exit 2 ;;
  esac
done

bash scripts/install-deps.sh >&2

base=$(dpkg-parsechangelog -l deploy/debian/changelog -S Version)
if [ -z "$version" ]; then
  version=$base
  if ! git describe --exact-match --tags --match "v$base" HEAD >/dev/null 2>&1; then
    version="$base+git$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD).$(git rev-parse --short=8 HEAD)"
  fi
fi
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || { echo "--version '$version' is not valid: expected a Debian version such as 0.1.0+local1" >&2; exit 2; }

products=(presence-aggregator presence-scanner presencectl)
packages=("${products[@]}" presence-swift-runtime)
if [ "$build" = true ]; then
  for product in "${products[@]}"; do
    swift build -c release --product "$product" >&2
  done
fi
bin=$(swift build -c release --show-bin-path)
for product in "${products[@]}"; do
  [ -x "$bin/$product" ] || { echo "$bin/$product is missing: run without --skip-build" >&2; exit 1; }
done
swift_lib=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/linux

# The source tree dpkg-buildpackage reads: deploy/debian as debian/, and what it installs, staged.
work=.build/debian
tree=$work/presence-$version
rm -rf "$work"
mkdir -p "$tree/staged"/{bin,lib,etc,docs,help,man,prometheus,grafana}
cp -r deploy/debian "$tree/debian"
cp deploy/presence-aggregator.service "$tree/debian/presence-aggregator.service"
cp deploy/presence-scanner.service "$tree/debian/presence-scanner.service"
cp deploy/etc/aggregator.env deploy/etc/scanner.env "$tree/staged/etc/"
# The programs, looking for the Swift libraries in /usr/lib/presence; and those libraries, every
# one they load from the toolchain.
for product in "${products[@]}"; do
  cp "$bin/$product" "$tree/staged/bin/"
  patchelf --set-rpath /usr/lib/presence "$tree/staged/bin/$product"
  ldd "$bin/$product" | awk -v lib="$(readlink -f "$swift_lib")" 'index($3, lib) == 1 { print $3 }'
done | sort -u | while read -r library; do
  cp "$library" "$tree/staged/lib/"
done
[ -f "$tree/staged/lib/libswiftCore.so" ] || { echo "no Swift runtime found in $swift_lib" >&2; exit 1; }
cp docs/operations.md docs/aggregator.md docs/security.md docs/postgresql.md docs/mqtt.md docs/scanner.md docs/calibration.md \
  docs/presencectl.md "$tree/staged/docs/"
cp deploy/prometheus/presence-rules.yml deploy/prometheus/presence-rules.test.yml deploy/prometheus/prometheus.yml "$tree/staged/prometheus/"
cp -r deploy/grafana/dashboards deploy/grafana/provisioning "$tree/staged/grafana/"

# Each command's help, and for presencectl every subcommand's, as text and as a man page section.
help_tree() {
  local binary=$tree/staged/bin/$1 path
  "$binary" --help
  "$binary" --experimental-dump-help | python3 -c '
import json, sys
def walk(command, path):
    for sub in command.get("subcommands", []):
        if sub["commandName"] != "help":
            print(" ".join(path + [sub["commandName"]]))
            walk(sub, path + [sub["commandName"]])
walk(json.load(sys.stdin)["command"], [])' | while read -r path; do
    printf '\n%s %s\n\n' "$1" "$path"
    # shellcheck disable=SC2086 # the path is words
    "$binary" $path --help
  done
}
# The staged programs find the staged Swift libraries, for their help.
export LD_LIBRARY_PATH=$root/$tree/staged/lib
declare -A summary=(
  [presence-aggregator]="BLE presence aggregator: who is nearest which beacon"
  [presence-scanner]="BLE presence scanner node"
  [presencectl]="command line for the presence pipeline"
)
for product in "${products[@]}"; do
  help_tree "$product" > "$tree/staged/help/$product.txt"
  include=$tree/staged/help/$product.h2m
  {
    echo "[SEE ALSO]"
    echo "The documentation in /usr/share/doc/$product."
    if [ "$product" = presencectl ]; then
      echo "[COMMANDS]"
      echo ".nf"
      sed -n '/^$/,$p' "$tree/staged/help/$product.txt" | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
      echo ".fi"
    fi
  } > "$include"
  help2man --no-info --section 1 --version-string "$version" --name "${summary[$product]}" --include "$include" \
    --output "$tree/staged/man/$product.1" "$tree/staged/bin/$product"
  rm "$include"
done

unset LD_LIBRARY_PATH

if [ "$version" != "$base" ]; then
  {
    echo "presence ($version) bookworm; urgency=medium"
    echo
    echo "  * Built from commit $(git rev-parse HEAD)."
    echo
    echo " -- $(dpkg-parsechangelog -l deploy/debian/changelog -S Maintainer)  $(date -R -u -d "@$(git log -1 --format=%ct HEAD)")"
    echo
    cat deploy/debian/changelog
  } > "$tree/debian/changelog"
fi

(cd "$tree" && dpkg-buildpackage -b -us -uc >&2)

mkdir -p "$out"
debs=()
for package in "${packages[@]}"; do
  deb=$(ls "$work/${package}_${version}_"*.deb)
  mv "$deb" "$out/"
  debs+=("$out/$(basename "$deb")")
done
if [ "$lint" = true ]; then lintian --fail-on error,warning "${debs[@]}" >&2; fi
printf '%s\n' "${debs[@]}"
