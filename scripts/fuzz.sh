#!/usr/bin/env bash
# Fuzzes the frame parsers (HCI events, AD structures, beacon frames, the decoder and its policies,
# btsnoop) with libFuzzer and AddressSanitizer for SECONDS (default 300):
#
#   scripts/fuzz.sh [SECONDS]
#
# Builds the presence-fuzz target in its own folder (.build-fuzz, since sanitizer flags apply to
# every module), seeds it with every vector of ../shared/data/frames/vectors.json (as it is, as an
# HCI event without its first byte, and as the length-prefixed event runs the decoder reads) and
# with Tests/Fixtures/scan.btsnoop. The corpus grows in .build-fuzz/corpus; a crash is saved in
# .build-fuzz/artifacts/ and replays with `swift run presence-fuzz FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
scratch=.build-fuzz

swift build -c release --scratch-path "$scratch" --product presence-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING

mkdir -p "$scratch/corpus" "$scratch/seeds" "$scratch/artifacts"
python3 - "$scratch/seeds" <<'PY'
import json, pathlib, sys
seeds = pathlib.Path(sys.argv[1])
vectors = pathlib.Path("../shared/data/frames/vectors.json")
if vectors.exists():
    for entry in json.loads(vectors.read_text()):
        data = bytes.fromhex(entry["hex"])
        variants = [data, data[1:], bytes([len(data[1:]) & 0xFF]) + data[1:]]
        for number, variant in enumerate(variants):
            (seeds / f"{entry['id']}-{number}").write_bytes(variant)
else:
    print(f"warning: {vectors} not found; seeding with the capture fixture only", file=sys.stderr)
PY
cp Tests/Fixtures/scan.btsnoop "$scratch/seeds/scan.btsnoop"

"$scratch/release/presence-fuzz" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
  -artifact_prefix="$scratch/artifacts/" "$scratch/corpus" "$scratch/seeds"
