"""Simulating a QoS plan: the admitted connections as CBR traffic (paper 001 §5).

:func:`simulate_plan` takes a :class:`ibnetsim.qos.Plan` (or the requests of
one), programs the very SL2VL and VLArbitration tables the plan computed into
the data plane, makes every accepted connection a constant-bit-rate source on
the SL admission gave it, and runs the paper's two phases: a transient until
``transient_packets`` packets have been delivered, then the steady state until
the connection with the lowest bandwidth has received ``k_packets`` packets —
or for at most ``max_time_us`` of simulated time (which also bounds the
transient), whichever comes first (paper:
10 000 and 100; at 8 kb/s and 256 B the lowest IAT is 256 ms, so K = 100 is
25.6 s of simulated time: see docs/qos.md "Simulating the plan").

:func:`setup_connections` runs the paper's connection setup
(:func:`ibnetsim.qos.setup`) and returns the connections it established, in
order and on their SLs, to plan and simulate them.

A connection's bandwidth is counted on the wire (the paper's 256 and 4096 B
packets include the headers): a connection of B bit/s sends one packet every
``packet_bytes · 8 / B`` seconds, with a random phase per connection.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from ibnetsim._lazy import numpy as np
from ibnetsim._lazy import pandas as pd

from ibnetsim import _args, _core, _coredoc
from ibnetsim import qos as _qos
from ibnetsim.errors import ConfigError
from ibnetsim.sim import PS_PER_US, SimResult, _merge, default_config, max_time_us as _max_time_us, result_of

__all__ = ["simulate_plan", "setup_connections", "CbrResult", "DELAY_BINS", "JITTER_BINS", "buffer_bytes"]

#: Delay thresholds as fractions of the IAT (Fig. 8); a last bin holds the rest.
DELAY_BINS = ("iat/32", "iat/16", "iat/8", "iat/4", "iat/2", "3iat/4", "iat", "more")
DELAY_FRACTIONS = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 1.0)
#: Jitter intervals (inter-arrival time − IAT) as fractions of the IAT (Fig. 9).
JITTER_BINS = ("<-iat/2", "-iat/2", "-iat/4", "+-iat/8", "+iat/4", "+iat/2", "+iat", ">iat")
#: Index of the deadline IAT/2 among the delay bins (Figs. 10–12).
_HALF = DELAY_BINS.index("iat/2")


def buffer_bytes(packet_bytes: int) -> int:
    """Per-VL buffer of paper 001 §5.1: 4 packets, 1056 B for 256 B and
    16416 B for 4096 B (4 × packet + 32 B)."""
    return 4 * packet_bytes + 32


def setup_connections(fabric, sm, connections: int, retry_limit: int = _qos.DEFAULT_RETRY_LIMIT, seed: int = 1,
                      be_share: float = 0.2, rate_basis: str = "data", entry_limit: str = "table",
                      sl2_range: str = "class", order: str = "balanced", stop: str = "all") -> list[_qos.Request]:
    """Paper 001's setup (:func:`ibnetsim.qos.setup` with these options): the
    established DB connections, in the order they were accepted, each on the
    SL it was admitted on. ``sl2_range="text"`` draws SL 2 from 64 kb/s as
    §5.2 prints it (:data:`ibnetsim.qos.PAPER_TEXT_BANDS_BPS`); ``class``
    from 1.55 Mb/s. Plan them with the same ``be_share``, ``rate_basis`` and
    ``entry_limit`` to program the tables the setup computed."""
    r = _qos.setup(fabric, sm, connections, retry_limit=retry_limit, seed=seed, be_share=be_share,
                   rate_basis=rate_basis, stop=stop, order=order, entry_limit=entry_limit, **_qos.sl2_bands(sl2_range))
    return r.requests()


@dataclass
class CbrResult:
    """What :func:`simulate_plan` measured.

    ``sim`` is the usual :class:`ibnetsim.SimResult` (per class, per SL, per
    port); ``connections`` one row per simulated connection; :attr:`per_sl`
    the per-SL aggregates of Figs. 8–12. ``transient_us`` is when the steady
    state began, ``steady_us`` how long it lasted; ``k_reached`` whether the
    lowest-bandwidth connection received ``k_packets`` in it (False: the run
    stopped at ``max_time_us``).
    """

    sim: SimResult
    connections: pd.DataFrame
    transient_us: float
    steady_us: float
    k_packets: int
    k_reached: bool
    lowest_delivered: int

    @property
    def per_sl(self) -> pd.DataFrame:
        """Per SL: connections, packets, delivered ÷ asked bandwidth (min and
        mean over connections), the cumulative share of packets within each
        delay threshold (``delay_le_<bin>``), the share in each jitter
        interval (``jitter_<bin>``), and the best and worst connection by the
        share within the deadline IAT/2 (``best_within_iat2``,
        ``worst_within_iat2``, with their bandwidths)."""
        c = self.connections
        rows = []
        for sl, g in c.groupby("sl", sort=True):
            d = np.array(g["delay_bins"].tolist(), dtype=float).sum(axis=0)
            j = np.array(g["jitter_bins"].tolist(), dtype=float).sum(axis=0)
            row: dict[str, Any] = {
                "sl": int(sl),
                "connections": len(g),
                "measured_packets": int(d.sum()),
                "bandwidth_ratio_min": float(g["bandwidth_ratio"].min()),
                "bandwidth_ratio_mean": float(g["bandwidth_ratio"].mean()),
            }
            cum = np.cumsum(d) / d.sum() if d.sum() else np.full(len(d), np.nan)
            for name, v in zip(DELAY_BINS[:-1], cum[:-1]):
                row[f"delay_le_{name}"] = float(v)
            for name, v in zip(JITTER_BINS, j / j.sum() if j.sum() else np.full(len(j), np.nan)):
                row[f"jitter_{name}"] = float(v)
            ok = g[g["measured_packets"] > 0]
            if len(ok):
                best = ok.loc[ok["within_iat2"].idxmax()]
                worst = ok.loc[ok["within_iat2"].idxmin()]
                row.update(
                    best_within_iat2=float(best["within_iat2"]),
                    best_bandwidth_bps=int(best["bandwidth_bps"]),
                    worst_within_iat2=float(worst["within_iat2"]),
                    worst_bandwidth_bps=int(worst["bandwidth_bps"]),
                    # Bins up to and including "iat" hold the packets within one IAT.
                    worst_within_iat=float(sum(worst["delay_bins"][: DELAY_BINS.index("iat") + 1]) / sum(worst["delay_bins"])),
                )
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def delivered_bytes_per_cycle_per_host(self) -> float:
        """Fig. 4's unit: delivered wire bytes per host per link cycle, a cycle
        being one byte time of the host link (3.2 ns at the paper's 2.5 Gb/s
        with no encoding; here the data rate after encoding) — the accepted
        fraction of the hosts' data rate."""
        return float(self.sim.accepted)


def _frame(raw_conns: list[dict]) -> pd.DataFrame:
    rows = []
    for c in raw_conns:
        d = c["delay_bins"]
        n = sum(d)
        rows.append(
            {
                "source": c["source"],
                "destination": c["destination"],
                "sl": c["sl"],
                "bandwidth_bps": c["bandwidth_bps"],
                "packet_bytes": c["packet_bytes"],
                "iat_us": c["iat_ps"] / PS_PER_US,
                "generated_packets": c["generated_packets"],
                "delivered_packets": c["delivered_packets"],
                "delivered_bps": c["delivered_bps"],
                "bandwidth_ratio": c["delivered_bps"] / c["bandwidth_bps"],
                "measured_packets": c["measured_packets"],
                "delay_mean_us": None if c["delay_mean_ps"] is None else c["delay_mean_ps"] / PS_PER_US,
                "delay_max_us": None if c["delay_max_ps"] is None else c["delay_max_ps"] / PS_PER_US,
                "within_iat2": sum(d[: _HALF + 1]) / n if n else float("nan"),
                "delay_bins": list(d),
                "jitter_bins": list(c["jitter_bins"]),
            }
        )
    return pd.DataFrame(rows)


def _requests(plan: _qos.Plan | Iterable) -> tuple[list[tuple], float, str, int, str]:
    # Each request on the SL the plan gave it: the same admissions in the same
    # order rebuild the plan's tables (a request given no SL got its class's).
    if isinstance(plan, _qos.Plan):
        c = plan.connections
        reqs = list(zip(c["source"], c["destination"], c["klass"], (int(b) for b in c["bandwidth_bps"]), (int(s) for s in c["sl"])))
        return reqs, plan.be_share, plan.rate_basis, plan.high_limit, plan.entry_limit
    raise ConfigError(f"simulate_plan needs an ibnetsim.qos.Plan (from qos.plan), got {type(plan).__name__}")


def simulate_plan(
    fabric,
    sm,
    plan: _qos.Plan,
    packet_bytes: int = 256,
    k_packets: int = 100,
    transient_packets: int = 10_000,
    max_time_us: float = 100_000.0,
    seed: int = 1,
    preset: Optional[str] = "alfaro2001",
    progress: bool = False,
    **config: Any,
) -> CbrResult:
    """Simulates ``plan``'s accepted connections with the tables it programs.

    Every accepted DB/DBTS connection sends ``packet_bytes`` packets (headers
    included) at its mean bandwidth on its SL; the ports run the plan's
    SL2VL map and per-port VLArbitration tables (15 data VLs). ``preset``
    gives the switch parameters (paper 001: ``alfaro2001``); the buffers are
    set to 4 packets (:func:`buffer_bytes`) and the MTU to the packet's
    payload unless ``config`` overrides them. Phases as described in the
    module docs; ``max_time_us`` bounds the steady state, and the transient
    (a run lasts at most twice that).
    """
    if sm.fabric is not fabric:
        raise ConfigError("the SubnetManager was configured on a different Fabric object")
    # A packet carries 26 B of headers besides its payload.
    packet_bytes = _args.integer("packet_bytes", packet_bytes, 27, _args.U32_MAX)
    k_packets = _args.integer("k_packets", k_packets, 0, _args.U64_MAX)
    transient_packets = _args.integer("transient_packets", transient_packets, 0, _args.U64_MAX)
    # The run lasts at most twice max_time_us (transient, then steady state).
    max_time_us = _args.number("max_time_us", max_time_us, hi=_max_time_us() / 2, above=0.0)
    seed = _args.integer("seed", seed, 0, _args.U64_MAX)
    reqs, be_share, rate_basis, high_limit, entry_limit = _requests(plan)
    acc = plan.connections[plan.connections["accepted"] & plan.connections["klass"].isin(["DB", "DBTS"])]
    buf = buffer_bytes(packet_bytes)
    mtu = 256
    while mtu < packet_bytes - 26:
        mtu *= 2
    base = {
        "mtu_bytes": mtu,
        "switch": {"input_buffer_bytes": buf, "output_buffer_bytes": buf},
        "hca": {"send_buffer_bytes": buf, "receive_buffer_bytes": buf},
    }
    # Only these keys cross into the core, which lays them over the preset's
    # there; the preset's keys are read here to name an unknown one.
    _merge(default_config(preset), config)
    cfg = _merge(base, copy.deepcopy(config), strict=False)
    cfg["seed"] = seed
    cfg["warmup_ns"] = 0.0
    cfg["auto_warmup"] = None
    cfg["traffic"] = {
        "classes": [],
        "traces": [],
        "connections": [
            {"source": r.source, "destination": r.destination, "sl": int(r.sl), "bandwidth_bps": int(r.bandwidth_bps),
             "packet_bytes": int(packet_bytes)}
            for r in acc.itertuples(index=False)
        ],
    }
    if acc.empty:
        raise ConfigError("the plan accepted no DB/DBTS connection: nothing to simulate")
    doc = _coredoc.encode(cfg, "simulation config")
    sim = _core.Simulation(sm._inner, doc, None, (reqs, be_share, rate_basis, high_limit, entry_limit), preset=preset)
    end_ps = int(round(max_time_us * PS_PER_US))
    bw = acc["bandwidth_bps"].to_numpy(dtype=float)
    rate = float((bw / (packet_bytes * 8)).sum())  # packets per second, all connections
    lowest = int(np.argmin(bw))
    iat_low_ps = packet_bytes * 8 / bw[lowest] * 1e12
    t0 = time.perf_counter()
    bar = _Bar(progress, 2 * max_time_us)
    # Transient: slices of a twentieth of the time 10 000 deliveries take.
    step = max(1_000_000, int(transient_packets / rate * 1e12 / 20)) if rate > 0 else end_ps
    while sim.delivered < transient_packets and sim.now_ps < end_ps:
        sim.run(min(end_ps, sim.now_ps + step))
        bar.tick(sim)
    start_ps = sim.now_ps
    sim.begin_measurement()
    # Steady state: slices of a fiftieth of K lowest IATs.
    step = max(1_000_000, int(k_packets * iat_low_ps / 50))
    end_ps = start_ps + end_ps
    while (sim.connection_delivered(lowest) or 0) < k_packets and sim.now_ps < end_ps:
        sim.run(min(end_ps, sim.now_ps + step))
        bar.tick(sim)
    bar.close()
    wall = time.perf_counter() - t0
    sim.check_conservation()
    res = result_of(sim, wall)
    raw = res.raw
    got = sim.connection_delivered(lowest) or 0
    return CbrResult(
        sim=res,
        connections=_frame(raw["connections"]),
        transient_us=start_ps / PS_PER_US,
        steady_us=(sim.now_ps - start_ps) / PS_PER_US,
        k_packets=k_packets,
        k_reached=got >= k_packets,
        lowest_delivered=got,
    )


class _Bar:
    """A rich progress bar over simulated time, or nothing."""

    def __init__(self, on: bool, total_us: float):
        self._p = None
        if on:
            from rich.progress import BarColumn, Progress, TextColumn

            self._p = Progress(TextColumn("simulating CBR"), BarColumn(), TextColumn("{task.fields[t]:.0f} µs"), transient=True)
            self._p.start()
            self._task = self._p.add_task("cbr", total=total_us, t=0.0)

    def tick(self, sim) -> None:
        if self._p is not None:
            t = sim.now_ps / PS_PER_US
            self._p.update(self._task, completed=t, t=t)

    def close(self) -> None:
        if self._p is not None:
            self._p.stop()
