"""Point kinds for the experiment tests, loaded as a scenario plugin (``plugins = ["experiment_plugin"]``).

``synthetic`` computes a seeded value quickly and can fail, crash its worker,
raise KeyboardInterrupt or leave a marker file per run, at chosen seeds, so the
tests can drive every path of the sweep machinery. ``fake_dataplane`` returns
the columns the data-plane figures read, and ``shares`` columns drawn as
categories (``kinds.Categories``).
"""

import os
from pathlib import Path

import numpy as np

from ibnetsim.experiment import kinds, schema
from ibnetsim.experiment.schema import Key, Section

if "synthetic" not in schema.sections():
    schema.register_section(
        Section(
            "synthetic",
            "Test-only synthetic point.",
            keys=(
                Key("x", "float", "Scale.", default=1.0),
                Key("n", "int", "Samples.", default=1000, min=1),
                Key("fail_seed", "int", "Raise at this seed.", default=-1),
                Key("crash_seed", "int", "os._exit(3) at this seed.", default=-1),
                Key("marker_dir", "str", "Touch a file per run here.", default=""),
                Key("wait_for", "str", "Block (poll) until this file exists.", default=""),
                Key("wait_from_seed", "int", "Only block at seeds from this one on.", default=0),
            ),
        )
    )
    schema.register_section(
        Section(
            "fake",
            "Test-only data-plane rows.",
            keys=(
                Key("load", "float", "Offered load.", default=0.5, min=0, max=1),
                Key("vls", "int", "VLs.", default=1),
                Key("latency_max_ns", "float", "Upper edge of the latency histogram.", default=4000.0, min=1),
                Key("accept_cap", "float", "Accepted load with 0 VLs (each VL adds 0.05).", default=0.6, min=0, max=1),
            ),
        )
    )


def _synthetic(cfg: dict) -> dict:
    s = cfg["synthetic"]
    seed = cfg["seed"]
    if s["marker_dir"]:
        Path(s["marker_dir"], f"{seed}-{s['x']}-{os.getpid()}-{os.urandom(4).hex()}").touch()
    if s["wait_for"] and seed >= s["wait_from_seed"]:
        import time

        while not Path(s["wait_for"]).exists():
            time.sleep(0.05)
    if seed == s["fail_seed"]:
        raise RuntimeError(f"synthetic failure at seed {seed}")
    if seed == s["crash_seed"]:
        os._exit(3)
    # Not a scenario key, so that the same points can run again uninterrupted.
    if os.environ.get("SYNTHETIC_INTERRUPT_SEED") == str(seed):
        raise KeyboardInterrupt
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(s["n"]) * s["x"]
    return {"mean": float(v.mean()), "max": float(v.max()), "count": s["n"], "label": f"s{seed}", "profile": [float(a) for a in v[:5]]}


def _fake(cfg: dict) -> dict:
    load = cfg["fake"]["load"]
    vls = cfg["fake"]["vls"]
    rng = np.random.default_rng(cfg["seed"])
    accepted = min(load, cfg["fake"]["accept_cap"] + 0.05 * vls)
    util = np.clip(rng.random(16) * accepted * 1.5, 0, 1)
    edges = np.linspace(0, cfg["fake"]["latency_max_ns"], 21)
    counts = rng.integers(0, 100, 20)
    return {
        "offered_load": load,
        "accepted_load": accepted,
        "latency_mean_ns": 500 + 4000 * load**4 / vls,
        "port_utilization": util.tolist(),
        "latency_hist_edges_ns": edges.tolist(),
        "latency_hist_counts": counts.astype(float).tolist(),
    }


def _shares(cfg: dict) -> dict:
    g = cfg["shares"]["group"]
    return {f"{series}_{i}": round(0.1 * g + 0.2 * i + (0.05 if series == "b" else 0.0), 6) for series in "ab" for i in range(3)}


if "shares" not in schema.sections():
    schema.register_section(Section("shares", "Test-only categories.", keys=(Key("group", "int", "Group.", default=1, min=0),)))

if "synthetic" not in kinds.names():
    kinds.register(kinds.PointKind("synthetic", "Test-only.", _synthetic, sections=("synthetic",),
                                   figures=(kinds.Figure("mean", x="synthetic.x", y="mean", title="Mean", ylabel="mean"),)))
    kinds.register(kinds.PointKind("fake_dataplane", "Test-only.", _fake, sections=("fake",)))
    kinds.register(
        kinds.PointKind(
            "shares",
            "Test-only.",
            _shares,
            sections=("shares",),
            categories=(
                kinds.Categories("shares", title="Shares", ylabel="share", xlabel="level", categories=("low", "mid", "high"), series=(("a", ("a_0", "a_1", "a_2")), ("b", ("b_0", "b_1", None)))),
            ),
        )
    )
