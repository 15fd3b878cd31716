#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, then runs the unit tests (pure logic,
# no I/O) and the integration tests (real mosquitto and PostgreSQL started on free loopback ports
# by scripts/servers.sh, and the built executables), with warnings treated as errors.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
swift build --build-tests -Xswiftc -warnings-as-errors

# Every test at once, in groups side by side, each a process of the test binary with servers and
# folders of its own: the unit and integration tests (through `swift test`, which lets one run at a
# time use the build folder), and the end-to-end tests in five groups. Those measure decisions
# against the wall clock and mostly wait on walks in real time, so each group runs its tests one at
# a time, and the groups are balanced by their suites' durations (docs/testing.md). The last group
# is every end-to-end suite that no other names, so that a new suite is never left out.
tests="$(swift build --show-bin-path)/presencePackageTests.xctest"
named=(
  'AggregatorRobustnessTests|AggregatorCalibrationTests|HealthTests|AggregatorHTTPTests'
  'AggregatorOutageTests|AggregatorWalkTests|ZoneWalkTests'
  'FailoverTests|SimulatedVenueTests|StandbyPromotionTests'
  'ScannerTests|DiscoverTests|PrometheusTests'
)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
groups=()

# Runs a command as group $1 in the background: its output to $logs/$1, then its exit status and
# seconds to $logs/$1.status.
group() {
  local name=$1
  shift
  groups+=("$name")
  (
    started=$SECONDS
    if NO_COLOR=1 "$@" > "$logs/$name" 2>&1; then status=0; else status=$?; fi
    echo "$status $((SECONDS - started))" > "$logs/$name.status"
  ) &
}

all=$(IFS='|'; echo "${named[*]}")
for index in "${!named[@]}"; do
  group "end-to-end-$((index + 1))" "$tests" --testing-library swift-testing --filter "EndToEndTests/(${named[index]})/"
done
group "end-to-end-$((${#named[@]} + 1))" "$tests" --testing-library swift-testing --filter EndToEndTests --skip "EndToEndTests/($all)/"
# Swift Testing starts every test case at once unless told a bound: the parameterised ones would
# run some fifty presencectl side by side on two cores, and the tests that time things would time
# the queue. Two test cases a core at a time keep the load, and the run, shorter.
group unit-and-integration env SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$((2 * $(nproc))) swift test --skip-build --skip EndToEndTests
wait

failed=0
for name in "${groups[@]}"; do
  echo "=== $name"
  cat "$logs/$name"
done
echo "=== summary"
for name in "${groups[@]}"; do
  status=1 seconds='?'
  [ ! -f "$logs/$name.status" ] || read -r status seconds < "$logs/$name.status"
  if [ "$status" -eq 0 ]; then verdict=passed; else verdict="FAILED (exit $status)"; failed=1; fi
  echo "$name: $verdict in $seconds s: $(grep -h "Test run with" "$logs/$name" | tail -n 1)"
done
exit "$failed"
