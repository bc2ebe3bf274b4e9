"""Packet-level simulation of a configured subnet.

:func:`simulate` builds the Rust data plane from a fabric, its subnet manager
and a configuration (a paper preset plus overrides), runs it in slices of
simulated time with the interpreter released, and returns a :class:`SimResult`.
Between slices it updates a progress bar and lets Ctrl-C through.

Warm-up is fixed (``warmup_us=100``) or detected (``warmup_us="auto"``): the
core samples the run in windows and starts measuring once the recent windows
are stationary (no latency trend, accepted ≈ offered); a run that is not by
``warmup_max_fraction`` of its length is measured from there and reported with
``warmup_detected = False`` — its latency is unbounded, a saturation signal.
"""

from __future__ import annotations

import copy
import sys
import json
import math
import os
import time
import warnings
from typing import Any, Iterable, Optional, Sequence

from ibnetsim._lazy import pandas as pd

from ibnetsim import _args, _core, _coredoc
from ibnetsim import traffic as _traffic
from ibnetsim.errors import ConfigError, ConfigWarning
from ibnetsim.sm import SubnetManager
from ibnetsim.topology import Fabric

__all__ = ["simulate", "SimResult", "default_config", "presets", "max_time_us"]

PS_PER_US = 1_000_000


def presets() -> list[tuple[str, str, str]]:
    """(name, paper, notes) of every switch/HCA parameter preset."""
    return list(_core.sim_presets())


def max_time_us() -> float:
    """The longest run (and latest time) the core simulates, in µs: its
    picosecond clock is a u64 with room left for the fabric's delays."""
    return _core.sim_registries()["max_time_ps"] / PS_PER_US


def default_config(preset: Optional[str] = None) -> dict[str, Any]:
    """The full simulation config (every key, with its default or the preset's value)."""
    return json.loads(_core.sim_config_json(preset))


def _merge(base: dict, overrides: dict, path: str = "", strict: bool = True) -> dict:
    """Deep-merges ``overrides`` into ``base`` (a table naming its ``kind``
    replaces the base's whole); unless ``strict`` is False, a key ``base``
    lacks is an error naming it."""
    for key, value in overrides.items():
        dotted = f"{path}{key}"
        if key not in base and not strict:
            base[key] = value
            continue
        if key not in base:
            known = ", ".join(sorted(base))
            close = _args.closest(key, base)
            hint = f"did you mean '{path}{close}'? " if close else ""
            raise ConfigError(f"unknown simulation key '{dotted}' ({hint}known here: {known})")
        if isinstance(value, dict) and isinstance(base[key], dict) and "kind" not in value:
            _merge(base[key], value, dotted + ".", strict)
        else:
            base[key] = value
    return base


def overload_warning(load: float) -> Optional[str]:
    """Why an offered ``load`` is suspicious, or None: above 1 the sources
    generate more than their links carry."""
    if load <= 1.0:
        return None
    return (
        f"offered load {load:g} is above 1: the sources generate more than their links carry, so their queues "
        "grow for the whole run and the latency measured depends on its length"
    )


def warmup_warning(warmup_us: float, time_us: float) -> Optional[str]:
    """Why a fixed warm-up is suspicious, or None: longer than half the run
    leaves less than half of it measured."""
    if warmup_us <= time_us / 2:
        return None
    return f"the warm-up ({warmup_us:g} µs) is longer than half the run (time_us = {time_us:g} µs): less than half of the run is measured"


_FLOW_COLUMNS = (
    "name",
    "sl",
    "generated_packets",
    "delivered_packets",
    "offered_fraction",
    "accepted_fraction",
    "offered_bytes_per_ns_per_switch",
    "accepted_bytes_per_ns_per_switch",
)
_STATS = ("mean", "p50", "p99", "min", "max")
_LATENCIES = ("latency", "network_latency", "message_completion", "message_network_latency")


def _ns(v: Optional[float]) -> Optional[float]:
    return None if v is None else v / 1000.0


def _windows(series: list[dict[str, Any]]) -> pd.DataFrame:
    rows = [
        {
            "end_us": w["end_ps"] / PS_PER_US,
            "generated_packets": w["generated_packets"],
            "offered_bytes": w["offered_bytes"],
            "delivered_packets": w["delivered_packets"],
            "accepted_bytes": w["accepted_bytes"],
            "mean_latency_ns": _ns(w["mean_latency_ps"]),
        }
        for w in series
    ]
    return pd.DataFrame(rows, columns=["end_us", "generated_packets", "offered_bytes", "delivered_packets", "accepted_bytes", "mean_latency_ns"])


def plot_link_series(series: pd.DataFrame, links: Optional[Sequence[tuple[str, int]]] = None, *, top: int = 4, ax: Any = None) -> Any:
    """Plots utilization over time from a time series (``SimResult.series``, or
    one point's rows of ``ibnetsim.experiment.load_table(DIR, "series")``) for
    ``links`` (``(node, port)`` transmitters, all VLs together), or for the
    ``top`` busiest ones; returns the axes."""
    import matplotlib.pyplot as plt

    if series.empty:
        raise ConfigError("no time series in this result: simulate with series_interval_ns=…")
    per_link = series.groupby(["node", "port", "time_us"], as_index=False)["utilization"].sum()
    if links is None:
        busiest = per_link.groupby(["node", "port"])["utilization"].mean().nlargest(top)
        links = list(busiest.index)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    for node, port in links:
        sel = per_link[(per_link["node"] == node) & (per_link["port"] == port)]
        if sel.empty:
            raise ConfigError(f"no cabled port {node}/{port} in the series")
        ax.step(sel["time_us"], sel["utilization"], where="pre", label=f"{node}/{port}")
    ax.set_xlabel("time (µs, end of each interval)")
    ax.set_ylabel("utilization")
    ax.set_ylim(0, 1.05)
    ax.legend(loc="best", fontsize="small")
    return ax


class SimResult:
    """What a run measured. ``summary`` has one row per traffic class, ``per_sl``
    one per SL; ``row()`` flattens the all-class figures for a sweep.
    ``warnings`` holds the :class:`ibnetsim.ConfigWarning` messages the call raised."""

    warnings: tuple[str, ...] = ()

    def __init__(
        self,
        raw: dict[str, Any],
        wall_s: float,
        histograms: dict[str, list],
        network_histograms: Optional[dict[str, list]] = None,
    ):
        self.raw = raw
        self.wall_s = wall_s
        self._hist = histograms
        self._net_hist = network_histograms or {}

    @property
    def summary(self) -> pd.DataFrame:
        """Per class: offered/accepted traffic (fraction of the class's sending
        hosts' data rate, and bytes/ns/switch), packets, packet and network
        latency (ns), and messages completed with their completion time (ns;
        traces, closed-loop classes, and every class when the transport
        acknowledges)."""
        return self._flows(self.raw["classes"])

    @property
    def per_sl(self) -> pd.DataFrame:
        """As :attr:`summary`, per SL (the classes that share an SL together)."""
        return self._flows(self.raw["sls"])

    @property
    def connections(self) -> pd.DataFrame:
        """Per CBR connection (:func:`ibnetsim.traffic.connection`): what it
        asked for (``bandwidth_bps``, ``packet_bytes``, ``iat_ps``) and what it
        got in the measurement window (packets, ``delivered_bps``, delays in
        ps); empty without connections."""
        return pd.DataFrame(self.raw["connections"])

    @staticmethod
    def _flows(flows: list[dict]) -> pd.DataFrame:
        rows = []
        for f in flows:
            row = {k: f[k] for k in _FLOW_COLUMNS}
            row["messages_completed"] = f["messages_completed"]
            for prefix in _LATENCIES:
                for stat in _STATS:
                    row[f"{prefix}_{stat}_ns"] = _ns(f[prefix][f"{stat}_ps"])
            rows.append(row)
        return pd.DataFrame(rows, columns=[*_FLOW_COLUMNS, "messages_completed", *(f"{p}_{s}_ns" for p in _LATENCIES for s in _STATS)])

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
    def series(self) -> pd.DataFrame:
        """The time series per link and VL (``series_interval_ns=…``; empty without):
        one row per sample time, cabled port and VL, with ``time_us`` (the end of
        the interval), ``node``, ``port``, ``vl``, ``utilization`` (fraction of the
        interval the port sent on that VL), ``input_bytes`` (packets waiting in
        the port's input buffer, not yet granted the crossbar) and
        ``output_bytes`` (its output or send buffer). ``.to_parquet(path)`` keeps it."""
        columns = ["time_us", "node", "port", "vl", "utilization", "input_bytes", "output_bytes"]
        s = self.raw.get("series")
        if not s:
            return pd.DataFrame(columns=columns)
        names = s["node_names"]
        return pd.DataFrame(
            {
                "time_us": [t / 1e6 for t in s["time_ps"]],
                "node": [names[n] for n in s["node"]],
                "port": s["port"],
                "vl": s["vl"],
                "utilization": s["utilization"],
                "input_bytes": s["input_bytes"],
                "output_bytes": s["output_bytes"],
            },
            columns=columns,
        )

    def plot_series(self, links: Optional[Sequence[tuple[str, int]]] = None, *, top: int = 4, ax: Any = None) -> Any:
        """Plots utilization over time for ``links`` (``(node, port)`` transmitters,
        all VLs together), or for the ``top`` busiest ones; returns the axes."""
        return plot_link_series(self.series, links, top=top, ax=ax)

    @staticmethod
    def _hist_frame(hists: dict[str, list]) -> pd.DataFrame:
        rows = [
            {"class": name, "low_ns": lo / 1000.0, "high_ns": (lo + width) / 1000.0, "count": n}
            for name, buckets in hists.items()
            for lo, width, n in buckets  # the core gives (low, width, count)
        ]
        return pd.DataFrame(rows, columns=["class", "low_ns", "high_ns", "count"])

    @property
    def latency_hist(self) -> pd.DataFrame:
        """Packet-latency histogram (generation → delivery) per class: low_ns, high_ns, count."""
        return self._hist_frame(self._hist)

    @property
    def network_latency_hist(self) -> pd.DataFrame:
        """Network-latency histogram (first byte injected → delivery) per class: low_ns, high_ns, count."""
        return self._hist_frame(self._net_hist)

    @property
    def warmup_us(self) -> float:
        """Start of the measurement window (the warm-up used), in µs."""
        return self.raw["warmup_ps"] / PS_PER_US

    @property
    def warmup_detected(self) -> Optional[bool]:
        """Automatic warm-up: whether the run became stationary (False = it did
        not by the maximum: latency unbounded, a saturation signal). None when
        the warm-up was fixed."""
        return self.raw["warmup_detected"]

    @property
    def warmup_status(self) -> str:
        """``fixed``, ``detected``, ``not-stabilised`` or ``pending`` (the run
        ended before a decision: nothing measured)."""
        return self.raw["warmup_status"]

    @property
    def warmup_series(self) -> pd.DataFrame:
        """Automatic warm-up: the windows the detector sampled (end_us, packets
        and wire bytes generated and delivered, mean latency of the packets
        delivered in the window). Empty for a fixed warm-up."""
        return _windows(self.raw["warmup_series"])

    @property
    def measurement_series(self) -> pd.DataFrame:
        """The measurement in windows (the auto warm-up's length, 10 µs by
        default), with the columns of :attr:`warmup_series`."""
        return _windows(self.raw["measurement_series"])

    @property
    def stationary(self) -> Optional[bool]:
        """Whether the measurement itself was stationary: the warm-up
        detector's test (no backlog growth, no latency trend) over all of
        :attr:`measurement_series`. False means queues or latency kept growing
        while measured, so the figures depend on the run's length (past
        saturation, or a warm-up too short); None with under 3 windows."""
        return self.raw["stationary"]

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
        """One flat dict: the columns a sweep stores per point.

        Latency columns are over all classes together (the core keeps an
        all-class histogram), each with its sample size ``measured_packets``;
        per-class figures are in :attr:`summary`. ``drops_<reason>`` has one
        column per drop reason.
        """
        r = self.raw
        out: dict[str, Any] = {
            "offered_load": r["offered_fraction"],
            "accepted_load": r["accepted_fraction"],
            "offered_bytes_per_ns_per_switch": r["offered_bytes_per_ns_per_switch"],
            "accepted_bytes_per_ns_per_switch": r["accepted_bytes_per_ns_per_switch"],
            "offered_bits_per_us": r["offered_bits_per_us"],
            "accepted_bits_per_us": r["accepted_bits_per_us"],
            "measured_packets": r["latency"]["count"],
        }
        for prefix in _LATENCIES:
            for stat in ("mean", "p50", "p99", "max"):
                out[f"{prefix}_{stat}_ns"] = _ns(r[prefix][f"{stat}_ps"])
        out["messages_completed"] = r["messages_completed"]
        out.update(
            {
                "warmup_us": self.warmup_us,
                "warmup_detected": self.warmup_detected,
                "warmup_status": self.warmup_status,
                "stationary": self.stationary,
                "delivered_packets": r["delivered"],
                "generated_packets": r["generated"],
                "dropped_packets": r["dropped"],
            }
        )
        for reason, n in r["drops"]:
            out[f"drops_{reason}"] = n
        out.update(
            {
                "in_flight_packets": r["in_flight"],
                "injection_queue_packets": r["injection_queue"]["total_packets"],
                "events": r["events"],
                "wall_s": self.wall_s,
            }
        )
        return out

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
    warmup_us: float | str = 0.0,
    preset: Optional[str] = None,
    warmup_max_fraction: float = 0.5,
    progress: bool | float = False,
    slices: int = 50,
    progress_label: str = "simulating",
    qos_file: Optional[str | os.PathLike] = None,
    **config: Any,
) -> SimResult:
    """Simulates ``time_us`` microseconds of ``traffic`` on ``fabric`` routed by ``sm``.

    ``traffic`` is one class dict or a list of them (:mod:`ibnetsim.traffic`):
    open-loop classes, :func:`ibnetsim.traffic.trace` replays and
    :func:`ibnetsim.traffic.closed_loop` classes and
    :func:`ibnetsim.traffic.connection` CBR connections may be mixed; results
    list the open-loop classes first, then the traces, then the closed-loop
    classes, then ``connections``
    (and ``transport``, the replies' class, when acknowledgements or FECN are
    on), each with its per-class and per-SL statistics. ``transport={...}``
    and ``mechanisms={...}`` set the transport layer and the mechanisms
    (docs/traffic.md, docs/mechanisms.md).
    ``preset`` starts from a paper's switch/HCA parameters (see :func:`presets`);
    other keyword arguments override config keys (``data_vls=2``,
    ``switch={"routing_delay_ns": 100}``, ``selection="adaptive-by-credits"`` or ``"lfu"``);
    :func:`default_config` shows them all. Raises :class:`ibnetsim.DeadlockError`
    (with ``.cycle`` and ``.partial``) if the deadlock watchdog fires — also for
    a deadlock confined to part of the fabric while other traffic moves — and
    its subclass :class:`ibnetsim.StarvationError` (with ``.starved``: node,
    port, VL, packets) when everything stops because packets wait for a VL
    that no VL arbitration table entry serves.

    ``warmup_us`` is a fixed warm-up, or ``"auto"`` to detect it: the
    measurement starts once the run is stationary, at the latest after
    ``warmup_max_fraction`` of ``time_us`` (then ``warmup_detected`` is False).
    ``auto_warmup={"window_ns": …, "windows": …, "tolerance": …}`` tunes the
    detector (a ``max_ns`` given there wins over the fraction).

    ``qos_file`` is an opensm.conf (or a TOML file with a ``[qos]`` table) whose
    ``qos_*`` options the subnet manager turns into per-port SL2VL and
    VLArbitration tables, as OpenSM would program them; they replace the
    config's ``sl2vl`` and ``vl_arbitration``, and the ports run the data VLs
    the file gives (``qos_max_vls``), so ``data_vls`` may not be given too.

    ``progress`` draws a bar on stdout when it is a terminal (or in Jupyter),
    and prints nothing otherwise. A number of seconds instead prints plain
    lines to stderr, at most one per that many seconds of wall time, each
    starting with ``progress_label``: simulated time against the run's end,
    and events/s (for logs, where a bar does not show).
    """
    if sm.fabric is not fabric:
        raise ConfigError("the SubnetManager was configured on a different Fabric object")
    time_us = _args.number("time_us", time_us, hi=max_time_us(), above=0.0)
    seed = _args.integer("seed", seed, 0, _args.U64_MAX)
    if qos_file is not None and "data_vls" in config:
        raise ConfigError("give data_vls or qos_file, not both: with a QoS file the ports run the VLs its qos_max_vls sets")
    classes = [traffic] if isinstance(traffic, dict) else list(traffic)
    # Only the caller's keys cross into the core, which lays them over the
    # preset's there; the preset's keys are read here to name an unknown one.
    _merge(default_config(preset), config)
    cfg = copy.deepcopy(config)
    cfg["seed"] = seed
    _set_warmup(cfg, warmup_us, warmup_max_fraction, time_us)
    cfg["traffic"] = {
        "classes": [c for c in classes if not (_traffic.is_trace(c) or _traffic.is_closed_loop(c) or _traffic.is_connection(c))],
        "traces": [c for c in classes if _traffic.is_trace(c)],
        "closed_loop": [c for c in classes if _traffic.is_closed_loop(c)],
        "connections": [c for c in classes if _traffic.is_connection(c)],
    }
    notes = _warnings_of(cfg, time_us)
    for note in notes:
        warnings.warn(note, ConfigWarning, stacklevel=2)
    doc = _coredoc.encode(cfg, "simulation config")
    sim = _core.Simulation(sm._inner, doc, None if qos_file is None else os.fspath(qos_file), preset=preset)
    end_ps = int(round(time_us * PS_PER_US))
    t0 = time.perf_counter()
    console = None
    if isinstance(progress, (int, float)) and not isinstance(progress, bool):
        if not progress >= 0:
            raise ConfigError(f"progress must be True, False or a number of seconds >= 0, got {progress}")
        _run_slices(sim, end_ps, slices, _ProgressLines(sim, end_ps, float(progress), progress_label, t0))
        return _with_warnings(result_of(sim, time.perf_counter() - t0), notes)
    if progress:
        from rich.console import Console

        console = Console()
    # A transient bar drawn into a file (a log, a pipe) leaves only a blank line behind.
    if console is not None and (console.is_terminal or console.is_jupyter):
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        with Progress(
            TextColumn("simulating"), BarColumn(), TextColumn("{task.fields[t]:.1f}/{task.total:.1f} µs"),
            TextColumn("{task.fields[ev]} events"), TimeRemainingColumn(), console=console, transient=True,
        ) as bar:
            task = bar.add_task("sim", total=time_us, t=0.0, ev=0)
            _run_slices(sim, end_ps, slices, lambda: bar.update(task, completed=sim.now_ps / PS_PER_US, t=sim.now_ps / PS_PER_US, ev=sim.events))
    else:
        _run_slices(sim, end_ps, slices, None)
    return _with_warnings(result_of(sim, time.perf_counter() - t0), notes)


def _with_warnings(res: SimResult, notes: list[str]) -> SimResult:
    res.warnings = tuple(notes)
    return res


def _warnings_of(cfg: dict, time_us: float) -> list[str]:
    """The :class:`ConfigWarning` messages of the keys a run gives the core."""
    notes = []
    if cfg.get("auto_warmup") is None:
        why = warmup_warning(cfg["warmup_ns"] / 1000.0, time_us)
        if why:
            notes.append(f"warmup_us: {why}")
    for c in cfg["traffic"]["classes"]:
        load = c.get("load")
        # A class dict written by hand may hold anything here; the core names a bad one next.
        if not (isinstance(load, (int, float)) and not isinstance(load, bool) and math.isfinite(load)):
            continue
        why = overload_warning(load)
        if why:
            notes.append(f"traffic class '{c['name']}': {why}")
    return notes


def result_of(sim, wall_s: float) -> SimResult:
    """The :class:`SimResult` of a finished core ``Simulation``, with both histograms per class."""
    text, ports = sim.results()
    raw = json.loads(text)
    raw["ports"] = ports  # in its place: the JSON holds an empty list there
    hist = {c["name"]: sim.latency_histogram(i, False) or [] for i, c in enumerate(raw["classes"])}
    net_hist = {c["name"]: sim.latency_histogram(i, True) or [] for i, c in enumerate(raw["classes"])}
    return SimResult(raw, wall_s, hist, net_hist)


def _set_warmup(cfg: dict, warmup_us: float | str, max_fraction: float, time_us: float) -> None:
    """Fills ``warmup_ns`` / ``auto_warmup`` of the core config."""
    auto = cfg.get("auto_warmup")
    if isinstance(warmup_us, str):
        if warmup_us != "auto":
            raise ConfigError(f"warmup_us must be a number of µs or 'auto', got {warmup_us!r}")
        auto = dict(auto or {})
    elif auto is not None and warmup_us:
        raise ConfigError("give either warmup_us (fixed) or auto_warmup (detected), not both")
    if auto is None:
        warmup_us = _args.number("warmup_us", warmup_us, lo=0.0)
        if warmup_us >= time_us:
            raise ConfigError(f"warmup_us: the warm-up ({warmup_us:g} µs) must end before the run does (time_us = {time_us:g} µs), or nothing is measured")
        cfg["warmup_ns"] = warmup_us * 1000.0
        return
    max_fraction = _args.number("warmup_max_fraction", max_fraction, hi=1.0, above=0.0)
    full = {**json.loads(_core.sim_auto_warmup_default_json()), **auto}
    if "max_ns" not in auto:
        full["max_ns"] = max_fraction * float(time_us) * 1000.0
        shortest = full["window_ns"] * full["windows"]
        if full["max_ns"] < shortest:
            raise ConfigError(
                f"time_us = {time_us} is too short for automatic warm-up: its first "
                f"{max_fraction:g} ({full['max_ns'] / 1000:g} µs) is less than the {full['windows']} windows "
                f"of {full['window_ns'] / 1000:g} µs the detector needs; lengthen the run, raise "
                "warmup_max_fraction or shorten auto_warmup.window_ns"
            )
    cfg["warmup_ns"] = 0.0
    cfg["auto_warmup"] = full


class _ProgressLines:
    """A plain progress line on stderr at most every ``interval`` seconds:
    ``point 3: simulated 1200.0/2000.0 µs (60 %), 9.81 M events/s, elapsed 0:01:10``."""

    def __init__(self, sim, end_ps: int, interval: float, label: str, t0: float):
        self.sim, self.end_ps, self.interval, self.label, self.t0 = sim, end_ps, interval, label, t0
        self.last = t0

    def __call__(self) -> None:
        now = time.perf_counter()
        if now - self.last < self.interval:
            return
        self.last = now
        wall = now - self.t0
        t = self.sim.now_ps
        rate = self.sim.events / wall if wall > 0 else 0.0
        elapsed = f"{int(wall) // 3600}:{int(wall) % 3600 // 60:02d}:{int(wall) % 60:02d}"
        print(
            f"{self.label}: simulated {t / PS_PER_US:.1f}/{self.end_ps / PS_PER_US:.1f} µs ({100 * t / self.end_ps:.0f} %), "
            f"{rate / 1e6:.2f} M events/s, elapsed {elapsed}",
            file=sys.stderr,
            flush=True,
        )


def _run_slices(sim, end_ps: int, slices: int, tick) -> None:
    step = max(1, end_ps // max(1, slices))
    t = 0
    while t < end_ps:
        t = min(end_ps, t + step)
        sim.run(t)
        if tick:
            tick()
