#!/usr/bin/env python3
"""Prints PresenceEvents (one JSON object per line on standard input) for people."""
import json
import sys
import time

for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        continue
    when = time.strftime("%H:%M:%S", time.localtime(e["at"] / 1000))
    who = e["user"]
    if e["event"] == "enter":
        print(f"{when}  enter  {who:<8} at   {e['beacon']}  ({e.get('proximity')}, ~{e.get('distance')} m)", flush=True)
    else:
        print(f"{when}  exit   {who:<8} from {e['beacon']}  ({e.get('reason')}, {e.get('dwell', 0):.0f} s there)", flush=True)
