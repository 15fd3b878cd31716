#!/usr/bin/env bash
# Fuzzes the frame parsers (HCI events, AD structures, beacon frames, the decoder and its policies,
# btsnoop) and the aggregator's pure path (topic dispatch, the SightingBatch decoder, the pipeline
# with its engine, on messages of every node topic and every foreign node's topic from registered,
# unregistered and malformed nodes, at any time) with libFuzzer and AddressSanitizer, for SECONDS (default 300) or RUNS inputs:
#
#   scripts/fuzz.sh [SECONDS] [RUNS]
#
# JOBS=N runs N fuzzers side by side on the same corpus (each its own RUNS; logs in
# .build-fuzz*/fuzz-K.log).
# MAX_LEN=N caps inputs at N bytes (libFuzzer's default grows them to 4096): shorter message
# sequences, more of them per second.
# SANITIZE=fuzzer leaves AddressSanitizer out (in .build-fuzz-plain): Swift still traps on overflow
# and bad indexes, and inputs run about five times as fast, for long runs.
#
# Builds the presence-fuzz target in its own folder (.build-fuzz, since sanitizer flags apply to
# every module), seeds it with every vector of data/frames/vectors.json (as it is, as an
# HCI event without its first byte, and as the length-prefixed event runs the decoder reads) and
# with Tests/Fixtures/scan.btsnoop, and the pipeline with a few message sequences (inputs starting
# with "PIPE", see Fuzz/AggregatorFuzz.swift). The corpus grows in .build-fuzz/corpus; a crash is saved in
# .build-fuzz/artifacts/ and replays with `swift run presence-fuzz FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
runs="${2:--1}"
jobs="${JOBS:-1}"
case "$jobs" in
  ''|*[!0-9]*|0) echo "fuzz.sh: JOBS must be a number of fuzzers, 1 or more, not '$jobs'" >&2; exit 2 ;;
esac
parallel=()
if [ "$jobs" -gt 1 ]; then parallel=(-jobs="$jobs" -workers="$jobs"); fi
if [ -n "${MAX_LEN:-}" ]; then
  case "$MAX_LEN" in
    *[!0-9]*|0) echo "fuzz.sh: MAX_LEN must be a number of bytes, 1 or more, not '$MAX_LEN'" >&2; exit 2 ;;
  esac
  parallel+=(-max_len="$MAX_LEN")
fi
sanitize="${SANITIZE:-fuzzer,address}"
case "$sanitize" in
  fuzzer,address) scratch=.build-fuzz ;;
  fuzzer) scratch=.build-fuzz-plain ;;
  *) echo "fuzz.sh: SANITIZE must be fuzzer,address or fuzzer, not '$sanitize'" >&2; exit 2 ;;
esac

swift build -c release --scratch-path "$scratch" --product presence-fuzz \
  -Xswiftc -sanitize="$sanitize" -Xswiftc -DFUZZING

mkdir -p "$scratch/corpus" "$scratch/seeds" "$scratch/artifacts"
python3 - "$scratch/seeds" <<'PY'
import json, pathlib, sys
seeds = pathlib.Path(sys.argv[1])
vectors = pathlib.Path("data/frames/vectors.json")
if vectors.exists():
    for entry in json.loads(vectors.read_text()):
        data = bytes.fromhex(entry["hex"])
        variants = [data, data[1:], bytes([len(data[1:]) & 0xFF]) + data[1:]]
        for number, variant in enumerate(variants):
            (seeds / f"{entry['id']}-{number}").write_bytes(variant)
else:
    print(f"warning: {vectors} not found; seeding with the capture fixture only", file=sys.stderr)
# Pipeline seeds: well-formed batches from node-a and the badge, a status, a stats heartbeat, a
# stranger, and an absolute time at the end of Int64.
seq = bytearray(b"PIPE")
for step in range(12):
    seq += bytes([0x20, 10, 0, 3, 4, 0x82, 0, 0x83, 2, 0x60])
seq += bytes([0x28, 10, 0, 1, 2, 0x41, 0xC0 & 0xFF])
seq += bytes([0x01, 0, 0, 18]) + b'{"state":"offline"}'[:18]
seq += bytes([0x02, 20, 0, 7]) + b'{"v":1}'
seq += bytes([0x0C, 4, 5]) + b"ghost" + bytes([0, 2]) + b"{}"
seq += bytes([0x10]) + (2**63 - 1).to_bytes(8, "big") + bytes([0, 0])
(seeds / "pipeline-walk").write_bytes(bytes(seq))
# Foreign nodes: ESPresense reports and gateway advertisements from node-a, their statuses.
seq = bytearray(b"PIPE")
for step in range(12):
    seq += bytes([0x23, 10, 1, step, 0xC4, 0xC5, 0x23, 0, 3, step, 0xC6, 0xC5])
seq += bytes([0x03, 0, 2, 0, 7]) + b"offline" + bytes([0x03, 0, 4, 0, 6]) + b"online"
(seeds / "pipeline-foreign").write_bytes(bytes(seq))
(seeds / "pipeline-swap").write_bytes(b"PIPE" + bytes([0xE0, 10, 0, 1, 1, 0x02, 0]) + bytes([0x20, 10, 0, 1, 1, 0x02, 0]))
PY
cp Tests/Fixtures/scan.btsnoop "$scratch/seeds/scan.btsnoop"

# From the scratch folder, where side-by-side jobs write their fuzz-K.log.
cd "$scratch"
./release/presence-fuzz "${parallel[@]}" -max_total_time="$seconds" -runs="$runs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix=artifacts/ corpus seeds
