#!/usr/bin/env python3
"""The ``ib_flit_sim`` preset on ib_flit_sim's own 32-host fat tree, set up as
its example is: no cable delay and closed-loop sources.

Runs ``is1_3l_32n`` routed by its ``.fdbs`` tables, 4x QDR links (the
``.topo`` has no rate tags), 0 m cables, the ``ib_flit_sim`` preset with its
input buffers organised as ``fifo`` and as ``voq`` (the preset's), under

* open-loop uniform traffic of 2048-byte payloads at offered loads 0.1 … 1.0;
* closed-loop sources as in the example: every host keeps one message of
  128 KiB (64 MTU packets) outstanding and sends the next a gap after it
  completes; uniform destinations; the gap swept from 400 µs down to 1 ns
  (the example's ``msg2msgGap``); then, at the 1 ns gap, windows of 1 to 8
  messages.

Prints the tables of docs/switch.md and draws latency against accepted
traffic into FIGURE (default ``docs/img/ib_flit_sim-preset.png``):

    python3 scripts/ib_flit_sim_preset.py DIR [FIGURE]

DIR holds ``is1_3l_32n.topo``, ``.fdbs`` and ``.fdbs.ini``
(``../shared/data/topologies/ib_flit_sim_small/is1_3l_32n``). Each point
simulates 10 ms after 1 ms of warm-up, seed 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import ibnetsim as ib  # noqa: E402
from ibnetsim.run_cli import saturation  # noqa: E402

LOADS = [0.1, 0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0]
GAPS_NS = [400_000.0, 150_000.0, 80_000.0, 40_000.0, 20_000.0, 10_000.0, 4_000.0, 1_000.0, 1.0]
WINDOWS = [1, 2, 4, 8]
MESSAGE_BYTES = 128 * 1024
ORGANISATIONS = ("fifo", "voq")
RUN = {"time_us": 10_000, "warmup_us": 1_000, "seed": 1, "preset": "ib_flit_sim"}


def open_loop(fab, sm, org: str) -> list[dict]:
    rows = []
    for load in LOADS:
        r = ib.simulate(fab, sm, traffic=ib.traffic.uniform(load, 2048), switch={"input_buffer": org}, **RUN)
        s = r.summary.iloc[0]
        rows.append({
            "offered": float(s.offered_fraction),
            "accepted": float(s.accepted_fraction),
            "latency_us": float(s.latency_mean_ns) / 1000,
            "network_latency_us": float(s.network_latency_mean_ns) / 1000,
            "stationary": r.stationary,
        })
    return rows


def closed_loop(fab, sm, org: str, gaps=GAPS_NS, window: int = 1) -> list[dict]:
    rows = []
    for gap in gaps:
        cls = ib.traffic.closed_loop(window=window, message_bytes=MESSAGE_BYTES, gap_ns=gap)
        r = ib.simulate(fab, sm, traffic=cls, switch={"input_buffer": org}, **RUN)
        s = r.summary.iloc[0]
        rows.append({
            "gap_us": gap / 1000,
            "accepted": float(s.accepted_fraction),
            "messages": int(s.messages_completed),
            "message_latency_us": float(s.message_network_latency_mean_ns) / 1000,
            "message_latency_p99_us": float(s.message_network_latency_p99_ns) / 1000,
        })
    return rows


def figure(results: dict, path: Path) -> None:
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for org, (ol, cl) in results.items():
        a.plot([r["accepted"] for r in ol], [r["latency_us"] for r in ol], "o-", label=org)
        b.plot([r["accepted"] for r in cl], [r["message_latency_us"] for r in cl], "o-", label=org)
    a.set(title="open loop, 2048 B packets", xlabel="accepted traffic (fraction of link rate)", ylabel="mean packet latency (µs)", yscale="log")
    b.set(title="closed loop, one 128 KiB message per host", xlabel="accepted traffic (fraction of link rate)",
          ylabel="mean message network latency (µs)")
    for ax in (a, b):
        ax.grid(alpha=0.3)
        ax.legend(title="input buffer")
    fig.suptitle("ib_flit_sim preset on is1_3l_32n (4x QDR, 0 m cables)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(d: Path, fig_path: Path) -> None:
    fab = ib.topology.read(d / "is1_3l_32n.topo", link_width="4x", link_speed="QDR", cable_length_m=0.0)
    sm = ib.SubnetManager(fab, routing="file", lfts_file=d / "is1_3l_32n.fdbs", fdbs_key=d / "is1_3l_32n.fdbs.ini")
    results = {org: (open_loop(fab, sm, org), closed_loop(fab, sm, org)) for org in ORGANISATIONS}

    print("Open loop (uniform, 2048 B payloads):\n")
    print("| input buffer | saturation (criterion) | accepted at offered 1.0 | mean latency at 0.5 / 0.8 / 0.9 |")
    print("|---|---|---|---|")
    for org, (ol, _) in results.items():
        sat = saturation(LOADS, [r["offered"] for r in ol], [r["accepted"] for r in ol], stationary=[r["stationary"] for r in ol])
        lat = {load: r["latency_us"] for load, r in zip(LOADS, ol)}
        print(f"| {org} | {sat.accepted:.3f} | {ol[-1]['accepted']:.3f} | {lat[0.5]:.2f} / {lat[0.8]:.2f} / {lat[0.9]:.2f} µs |")

    print("\nClosed loop (window 1, 128 KiB messages, uniform destinations):\n")
    print("| gap | " + " | ".join(f"{org}: accepted, message latency mean / p99" for org in ORGANISATIONS) + " |")
    print("|---|" + "---|" * len(ORGANISATIONS))
    for i, gap in enumerate(GAPS_NS):
        cells = []
        for org in ORGANISATIONS:
            r = results[org][1][i]
            cells.append(f"{r['accepted']:.3f}, {r['message_latency_us']:.1f} / {r['message_latency_p99_us']:.1f} µs")
        print(f"| {gap / 1000:g} µs | " + " | ".join(cells) + " |")

    print("\nClosed loop at a 1 ns gap, by window (messages outstanding per host):\n")
    print("| window | " + " | ".join(f"{org}: accepted, message latency mean" for org in ORGANISATIONS) + " |")
    print("|---|" + "---|" * len(ORGANISATIONS))
    by_window = {org: [closed_loop(fab, sm, org, gaps=[1.0], window=w)[0] for w in WINDOWS] for org in ORGANISATIONS}
    for i, w in enumerate(WINDOWS):
        cells = [f"{by_window[org][i]['accepted']:.3f}, {by_window[org][i]['message_latency_us']:.1f} µs" for org in ORGANISATIONS]
        print(f"| {w} | " + " | ".join(cells) + " |")

    figure(results, fig_path)
    print(f"\nfigure: {fig_path}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else Path("docs/img/ib_flit_sim-preset.png"))
