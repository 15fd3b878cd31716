#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, then runs the unit tests (pure logic,
# no I/O) and the integration tests (real mosquitto and PostgreSQL started on free loopback ports
# by scripts/servers.sh, and the built executables), with warnings treated as errors.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
swift build --build-tests -Xswiftc -warnings-as-errors
# Swift Testing starts every test case at once unless told a bound: the parameterised ones would
# run some fifty presencectl side by side on two cores, and the tests that time things would time
# the queue. Two test cases a core at a time keep the load, and the run, shorter.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$((2 * $(nproc)))
swift test --skip-build --skip EndToEndTests
# The end-to-end tests measure decisions against the wall clock and mostly wait on walks in real
# time: they run after the rest, in two halves side by side, each a process of the test binary
# with servers of its own (SwiftPM lets one `swift test` at a time use the build folder). Each
# half's output is shown whole when both have ended.
tests="$(swift build --show-bin-path)/presencePackageTests.xctest"
first='EndToEndTests/(AggregatorRobustnessTests|AggregatorOutageTests|FailoverTests|AggregatorCalibrationTests|DiscoverTests|AggregatorHTTPTests|VenuePageTests)/'
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
NO_COLOR=1 "$tests" --testing-library swift-testing --filter "$first" > "$logs/first" 2>&1 &
first_pid=$!
NO_COLOR=1 "$tests" --testing-library swift-testing --filter EndToEndTests --skip "$first" > "$logs/second" 2>&1 &
second_pid=$!
status=0
wait "$first_pid" || status=1
wait "$second_pid" || status=1
cat "$logs/first" "$logs/second"
grep -h "Test run with" "$logs/first" "$logs/second"
exit "$status"
