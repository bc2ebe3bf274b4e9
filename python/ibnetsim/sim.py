"""Packet-level simulation of a configured subnet.

:func:`simulate` builds the Rust data plane from a fabric, its subnet manager
and a configuration (a paper preset plus overrides), runs it in slices of
simulated time with the interpreter released, and returns a :class:`SimResult`.
Between slices it updates a progress bar and lets Ctrl-C through.
"""

from __future__ import annotations

import copy
import json
import os
import time
from typing import Any, Iterable, Optional

import pandas as pd

from ibnetsim import _core
from ibnetsim import traffic as _traffic
from ibnetsim.errors import ConfigError
from ibnetsim.sm import SubnetManager
from ibnetsim.topology import Fabric

__all__ = ["simulate", "SimResult", "default_config", "presets"]

PS_PER_US = 1_000_000


def presets() -> list[tuple[str, str, str]]:
    """(name, paper, notes) of every switch/HCA parameter preset."""
    return list(_core.sim_presets())


def default_config(preset: Optional[str] = None) -> dict[str, Any]:
    """The full simulation config (every key, with its default or the preset's value)."""
    return json.loads(_core.sim_config_json(preset))


def _merge(base: dict, overrides: dict, path: str = "") -> dict:
    """Deep-merges ``overrides`` into ``base``; an unknown key is an error naming it."""
    for key, value in overrides.items():
        dotted = f"{path}{key}"
        if key not in base:
            known = ", ".join(sorted(base))
            raise ConfigError(f"unknown simulation key '{dotted}' (known here: {known})")
        if isinstance(value, dict) and isinstance(base[key], dict) and "kind" not in value:
            _merge(base[key], value, dotted + ".")
        else:
            base[key] = value
    return base


class SimResult:
    """What a run measured. ``summary`` has one row per traffic class."""

    def __init__(self, raw: dict[str, Any], wall_s: float, histograms: dict[str, list]):
        self.raw = raw
        self.wall_s = wall_s
        self._hist = histograms

    @property
    def summary(self) -> pd.DataFrame:
        """Per class: offered/accepted fractions, packet and network latency (ns)."""
        return self._flows(self.raw["classes"])

    @property
    def per_sl(self) -> pd.DataFrame:
        return self._flows(self.raw["sls"])

    @staticmethod
    def _flows(flows: list[dict]) -> pd.DataFrame:
        rows = []
        for f in flows:
            row = {k: f[k] for k in ("name", "sl", "generated_packets", "delivered_packets", "offered_fraction", "accepted_fraction")}
            for prefix, lat in (("latency", f["latency"]), ("network_latency", f["network_latency"])):
                for stat in ("mean", "p50", "p99", "min", "max"):
                    v = lat[f"{stat}_ps"]
                    row[f"{prefix}_{stat}_ns"] = None if v is None else v / 1000.0
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def per_port(self) -> pd.DataFrame:
        """Per cabled transmitter: utilization, and per VL."""
        rows = []
        vls = self.raw["vl_of_slot"]
        for p in self.raw["ports"]:
            row = {k: p[k] for k in ("node", "port", "peer_node", "peer_port", "utilization")}
            for vl, u in zip(vls, p["vl_utilization"]):
                row[f"vl{vl}_utilization"] = u
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def latency_hist(self) -> pd.DataFrame:
        """Packet-latency histogram per class: low_ns, high_ns, count."""
        rows = [
            {"class": name, "low_ns": lo / 1000.0, "high_ns": (lo + width) / 1000.0, "count": n}
            for name, buckets in self._hist.items()
            for lo, width, n in buckets  # the core gives (low, width, count)
        ]
        return pd.DataFrame(rows, columns=["class", "low_ns", "high_ns", "count"])

    @property
    def drops(self) -> dict[str, int]:
        return dict(self.raw["drops"])

    @property
    def offered(self) -> float:
        """Offered load, fraction of the hosts' data rate."""
        return self.raw["offered_fraction"]

    @property
    def accepted(self) -> float:
        """Accepted traffic, fraction of the hosts' data rate."""
        return self.raw["accepted_fraction"]

    @property
    def events_per_s(self) -> float:
        return self.raw["events"] / self.wall_s if self.wall_s > 0 else float("nan")

    def row(self) -> dict[str, Any]:
        """One flat dict: the columns a sweep stores per point."""
        r = self.raw
        total = self.summary
        lat = r["classes"][0]["latency"] if len(r["classes"]) == 1 else None
        means = [(f["delivered_packets"], f["latency"]["mean_ps"]) for f in r["classes"] if f["latency"]["mean_ps"] is not None]
        n = sum(c for c, _ in means)
        mean_ns = sum(c * m for c, m in means) / n / 1000.0 if n else None
        return {
            "offered_load": r["offered_fraction"],
            "accepted_load": r["accepted_fraction"],
            "accepted_bytes_per_ns_per_switch": r["accepted_bytes_per_ns_per_switch"],
            "accepted_bits_per_us": r["accepted_bits_per_us"],
            "latency_mean_ns": mean_ns,
            "latency_p99_ns": None if lat is None or lat["p99_ps"] is None else lat["p99_ps"] / 1000.0,
            "network_latency_mean_ns": float(total["network_latency_mean_ns"].mean()) if len(total) else None,
            "delivered_packets": r["delivered"],
            "generated_packets": r["generated"],
            "dropped_packets": r["dropped"],
            "in_flight_packets": r["in_flight"],
            "injection_queue_packets": r["injection_queue"]["total_packets"],
            "events": r["events"],
            "wall_s": self.wall_s,
        }

    def __repr__(self) -> str:
        return (
            f"<SimResult offered={self.offered:.4f} accepted={self.accepted:.4f} "
            f"delivered={self.raw['delivered']} events={self.raw['events']}>"
        )


def simulate(
    fabric: Fabric,
    sm: SubnetManager,
    traffic: dict | Iterable[dict],
    time_us: float,
    seed: int = 1,
    warmup_us: float = 0.0,
    preset: Optional[str] = None,
    progress: bool = False,
    slices: int = 50,
    qos_file: Optional[str | os.PathLike] = None,
    **config: Any,
) -> SimResult:
    """Simulates ``time_us`` microseconds of ``traffic`` on ``fabric`` routed by ``sm``.

    ``traffic`` is one class dict or a list of them (:mod:`ibnetsim.traffic`):
    open-loop classes and :func:`ibnetsim.traffic.trace` replays may be mixed;
    results list the open-loop classes first, then the traces, each with its
    per-class and per-SL statistics.
    ``preset`` starts from a paper's switch/HCA parameters (see :func:`presets`);
    other keyword arguments override config keys (``data_vls=2``,
    ``switch={"routing_delay_ns": 100}``, ``selection="adaptive-by-credits"``);
    :func:`default_config` shows them all. Raises :class:`ibnetsim.DeadlockError`
    (with ``.cycle``) if the deadlock watchdog fires.

    ``qos_file`` is an opensm.conf (or a TOML file with a ``[qos]`` table) whose
    ``qos_*`` options the subnet manager turns into per-port SL2VL and
    VLArbitration tables, as OpenSM would program them; they replace the
    config's ``sl2vl`` and ``vl_arbitration``, and the ports run the data VLs
    the file gives (``qos_max_vls``), so ``data_vls`` may not be given too.
    """
    if sm.fabric is not fabric:
        raise ConfigError("the SubnetManager was configured on a different Fabric object")
    if not time_us > 0:
        raise ConfigError(f"time_us must be > 0, got {time_us}")
    if qos_file is not None and "data_vls" in config:
        raise ConfigError("give data_vls or qos_file, not both: with a QoS file the ports run the VLs its qos_max_vls options set")
    classes = [traffic] if isinstance(traffic, dict) else list(traffic)
    cfg = default_config(preset)
    cfg = _merge(cfg, copy.deepcopy(config))
    cfg["seed"] = int(seed)
    cfg["warmup_ns"] = float(warmup_us) * 1000.0
    cfg["traffic"] = {
        "classes": [c for c in classes if not _traffic.is_trace(c)],
        "traces": [c for c in classes if _traffic.is_trace(c)],
    }
    sim = _core.Simulation(sm._inner, json.dumps(cfg), None if qos_file is None else os.fspath(qos_file))
    end_ps = int(round(time_us * PS_PER_US))
    t0 = time.perf_counter()
    if progress:
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        with Progress(
            TextColumn("simulating"), BarColumn(), TextColumn("{task.fields[t]:.1f}/{task.total:.1f} µs"),
            TextColumn("{task.fields[ev]} events"), TimeRemainingColumn(), transient=True,
        ) as bar:
            task = bar.add_task("sim", total=time_us, t=0.0, ev=0)
            _run_slices(sim, end_ps, slices, lambda: bar.update(task, completed=sim.now_ps / PS_PER_US, t=sim.now_ps / PS_PER_US, ev=sim.events))
    else:
        _run_slices(sim, end_ps, slices, None)
    wall = time.perf_counter() - t0
    raw = json.loads(sim.results_json())
    hist = {c["name"]: sim.latency_histogram(i, False) or [] for i, c in enumerate(raw["classes"])}
    return SimResult(raw, wall, hist)


def _run_slices(sim, end_ps: int, slices: int, tick) -> None:
    step = max(1, end_ps // max(1, slices))
    t = 0
    while t < end_ps:
        t = min(end_ps, t + step)
        sim.run(t)
        if tick:
            tick()
