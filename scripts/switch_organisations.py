#!/usr/bin/env python3
"""Input buffer organisations on ib_flit_sim's 32-host, 3-level fat tree.

Runs uniform traffic of 2048-byte payloads on ``is1_3l_32n`` routed by its own
``.fdbs`` tables, for each switch organisation of docs/switch.md, and prints
accepted traffic against offered load with the mean latency, then the
saturation point by ``ibnetsim run``'s criterion and the accepted traffic at
full offered load (the plateau):

    python3 scripts/switch_organisations.py DIR [ROW ...]

DIR holds ``is1_3l_32n.topo``, ``.fdbs`` and ``.fdbs.ini`` (ib_flit_sim's
example; ``../shared/data/topologies/ib_flit_sim_small/is1_3l_32n``). The
``.topo`` has no rate tags, so links are 4x SDR; 1 m cables; every other
switch parameter is the default one (speedup 1, 8 KiB buffers per VL), except
in the preset rows, which take the preset whole. ROW names rows to run (all
by default).
"""

from __future__ import annotations

import sys
from pathlib import Path

import ibnetsim as ib
from ibnetsim.run_cli import saturation

LOADS = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0]

VARIANTS = {
    "fifo": {"input_buffer": "fifo"},
    "fifo, 3 per input": {"input_buffer": "fifo", "max_transfers_per_input": 3},
    "voq": {"input_buffer": "voq"},
    "voq, 3 per input": {"input_buffer": "voq", "max_transfers_per_input": 3},
    "fifo, 32 KiB inputs": {"input_buffer": "fifo", "input_buffer_bytes": 32768},
    "voq, 32 KiB inputs": {"input_buffer": "voq", "input_buffer_bytes": 32768},
    "voq, 32 KiB inputs, oldest-first": {"input_buffer": "voq", "input_buffer_bytes": 32768, "crossbar_arbiter": "oldest-first"},
    "fifo, islip": {"input_buffer": "fifo", "crossbar_arbiter": "islip"},
    "fifo, 32 KiB inputs, islip": {"input_buffer": "fifo", "input_buffer_bytes": 32768, "crossbar_arbiter": "islip"},
}

#: Whole presets, on top of which nothing is changed.
PRESETS = {"preset ib_flit_sim": "ib_flit_sim"}


def main(d: Path) -> None:
    fab = ib.topology.read(d / "is1_3l_32n.topo")
    sm = ib.SubnetManager(fab, routing="file", lfts_file=d / "is1_3l_32n.fdbs", fdbs_key=d / "is1_3l_32n.fdbs.ini")
    print("| switch | saturation (criterion) | accepted at offered 1.0 | mean latency at load 0.6 / 0.8 |")
    print("|---|---|---|---|")
    only = set(sys.argv[2:])
    runs = [(name, {"mtu_bytes": 2048, "switch": switch}) for name, switch in VARIANTS.items()]
    runs += [(name, {"preset": preset}) for name, preset in PRESETS.items()]
    for name, kwargs in runs:
        if only and name not in only:
            continue
        rows = []
        for load in LOADS:
            r = ib.simulate(fab, sm, traffic=ib.traffic.uniform(load, 2048), time_us=20_000, warmup_us=2_000, seed=1, **kwargs)
            s = r.summary.iloc[0]
            rows.append((float(s.offered_fraction), float(s.accepted_fraction), float(s.latency_mean_ns) / 1000, r.stationary))
        sat = saturation(LOADS, [o for o, *_ in rows], [a for _, a, *_ in rows], stationary=[st for *_, st in rows])
        lat = {load: row[2] for load, row in zip(LOADS, rows)}
        print(f"| {name} | {sat.accepted:.3f} | {rows[-1][1]:.3f} | {lat[0.6]:.1f} µs / {lat[0.8]:.1f} µs |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
