"""Issue 11: valid but suspicious settings (an offered load above 1, a warm-up
longer than half the run) warn once, from the Python API and from a scenario,
and the sweep keeps the scenario's warnings in its manifest."""

import json
import logging
import warnings

import pytest

import ibnetsim as ib
from ibnetsim import traffic as T
from ibnetsim.experiment import make_executor, run_sweep
from ibnetsim.experiment import scenario as scn

OVERLOAD = (
    "offered load 1.5 is above 1: the sources generate more than their links carry, so their queues "
    "grow for the whole run and the latency measured depends on its length"
)

SCENARIO = """\
kind = "simulate"
seed = 1
[fabric]
kind = "irregular"
switches = 4
switch_ports = 8
links_per_switch = 2
hosts_per_switch = 2
[simulation]
time_us = 4.0
warmup_us = 3.0
[traffic]
load = [0.5, 1.5, 2.0]
"""


@pytest.fixture(scope="module")
def net():
    fab = ib.topology.irregular(switches=4, switch_ports=8, links_per_switch=2, hosts_per_switch=2, seed=1)
    return fab, ib.SubnetManager(fab)


def test_simulate_warns_of_a_load_above_one_and_keeps_it_in_the_result(net):
    fab, sm = net
    with pytest.warns(ib.ConfigWarning) as caught:
        res = ib.simulate(fab, sm, traffic=T.uniform(1.5, name="be"), time_us=4)
    assert [str(w.message) for w in caught] == [f"traffic class 'be': {OVERLOAD}"]
    assert res.warnings == (f"traffic class 'be': {OVERLOAD}",)


def test_simulate_warns_of_a_warmup_longer_than_half_the_run(net):
    fab, sm = net
    with pytest.warns(ib.ConfigWarning) as caught:
        res = ib.simulate(fab, sm, traffic=T.uniform(0.2), time_us=4, warmup_us=3)
    expected = "warmup_us: the warm-up (3 µs) is longer than half the run (time_us = 4 µs): less than half of the run is measured"
    assert [str(w.message) for w in caught] == [expected]
    assert res.warnings == (expected,)


def test_simulate_is_silent_at_load_one_and_a_warmup_of_half_the_run(net):
    fab, sm = net
    with warnings.catch_warnings():
        warnings.simplefilter("error", ib.ConfigWarning)
        res = ib.simulate(fab, sm, traffic=T.uniform(1.0), time_us=4, warmup_us=2)
    assert res.warnings == ()


def test_scenario_warns_once_per_key_and_the_manifest_keeps_it(tmp_path, caplog):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    with caplog.at_level(logging.WARNING, logger="ibnetsim.experiment.scenario"):
        sc = scn.load(path)
    expected = [
        f"{path}:11: simulation.warmup_us: the warm-up (3 µs) is longer than half the run (time_us = 4 µs): "
        "less than half of the run is measured",
        f"{path}:13: traffic.load: {OVERLOAD}",
    ]
    # Loads 1.5 and 2.0 are one mistake: the first point past 1 names it.
    assert sc.warnings == expected
    assert [r.getMessage() for r in caplog.records] == [f"warning: {w}" for w in expected]
    summary = run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=False)
    assert summary.failed == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["runs"][-1]["warnings"] == expected
