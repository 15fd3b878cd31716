#!/usr/bin/env python3
"""Sweeps engine settings over `presence-bench accuracy` and ranks them by their worst case.

usage: scripts/accuracy-sweep.py [--part tuning|reporting|all] [--full] [--only TEXT]... KEY=V1,V2,... ...

Every combination of the given values is scored (one `presence-bench accuracy` run each, --quick
unless --full). For each combination the script prints, per scenario, the engine's history/live
accuracy, transitions per true one, flaps per device-hour and median enter, and ranks the
combinations by their worst dataset: the smallest margin of the engine's history accuracy over
strongest-RSSI's, with combinations that break a target (transitions over 2x true on a dataset;
dwell accuracy under 99.5 %, 0.5 flaps/device-hour or more, or a median enter over 4 s in a
simulation; the `still` ones hold a single stay, so their enter is left out) ranked after every one that keeps them.
"""
import itertools
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, ".build", "release", "presence-bench")


def parse(arguments):
    part, full, only, grid = "tuning", False, [], []
    rest = list(arguments)
    while rest:
        argument = rest.pop(0)
        if argument == "--part":
            part = rest.pop(0)
        elif argument == "--full":
            full = True
        elif argument == "--only":
            only.append(rest.pop(0))
        elif "=" in argument:
            key, values = argument.split("=", 1)
            grid.append((key, values.split(",")))
        else:
            sys.exit(f"argument '{argument}' is not known: expected --part PART, --full, --only TEXT or KEY=V1,V2")
    return part, full, only, grid


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def score(settings, part, full, only):
    command = [BENCH, "accuracy", "--markdown", "--part", part] + ([] if full else ["--quick"])
    for text in only:
        command += ["--only", text]
    for key, value in settings:
        command += ["--set", f"{key}={value}"]
    output = subprocess.run(command, capture_output=True, text=True).stdout
    rows, scenario, column = {}, None, {}
    for line in output.splitlines():
        if not line.startswith("| "):
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0] == "scenario":
            column = {name: index for index, name in enumerate(cells)}
            continue
        scenario = cells[0] or scenario
        hist, live = (cells[column["acc % hist/live"]].split("/") + ["–"])[:2]
        rows.setdefault(scenario, {})[cells[1]] = {
            "hist": number(hist), "live": number(live), "ratio": number(cells[column["×true"]]),
            "flaps": number(cells[column["flaps/dev·h"]]), "enter": number(cells[column["enter p50/p90 s"]].split("/")[0]),
        }
    return rows


def judge(rows):
    worst, broken = None, []
    for scenario, methods in rows.items():
        engine, strongest = methods.get("engine"), methods.get("strongest")
        if not engine or engine["hist"] is None:
            continue
        simulated = scenario.startswith("sim") or scenario.startswith("grid")
        if simulated:
            single_stay = scenario.startswith("sim still")
            if engine["hist"] < 99.5 or (engine["flaps"] or 0) >= 0.5 or (not single_stay and (engine["enter"] or 0) > 4):
                broken.append(scenario)
        else:
            if (engine["ratio"] or 0) > 2:
                broken.append(scenario)
            gap = engine["hist"] - strongest["hist"]
            worst = gap if worst is None else min(worst, gap)
    return worst, broken


def main():
    part, full, only, grid = parse(sys.argv[1:])
    results = []
    for values in itertools.product(*[values for _, values in grid]):
        settings = list(zip([key for key, _ in grid], values))
        rows = score(settings, part, full, only)
        worst, broken = judge(rows)
        label = " ".join(f"{key}={value}" for key, value in settings) or "defaults"
        cells = []
        for scenario, methods in rows.items():
            engine = methods.get("engine")
            if engine:
                cells.append(f"{scenario}: {engine['hist']}/{engine['live']} x{engine['ratio']} f{engine['flaps']} e{engine['enter']}")
        print(f"{label}\n  worst dataset gap {worst}  broken: {', '.join(broken) or 'none'}\n  " + "\n  ".join(cells), flush=True)
        results.append((len(broken) > 0, -(worst if worst is not None else -999), label, worst, broken))
    print("\nranked (targets kept first, then by the worst dataset's margin over strongest):")
    for _, _, label, worst, broken in sorted(results):
        print(f"  {worst if worst is not None else '–':>6}  {label}  {('breaks: ' + ', '.join(broken)) if broken else ''}")


if __name__ == "__main__":
    main()
