#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, then runs the unit tests (pure logic,
# no I/O) and the integration tests (real mosquitto and PostgreSQL started on free loopback ports
# by scripts/servers.sh, and the built executables), with warnings treated as errors.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
swift build --build-tests -Xswiftc -warnings-as-errors
# The end-to-end tests measure decisions against the wall clock: they run after the rest, alone,
# so that the other suites' load on two cores does not turn timing into noise.
swift test --skip-build --skip EndToEndTests
swift test --skip-build --filter EndToEndTests
