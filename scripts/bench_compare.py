#!/usr/bin/env python3
"""Compares ``ibnetsim bench`` of two installs, run after run, alternating.

    python3 scripts/bench_compare.py OLD_IBNETSIM NEW_IBNETSIM [--runs 5]

Each argument is the path of an ``ibnetsim`` command (e.g. the one in a
virtualenv holding the old build). The two are run alternately, ``--runs``
times each, so that a change in machine load hits both alike; the report is
each workload's events/s and delivered packets/s per run and the median
new/old ratio. Both must simulate the same events and packets (the bench
workloads are seeded), or the comparison is void.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess

LINE = re.compile(r"^(\w+): .* ([\d,]+) events/s, ([\d,]+) delivered packets/s \(([\d,]+) events, ([\d,]+) packets")


def bench(cmd: str) -> dict[str, tuple[float, float, int, int]]:
    out = subprocess.run([cmd, "bench"], capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            num = lambda s: int(s.replace(",", ""))  # noqa: E731
            res[m[1]] = (num(m[2]), num(m[3]), num(m[4]), num(m[5]))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    runs: dict[str, list] = {"old": [], "new": []}
    for i in range(a.runs):
        for who, cmd in (("old", a.old), ("new", a.new)):
            r = bench(cmd)
            runs[who].append(r)
            print(f"run {i + 1} {who}: " + "; ".join(f"{w} {v[0] / 1e6:.2f} M events/s, {v[1] / 1e6:.3f} M packets/s" for w, v in r.items()), flush=True)
    for w in runs["old"][0]:
        counts = {(r[w][2], r[w][3]) for who in runs for r in runs[who]}
        if len(counts) != 1:
            raise SystemExit(f"{w}: the two builds simulate different work: {sorted(counts)}")
        ratios = [n[w][0] / o[w][0] for o, n in zip(runs["old"], runs["new"])]
        med_old = statistics.median(r[w][0] for r in runs["old"]) / 1e6
        med_new = statistics.median(r[w][0] for r in runs["new"]) / 1e6
        print(f"{w}: median {med_old:.2f} → {med_new:.2f} M events/s; new/old per run {', '.join(f'{x:.3f}' for x in ratios)}; "
              f"median ratio {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
