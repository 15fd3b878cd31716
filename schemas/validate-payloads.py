#!/usr/bin/env python3
"""Validates captured MQTT payloads against the JSON Schemas in schemas/json.

Usage: schemas/validate-payloads.py CAPTURE.jsonl
Each line of CAPTURE is {"topic": "...", "payload": "<the payload as text>"}; the topic says which
schema applies (Home Assistant's discovery topics by their `/device_tracker/presence_…` and
`/sensor/presence_…` and `/binary_sensor/presence_ZONE_…` levels, under any prefix). Empty payloads (deleted retained state) are skipped. Exits 1 listing every payload
that does not validate, 0 when all do, printing how many were checked per schema.
"""
import json
import re
import sys
from pathlib import Path

import jsonschema

HERE = Path(__file__).resolve().parent / "json"
ROUTES = [
    (re.compile(r"/v1/sightings/[^/]+$"), "sighting-batch"),
    (re.compile(r"/v1/sightings/[^/]+/[0-9]+$"), "sighting-batch"),
    (re.compile(r"/v1/config$"), "config"),
    (re.compile(r"/v1/nodes/[^/]+/status$"), "node-status"),
    (re.compile(r"/v1/nodes/[^/]+/stats$"), "node-stats"),
    (re.compile(r"/v1/events/[^/]+/[^/]+$"), "presence-event"),
    (re.compile(r"/v1/state/users/[^/]+$"), "user-state"),
    (re.compile(r"/v1/state/beacons/[^/]+$"), "beacon-state"),
    (re.compile(r"/v1/zones/events/[^/]+/[^/]+$"), "zone-event"),
    (re.compile(r"/v1/zones/state/[^/]+$"), "zone-state"),
    (re.compile(r"/v1/notify/[^/]+$"), "notification"),
    (re.compile(r"/v1/aggregator/status$"), "aggregator-status"),
    (re.compile(r"/v1/aggregator/stats$"), "aggregator-stats"),
    (re.compile(r"/device_tracker/presence_[A-Za-z0-9_-]+/config$"), "ha-tracker-config"),
    (re.compile(r"/device_tracker/presence_[A-Za-z0-9_-]+/state$"), "ha-tracker-state"),
    (re.compile(r"/device_tracker/presence_[A-Za-z0-9_-]+/attributes$"), "ha-tracker-attributes"),
    (re.compile(r"/binary_sensor/presence_ZONE_[A-Za-z0-9_-]+/config$"), "ha-binary-sensor-config"),
    (re.compile(r"/sensor/presence_[A-Za-z0-9_-]+/config$"), "ha-sensor-config"),
    (re.compile(r"/v1/health$"), "health"),
    (re.compile(r"/v1/health/parts/[^/]+$"), "health"),
]
# Payloads that are plain text, not JSON: checked as a JSON string.
TEXT = {"ha-tracker-state"}


def main() -> int:
    validators = {}
    for path in HERE.glob("*.schema.json"):
        schema = json.loads(path.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[path.name.removesuffix(".schema.json")] = jsonschema.Draft202012Validator(schema)
    checked: dict[str, int] = {}
    failures = []
    for number, line in enumerate(Path(sys.argv[1]).read_text().splitlines(), 1):
        record = json.loads(line)
        topic, payload = record["topic"], record["payload"]
        if not payload:
            continue
        name = next((n for pattern, n in ROUTES if pattern.search(topic)), None)
        if name is None:
            failures.append(f"line {number}: no schema for topic {topic}")
            continue
        try:
            value = payload if name in TEXT else json.loads(payload)
        except ValueError as error:
            failures.append(f"line {number}: {topic}: not JSON: {error}")
            continue
        for error in validators[name].iter_errors(value):
            failures.append(f"line {number}: {topic}: {error.message} at {list(error.absolute_path)}")
        checked[name] = checked.get(name, 0) + 1
    print(" ".join(f"{k}={v}" for k, v in sorted(checked.items())))
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
