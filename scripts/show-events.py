#!/usr/bin/env python3
"""Prints PresenceEvents and ZoneEvents (one JSON object per line on standard input) for people."""
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
    if "zone" in e:
        where = "into" if e["event"] == "enter" else "out of"
        reason = f"  ({e.get('reason')}, {e.get('dwell', 0):.0f} s in it)" if e["event"] == "exit" else ""
        print(f"{when}  {e['event']:<5}  {who:<8} {where} zone {e['zone']}{reason}", flush=True)
    elif e["event"] == "enter":
        print(f"{when}  enter  {who:<8} at   {e['beacon']}  ({e.get('proximity')}, ~{e.get('distance')} m)", flush=True)
    else:
        print(f"{when}  exit   {who:<8} from {e['beacon']}  ({e.get('reason')}, {e.get('dwell', 0):.0f} s there)", flush=True)
