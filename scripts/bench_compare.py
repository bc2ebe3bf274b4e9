#!/usr/bin/env python3
"""Compares the data plane of two installs, run after run, alternating.

    python3 scripts/bench_compare.py OLD_PYTHON NEW_PYTHON [--runs 5] [--only NAME ...]

Each argument is the Python interpreter of an environment holding one build
of ``ibnetsim`` (e.g. ``old-venv/bin/python``). The ``ibnetsim bench``
scenarios are run in each, alternately, ``--runs`` times each, every run in a
fresh process, so that a change in machine load hits both alike. Reported per
scenario: the median delivered packets per CPU-second (the process's CPU
time spent in ``simulate``), the new/old ratio of those medians, the same
ratio for wall time, the median and range of the ratios within pairs of
runs made one after the other (robust where the machine's speed drifts),
the ratio of each build's fastest run (robust where other load only ever
slows a run down), and the events each build handled. Both builds must
deliver exactly the same packets (the scenarios are seeded and a speed-up
must not change a result), or the comparison is void and the script fails.

The scenarios use only the API both builds have had since commit 392a6d0
(before issue 14). The irregular network and the 12-ary 3-tree are routed
from forwarding-table dumps that NEW writes (``updn`` and ``ftree``), so both
builds simulate the same tables even where a routing engine changed between
them (``updn`` follows OpenSM 3.3.23's search since 64e4c80, which moves one
packet of the irregular run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

#: name → (simulated µs, warm-up µs); the bench's configurations, shorter runs.
SCENARIOS = {"irregular64": (200_000, 1_000), "mesh8x8": (50_000, 1_000), "fattree1728": (2_000, 50)}

DRIVER = r"""
import json, sys, time
import ibnetsim
from ibnetsim import topology
name, t_us, w_us, dumps = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
if name == "irregular64":
    fab = topology.irregular(switches=64, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1, cable_length_m=20.0)
    sm = ibnetsim.SubnetManager(fab, routing="file", lfts_file=dumps + "/irregular64.lfts.dump")
    traffic, extra = ibnetsim.traffic.uniform(0.032, 256), {"preset": "martinez2003"}
elif name == "mesh8x8":
    fab = topology.mesh([8, 8], hosts_per_switch=1)
    sm = ibnetsim.SubnetManager(fab, routing="dor")
    traffic, extra = ibnetsim.traffic.uniform(0.3, 256), {"preset": "martinez2003", "data_vls": 1}
else:
    fab = topology.fat_tree(12, 3)
    sm = ibnetsim.SubnetManager(fab, routing="file", lfts_file=dumps + "/fattree1728.lfts.dump")
    traffic, extra = ibnetsim.traffic.uniform(0.3, 256), {"preset": None}
t0, c0 = time.perf_counter(), time.process_time()
res = ibnetsim.simulate(fab, sm, traffic=traffic, time_us=t_us, seed=1, warmup_us=w_us, **extra)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"wall": wall, "cpu": cpu, "events": res.raw["events"], "delivered": res.raw["delivered"]}))
"""

WRITE_LFTS = r"""
import sys, ibnetsim
from ibnetsim import topology
fab = topology.irregular(switches=64, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1, cable_length_m=20.0)
ibnetsim.SubnetManager(fab, routing="updn", seed=1).write_lfts(sys.argv[1] + "/irregular64.lfts.dump")
ibnetsim.SubnetManager(topology.fat_tree(12, 3), routing="ftree").write_lfts(sys.argv[1] + "/fattree1728.lfts.dump")
"""


def run(python: str, name: str, dumps: str) -> dict:
    t_us, w_us = SCENARIOS[name]
    out = subprocess.run([python, "-c", DRIVER, name, str(t_us), str(w_us), dumps], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", nargs="*", choices=sorted(SCENARIOS), help="scenarios to run (default: all)")
    a = ap.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as dumps:
        subprocess.run([a.new, "-c", WRITE_LFTS, dumps], check=True)
        for name in a.only or list(SCENARIOS):
            runs: dict[str, list[dict]] = {"old": [], "new": []}
            for k in range(a.runs):
                order = (("old", a.old), ("new", a.new)) if k % 2 == 0 else (("new", a.new), ("old", a.old))
                for tag, python in order:
                    runs[tag].append(run(python, name, dumps))

            def median(tag: str, clock: str) -> float:
                return statistics.median(r["delivered"] / r[clock] for r in runs[tag])

            # Each run of one build is paired with the other build's run next
            # to it: on a shared machine whose speed drifts for tens of
            # seconds, the ratio within a pair cancels the drift that the
            # ratio of the two medians keeps.
            paired = sorted(
                (n["delivered"] / n["cpu"]) / (o["delivered"] / o["cpu"]) for o, n in zip(runs["old"], runs["new"])
            )
            def best(tag: str) -> float:
                # A busy machine only ever slows a run down: the fastest run of
                # each build is the one least disturbed.
                return max(r["delivered"] / r["cpu"] for r in runs[tag])

            delivered = {tag: {r["delivered"] for r in rs} for tag, rs in runs.items()}
            same = len(delivered["old"]) == 1 and delivered["old"] == delivered["new"]
            failed |= not same
            print(
                f"{name}: delivered packets per CPU-second, median of {a.runs}: old {median('old', 'cpu'):,.0f}, "
                f"new {median('new', 'cpu'):,.0f}, new/old {median('new', 'cpu') / median('old', 'cpu'):.3f} "
                f"(wall: {median('new', 'wall') / median('old', 'wall'):.3f}; paired runs: median "
                f"{statistics.median(paired):.3f}, range {paired[0]:.3f}–{paired[-1]:.3f}; best runs: {best('new') / best('old'):.3f}); events old {runs['old'][0]['events']:,}, "
                f"new {runs['new'][0]['events']:,}; "
                + ("same packets delivered" if same else f"DIFFERENT packets delivered: old {delivered['old']}, new {delivered['new']}"),
                flush=True,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
