"""The data-plane commands of ``ibnetsim``: ``run`` (one simulation or a load sweep) and ``bench``.

``run`` is ``sweep`` narrowed to the ``simulate`` point kind, with what a load
sweep is read for printed at the end: a load/accepted/latency table, the
latency-vs-accepted-traffic figure and the saturation point. ``bench`` times
the simulator on two fixed reference scenarios. Both join the ``main`` group
through :func:`register`, like :mod:`ibnetsim.experiment.cli`.

Exit status: 0 on success, 1 when a point failed (a deadlock, say), 2 on bad
input (file, line and key named), 130 when interrupted.
"""

from __future__ import annotations

import math
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import click
from rich.console import Console
from rich.table import Table

from ibnetsim._cliutil import plural
from ibnetsim.experiment.cli import _executor_options, _friendly, _make_executor, _progress_options

__all__ = ["register", "saturation", "SATURATION_TOLERANCE", "CRITERION", "BENCHES"]

#: A load is below saturation while accepted ≥ (1 − this) × offered.
SATURATION_TOLERANCE = 0.02


# --------------------------------------------------------------------------- saturation
@dataclass
class Saturation:
    """Result of :func:`saturation` for one curve."""

    #: Highest offered load of the unbroken run of loads from the lowest up that
    #: keeps accepted within the tolerance of offered; None if even the lowest fails.
    load: Optional[float]
    #: Accepted traffic at that load.
    accepted: Optional[float]
    #: True when every load of the sweep kept up (saturation is above the sweep).
    beyond_sweep: bool
    #: First load that fell behind, if any.
    first_behind: Optional[float]
    #: Why it fell behind: ``accepted`` (below the tolerance of offered),
    #: ``not stationary`` (queues or latency grew while measured) or ``failed``.
    behind_because: Optional[str] = None


#: What :func:`saturation` requires of a load, as printed beside its verdict.
CRITERION = f"criterion: accepted ≥ {1 - SATURATION_TOLERANCE:.2f} × offered, and a stationary measurement"


def saturation(
    loads: list[float],
    offered: list[float],
    accepted: list[float],
    tolerance: float = SATURATION_TOLERANCE,
    stationary: Optional[list[Optional[bool]]] = None,
) -> Saturation:
    """The saturation point of a load sweep.

    Criterion: accepted ≥ (1 − ``tolerance``) × offered, with offered and
    accepted both measured over the run after warm-up, and, where
    ``stationary`` is given, a measurement that was stationary (no backlog
    growth, no latency trend over its windows: :attr:`SimResult.stationary`).
    The second part holds up to the run's length: just past saturation a
    short run still accepts nearly all it is offered while its queues grow.
    Loads are scanned from the lowest up and the scan stops at the first that
    falls behind, so a noisy point past saturation that happens to keep up
    does not count.
    """
    order = sorted(range(len(loads)), key=lambda i: loads[i])
    best: Optional[int] = None

    def result(beyond: bool, behind: Optional[int], why: Optional[str]) -> Saturation:
        return Saturation(
            loads[best] if best is not None else None,
            accepted[best] if best is not None else None,
            beyond,
            loads[behind] if behind is not None else None,
            why,
        )

    for i in order:
        o, a = offered[i], accepted[i]
        if o is None or a is None or (isinstance(o, float) and math.isnan(o)) or (isinstance(a, float) and math.isnan(a)):
            return result(False, i, "failed")
        if a < (1.0 - tolerance) * o:
            return result(False, i, "accepted")
        if stationary is not None and stationary[i] is False:
            return result(False, i, "not stationary")
        best = i
    return result(True, None, None)


# --------------------------------------------------------------------------- run
_WHY = {
    "accepted": f"accepted below {1 - SATURATION_TOLERANCE:.2f} × offered",
    "not stationary": "queues or latency grew while measured",
    "failed": "the point failed",
}


def _yes_no(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return "yes" if bool(v) else "[red]no[/red]"


def _fmt(v: Any, spec: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return format(v, spec)


@click.command("run")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), default=None, help="Results directory (default: results/<scenario file stem>, e.g. results/grid for grid.toml).")
@_executor_options
@_progress_options
@_friendly
def run_cmd(file: str, out_dir: Optional[str], executor: str, scheduler: Optional[str], workers: Optional[int], no_progress: bool, progress_interval: float) -> None:
    """Run the simulation scenario FILE (kind = "simulate"): one run, or a sweep when
    traffic.load (or any key) is a list.

    Prints load, accepted traffic and latency per point, draws the latency-vs-accepted-traffic
    figure into DIR/figures (with two points or more; `ibnetsim plot DIR` draws a single
    point's figures) and reports the saturation load: the highest offered load whose
    accepted traffic stays within 2 % of offered (accepted ≥ 0.98 × offered, both measured
    after warm-up), scanning loads upwards and stopping at the first that falls behind.
    Points already in DIR are not run again.
    """
    from ibnetsim.experiment.scenario import ScenarioError, key_lines, load
    from ibnetsim.experiment.store import load_results
    from ibnetsim.experiment.sweep import run_sweep

    sc = load(file)
    if sc.kind != "simulate":
        line = key_lines(sc.text).get(("kind",))
        raise ScenarioError(f"`ibnetsim run` runs kind = \"simulate\" scenarios, not '{sc.kind}' (use `ibnetsim sweep`)", file, line, "kind")
    if len(sc.points) == 1 and executor == "local":
        # A pool of worker processes gains nothing for one point and costs their start-up.
        executor = "serial"
    ex = _make_executor(executor, workers, scheduler)
    out = Path(out_dir) if out_dir else Path("results") / Path(file).stem
    click.echo(f"{file}: {plural(len(sc.points), 'point')} on {ex.describe()} → {out}", err=True)
    summary = run_sweep(sc, out, ex, progress=not no_progress, progress_interval=progress_interval)
    click.echo(str(summary), err=True)

    keys = {p.key for p in sc.points}
    df = load_results(out)
    df = df[df["key"].isin(keys)].reset_index(drop=True)
    # The load of a point: its class's traffic.load, or the sum over several [[traffic]] classes.
    df["load"] = df["key"].map({p.key: sum(t["load"] for t in p.config["traffic"]) for p in sc.points})
    n = len(sc.points[0].config["traffic"])
    load_axes = {"traffic.load"} if n == 1 else {f"traffic[{i}].load" for i in range(n)}
    series_axes = [a.name for a in sc.axes if a.name not in load_axes]
    table = Table(title=(sc.name or Path(file).stem) + f" — {plural(len(df), 'point')}")
    cols = series_axes + ["load", "offered", "accepted", "latency mean (ns)", "latency p99 (ns)", "stationary", "status"]
    for c in cols:
        table.add_column(c, justify="left" if c == "status" else "right", overflow="fold")
    df = df.sort_values(series_axes + ["load"], kind="stable")
    for _, r in df.iterrows():
        ok = r["status"] == "ok"
        table.add_row(
            *[str(r[a]) for a in series_axes],
            f"{r['load']:.4g}",
            _fmt(r.get("offered_load") if ok else None, ".4f"),
            _fmt(r.get("accepted_load") if ok else None, ".4f"),
            _fmt(r.get("latency_mean_ns") if ok else None, ".1f"),
            _fmt(r.get("latency_p99_ns") if ok else None, ".1f"),
            _yes_no(r.get("stationary") if ok else None),
            "ok" if ok else f"[red]{r['error']}[/red]",
        )
    Console(width=max(100, 16 * len(cols))).print(table)

    ok_rows = df[df["status"] == "ok"]
    if len(ok_rows) == 1:
        # One point has no curve to draw; its own figures cost more than its run.
        click.echo(f"figures: none for one point (`ibnetsim plot {out}` draws its per-port and latency figures)")
    elif not ok_rows.empty:
        from ibnetsim.experiment.plots import plot_results

        paths = plot_results(out, out / "figures", ("png", "svg"))
        fig = [p for p in paths if p.stem == "latency_vs_accepted" and p.suffix == ".png"]
        if fig:
            click.echo(f"figure: {fig[0]}")
    # A saturation verdict is about the load of the open-loop classes; closed-loop
    # classes, connections and traces alone have none to scale.
    if not ok_rows.empty and (ok_rows["load"] > 0).any():
        # One saturation point per curve: every swept key but the load (seeds averaged).
        curve_axes = [a for a in series_axes if a != "seed"]
        groups = ok_rows.groupby(curve_axes, sort=True) if curve_axes else [((), ok_rows)]
        for values, g in groups:
            # Seeds averaged; a load is stationary only if every seed's run was.
            if "stationary" not in g:
                g = g.assign(stationary=None)
            not_stationary = g.groupby("load", sort=True)["stationary"].agg(lambda v: bool((v == False).any()))  # noqa: E712 (None and NaN are not False)
            g = g.groupby("load", sort=True)[["offered_load", "accepted_load"]].mean().reset_index()
            stationary = [False if not_stationary[ld] else None for ld in g["load"]]
            s = saturation(g["load"].tolist(), g["offered_load"].tolist(), g["accepted_load"].tolist(), stationary=stationary)
            label = ", ".join(f"{k}={v}" for k, v in zip(curve_axes, values if isinstance(values, tuple) else (values,)))
            prefix = f"saturation ({label})" if label else "saturation"
            crit = CRITERION
            if len(g) == 1:
                verdict = "keeps up" if s.load is not None else f"falls behind: {_WHY[s.behind_because]}"
                click.echo(f"load {g['load'].iloc[0]:g}{f' ({label})' if label else ''}: {verdict} ({crit}); sweep traffic.load to find saturation")
            elif s.beyond_sweep:
                click.echo(f"{prefix}: not reached; every load up to {s.load:g} kept up ({crit})")
            elif s.load is None:
                click.echo(f"{prefix}: below the lowest load {s.first_behind:g} ({crit})")
            else:
                click.echo(f"{prefix}: load {s.load:g} (accepted {s.accepted:.4f}); load {s.first_behind:g} fell behind: {_WHY[s.behind_because]} ({crit})")
    if summary.interrupted:
        from ibnetsim.experiment.cli import exit_interrupted

        exit_interrupted()
    sys.exit(1 if summary.failed or (df["status"] != "ok").any() else 0)


# --------------------------------------------------------------------------- bench
def _bench_irregular() -> tuple[str, Any, Any, dict, dict]:
    import ibnetsim
    from ibnetsim import topology

    fab = topology.irregular(switches=64, switch_ports=8, links_per_switch=4, hosts_per_switch=4, seed=1, cable_length_m=20.0)
    sm = ibnetsim.SubnetManager(fab, routing="updn", seed=1)
    # Saturation of this fabric (seed 1, 20 m cables, updn, martinez2003, uniform 256 B) was
    # measured with `ibnetsim run` on two load sweeps: 0.02 … 0.20 (400 µs, 100 µs warm-up)
    # kept up to 0.04 and fell behind at 0.05; then 0.038 … 0.050 in steps of 0.002 (1000 µs,
    # 200 µs warm-up) kept up to 0.040 (accepted 0.0394) and fell behind at 0.042
    # (accepted 0.0400 of 0.0417 offered). 80 % of 0.040 is 0.032.
    load = IRREGULAR_LOAD
    return (
        f"irregular 64 sw × 4 hosts (256 hosts), updn, martinez2003, uniform 256 B @ {load}",
        fab,
        sm,
        ibnetsim.traffic.uniform(load, 256),
        {"preset": "martinez2003"},
    )


IRREGULAR_LOAD = 0.032


def _bench_mesh() -> tuple[str, Any, Any, dict, dict]:
    import ibnetsim
    from ibnetsim import topology

    fab = topology.mesh([8, 8], hosts_per_switch=1)
    sm = ibnetsim.SubnetManager(fab, routing="dor")
    return (
        "mesh 8×8, 1 host/switch (64 hosts), dor, 1 data VL, martinez2003, uniform 256 B @ 0.3",
        fab,
        sm,
        ibnetsim.traffic.uniform(0.3, 256),
        {"preset": "martinez2003", "data_vls": 1},
    )


def _bench_fattree() -> tuple[str, Any, Any, dict, dict]:
    import ibnetsim
    from ibnetsim import topology

    # The size operators care about: a 12-ary 3-tree has 1,728 hosts on 432 switches of 24
    # ports, routed as OpenSM's ftree routes it; its working set is ~7× the irregular one's.
    fab = topology.fat_tree(12, 3)
    sm = ibnetsim.SubnetManager(fab, routing="ftree")
    return (
        "12-ary 3-tree (432 switches, 1,728 hosts), ftree, IBA defaults, uniform 256 B @ 0.3",
        fab,
        sm,
        ibnetsim.traffic.uniform(0.3, 256),
        {"preset": None},
    )


#: (name, builder, simulated µs, quick µs, warm-up µs, quick warm-up µs). The full runs are
#: long enough (~10^7 events) for a few seconds of wall clock, so start-up does not count.
BENCHES = (
    ("irregular64", _bench_irregular, 100_000.0, 50.0, 1000.0, 10.0),
    ("mesh8x8", _bench_mesh, 40_000.0, 100.0, 1000.0, 10.0),
    ("fattree1728", _bench_fattree, 1_000.0, 20.0, 100.0, 5.0),
)


#: Runs of each start-up command; the median is reported, as one run is at the mercy of the disk cache.
STARTUP_RUNS = 5


def _startup_s(args: list[str], cwd: str) -> float:
    """Median wall time of ``ibnetsim ARGS`` in a new interpreter, start-up included."""
    import statistics
    import subprocess

    times = []
    for _ in range(STARTUP_RUNS):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ibnetsim.cli", *args], cwd=cwd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _bench_startup() -> str:
    import tempfile

    from ibnetsim import topology

    with tempfile.TemporaryDirectory() as d:
        topology.ring(4).write(os.path.join(d, "ring.net"))
        help_s = _startup_s(["--help"], d)
        check_s = _startup_s(["check", "ring.net"], d)
    return f"cli start-up: `ibnetsim --help` {help_s:.2f} s, `ibnetsim check ring.net` (4 switches) {check_s:.2f} s (median of {STARTUP_RUNS} runs each, wall)"


@click.command("bench")
@click.option("--quick", is_flag=True, help="Short runs (a few seconds in all), for tests.")
@click.option("--progress/--no-progress", default=False, help="Progress bar during each run.")
@_friendly
def bench_cmd(quick: bool, progress: bool) -> None:
    """Time the simulator on three reference scenarios and print events/s and delivered packets/s,
    then the command line's start-up.

    (a) 64-switch irregular fabric (8 ports, 4 links, 4 hosts per switch), up*/down*, uniform
    256 B traffic at about 80 % of its saturation load; (b) 8×8 mesh with one host per switch,
    dimension-order routing on 1 data VL, uniform 256 B at 30 % load, both with the martinez2003
    switch parameters; (c) 12-ary 3-tree, 1,728 hosts on 432 switches, ftree routing, IBA default
    switch parameters, uniform 256 B at 30 % load. Only the simulation is timed (wall clock around simulate), not building
    the fabric or the tables.
    """
    import ibnetsim
    from ibnetsim import _core

    click.echo(f"machine: {machine_description()}")
    click.echo(f"build: ibnetsim {ibnetsim.__version__}, commit {ibnetsim.__build_commit__}, {_core.BUILD_PROFILE} profile; Python {platform.python_version()}")
    for name, build, time_us, quick_us, warm, quick_warm in BENCHES:
        t_us, w_us = (quick_us, quick_warm) if quick else (time_us, warm)
        describe, fab, sm, traffic, config = build()
        preset = config.pop("preset")
        extra = "".join(f", {k} = {v!r}" for k, v in config.items())
        click.echo(f"{name} configuration: {f'preset {preset}' if preset else 'IBA defaults (no preset)'}, {t_us:g} µs simulated after a {w_us:g} µs warm-up, seed 1{extra}")
        t0 = time.perf_counter()
        res = ibnetsim.simulate(fab, sm, traffic=traffic, time_us=t_us, seed=1, warmup_us=w_us, preset=preset, progress=progress, **config)
        wall = time.perf_counter() - t0
        events = res.raw["events"]
        delivered = res.raw["delivered"]
        hops = res.raw["switch_hops"]
        click.echo(
            f"{name}: {describe}; {t_us:g} µs simulated in {wall:.2f} s: "
            f"{events / wall:,.0f} events/s, {delivered / wall:,.0f} delivered packets/s "
            f"({events:,} events, {delivered:,} packets; accepted {res.accepted:.4f} of offered {res.offered:.4f})"
        )
        by_kind = ", ".join(f"{k} {n / hops:.2f}" for k, n in sorted(res.raw["events_by_kind"].items(), key=lambda kv: -kv[1]))
        click.echo(f"{name} events per switch hop: {events / hops:.2f} ({hops / max(delivered, 1):.2f} hops per delivered packet; {by_kind})")
    click.echo(_bench_startup())


def machine_description() -> str:
    """CPU model, cores and memory of this machine, as benchmarks should name it."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), model)
    except OSError:
        pass
    memory = ""
    try:
        memory = f", {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        pass
    return f"{model}, {os.cpu_count()} cores{memory}, {platform.system()} {platform.release()}"


def register(group: click.Group) -> None:
    """Adds ``run`` and ``bench`` to the ``ibnetsim`` group."""
    for cmd in (run_cmd, bench_cmd):
        group.add_command(cmd)
