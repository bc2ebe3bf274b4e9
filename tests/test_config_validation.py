"""Issue 11: a value the core cannot take is refused before anything runs, with
an IbnetsimError naming the key as the user wrote it: in scenario files (what
``ibnetsim sweep --dry-run`` loads) and in the Python API. One test per example
the issue lists."""

import math

import pytest
from click.testing import CliRunner

import ibnetsim as ib
import ibnetsim.qos
from ibnetsim import traffic as T
from ibnetsim.cli import main
from ibnetsim.errors import ConfigError, TopologyError
from ibnetsim.experiment import scenario as scn
from ibnetsim.experiment.scenario import ScenarioError

SIMULATE = """\
kind = "simulate"
seed = 1
[fabric]
kind = "irregular"
switches = 4
switch_ports = 8
links_per_switch = 2
hosts_per_switch = 2
cable_length_m = 1.0
[simulation]
time_us = 5.0
warmup_us = 0.0
[switch]
speedup = 1.0
routing_delay_ns = 100.0
[traffic]
load = 0.1
payload_sizes = [32, 256]
payload_size_weights = [1.0, 1.0]
[trace]
file = "t.trace"
time_scale = 1.0
"""

QOS_SETUP = """\
kind = "qos_setup"
seed = 1
[qos_setup]
connections = 10
retry_limit = 10
"""


def with_value(text: str, section: str, key: str, value: str) -> tuple[str, int]:
    """``text`` with ``key`` of ``[section]`` set to ``value`` (written as is),
    and the line it is on."""
    lines = text.splitlines()
    start = lines.index(f"[{section}]")
    i = next(i for i in range(start + 1, len(lines)) if lines[i].split("=")[0].strip() == key)
    lines[i] = f"{key} = {value}"
    return "\n".join(lines) + "\n", i + 1


SCENARIO_CASES = [
    # A validated scenario crashed the sweep in the results store.
    (SIMULATE, "fabric", "switches", "99999999999999999999", "99999999999999999999 is above the maximum 4294967295"),
    (QOS_SETUP, "qos_setup", "retry_limit", "18446744073709551616", "18446744073709551616 is above the maximum 4294967295"),
    # Values passed --dry-run and failed when the point ran.
    (SIMULATE, "simulation", "time_us", "inf", "expected a finite number, got inf"),
    (SIMULATE, "simulation", "time_us", "1e400", "expected a finite number, got inf"),
    (SIMULATE, "simulation", "time_us", "1e13", "1e+13 is above the maximum 4.61169e+12"),
    (SIMULATE, "traffic", "load", "nan", "expected a finite number, got nan"),
    (SIMULATE, "traffic", "load", "inf", "expected a finite number, got inf"),
    (SIMULATE, "switch", "speedup", "nan", "expected a finite number, got nan"),
    (SIMULATE, "switch", "routing_delay_ns", "inf", "expected a finite number, got inf"),
    (SIMULATE, "trace", "time_scale", "nan", "expected a finite number, got nan"),
    (SIMULATE, "traffic", "payload_size_weights", "[1.0, nan]", "expected a finite number, got nan"),
    (SIMULATE, "fabric", "cable_length_m", "nan", "expected a finite number, got nan"),
    (SIMULATE, "fabric", "cable_length_m", "-1", "-1 is below the minimum 0"),
    (SIMULATE, "traffic", "payload_sizes", "[32, -256]", "-256 is below the minimum 1"),
    (QOS_SETUP, "qos_setup", "connections", "4294967296", "4294967296 is above the maximum 4294967295"),
    (SIMULATE, "simulation", "warmup_us", "5.0", "warm-up (5.0 µs) must end before the run does (time_us = 5.0 µs)"),
    # The core's own limit (MAX_LOAD), exported; found by the property test.
    (SIMULATE, "traffic", "load", "101.0", "101 is above the maximum 100"),
]


@pytest.mark.parametrize("text,section,key,value,message", SCENARIO_CASES, ids=[f"{c[1]}.{c[2]}={c[3]}" for c in SCENARIO_CASES])
def test_scenario_value_is_refused_naming_key_file_and_line(tmp_path, text, section, key, value, message):
    (tmp_path / "t.trace").write_text("0 h0 h1 256 0\n")
    body, line = with_value(text, section, key, value)
    path = tmp_path / "s.toml"
    path.write_text(body)
    with pytest.raises(ScenarioError) as e:
        scn.load(path)
    assert (e.value.file, e.value.line, e.value.key) == (str(path), line, f"{section}.{key}")
    assert str(e.value) == f"{path}:{line}: {section}.{key}: {message}"


@pytest.mark.parametrize(
    "line,key,message",
    [
        ("input_partition_bytes = [4096, 2304]", "switch.input_partition_bytes", "the partitions add up to 6400 bytes, but they split switch.input_buffer_bytes = 8192 (give whole 64-byte credits that add up to it)"),
        ("vl15_buffer_bytes = 64", "switch.vl15_buffer_bytes", "64 bytes hold 1 credits of 64 B, but virtual cut-through needs room for a whole VL15 packet (282 B on the wire = 5 credits = 320 B)"),
    ],
)
def test_scenario_is_checked_by_the_core_before_it_runs(tmp_path, line, key, message):
    # What only the core checked (when the point ran) is refused at load time, at the line given.
    (tmp_path / "t.trace").write_text("0 h0 h1 256 0\n")
    body = SIMULATE.replace("[switch]\n", f"[switch]\n{line}\n")
    path = tmp_path / "s.toml"
    path.write_text(body)
    with pytest.raises(ScenarioError) as e:
        scn.load(path)
    assert (e.value.key, e.value.line, e.value.message) == (key, body.splitlines().index(line) + 1, message)


@pytest.mark.parametrize(
    "extra,message",
    [
        ("", "needs two LIDs per port: routing.lmc = 1 or more (e.g. engine 'fa' with lmc = 1)"),
        ('path_bits = "random"', 'chooses the DLID\'s path bits itself; leave path_bits = "base"'),
    ],
    ids=["lmc-0", "random-path-bits"],
)
def test_adaptive_fraction_needs_a_second_lid_and_base_path_bits(tmp_path, extra, message):
    # Found by the property test: the core refused these only when it built the simulation.
    (tmp_path / "t.trace").write_text("0 h0 h1 256 0\n")
    body = SIMULATE.replace("load = 0.1\n", f"load = 0.1\nadaptive_fraction = 0.5\n{extra}\n")
    if extra:
        body += "[routing]\nlmc = 1\n"
    path = tmp_path / "s.toml"
    path.write_text(body)
    with pytest.raises(ScenarioError) as e:
        scn.load(path)
    line = body.splitlines().index("adaptive_fraction = 0.5") + 1
    assert (e.value.key, e.value.line, e.value.message) == ("traffic.adaptive_fraction", line, message)


def test_dry_run_refuses_an_integer_the_results_store_cannot_hold(tmp_path):
    body, line = with_value(SIMULATE, "fabric", "switches", "99999999999999999999")
    path = tmp_path / "s.toml"
    path.write_text(body)
    (tmp_path / "t.trace").write_text("0 h0 h1 256 0\n")
    r = CliRunner().invoke(main, ["sweep", str(path), "--dry-run"])
    # Exit status 2: a usage error, as for every invalid scenario.
    assert r.exit_code == 2, r.output
    assert f"error: {path}:{line}: fabric.switches: 99999999999999999999 is above the maximum 4294967295" in r.output


# --------------------------------------------------------------------------- the Python API
@pytest.fixture(scope="module")
def net():
    fab = ib.topology.irregular(switches=4, switch_ports=8, links_per_switch=2, hosts_per_switch=2, seed=1)
    return fab, ib.SubnetManager(fab)


def run(net, **kw):
    fab, sm = net
    return ib.simulate(fab, sm, traffic=kw.pop("traffic", T.uniform(0.1)), time_us=kw.pop("time_us", 5), **kw)


IRREGULAR = dict(switches=4, switch_ports=8, links_per_switch=2, hosts_per_switch=2, seed=1)

API_CASES = [
    ("simulate time_us=inf", lambda n: run(n, time_us=math.inf), ConfigError, "time_us: expected a finite number, got inf"),
    ("simulate time_us=1e400", lambda n: run(n, time_us=float("1e400")), ConfigError, "time_us: expected a finite number, got inf"),
    ("simulate time_us over the clock", lambda n: run(n, time_us=1e13), ConfigError, "time_us: 1e+13 is above the maximum 4.61169e+12"),
    ("simulate time_us='5'", lambda n: run(n, time_us="5"), ConfigError, "time_us: expected a number, got '5' (str)"),
    ("simulate seed=nan", lambda n: run(n, seed=math.nan), ConfigError, "seed: expected a whole number in 0..=18446744073709551615, got nan (float)"),
    ("simulate seed=-1", lambda n: run(n, seed=-1), ConfigError, "seed: -1 is out of range 0..=18446744073709551615"),
    ("simulate warmup_us=time_us", lambda n: run(n, warmup_us=5), ConfigError, "warmup_us: the warm-up (5 µs) must end before the run does (time_us = 5 µs), or nothing is measured"),
    ("simulate warmup_us=nan", lambda n: run(n, warmup_us=math.nan), ConfigError, "warmup_us: expected a finite number, got nan"),
    ("simulate switch.speedup=nan", lambda n: run(n, switch={"speedup": math.nan}), ConfigError, "simulation config: switch.speedup: expected a finite number, got nan"),
    ("simulate switch.routing_delay_ns=inf", lambda n: run(n, switch={"routing_delay_ns": math.inf}), ConfigError, "simulation config: switch.routing_delay_ns: expected a finite number, got inf"),
    # The core's own type errors name the key path, not a column of a JSON document.
    ("simulate switch.input_buffer_bytes=-1", lambda n: run(n, switch={"input_buffer_bytes": -1}), ConfigError, "simulation config: switch.input_buffer_bytes: invalid value: integer `-1`, expected u32"),
    (
        "simulate with a hand-written class whose load is a string",
        lambda n: run(n, traffic={**T.uniform(0.1), "load": "0.1"}),
        ConfigError,
        "simulation config: traffic.classes[0].load: invalid type: string \"0.1\", expected f64",
    ),
    ("simulate hca.sl_priority=[300]", lambda n: run(n, hca={"sl_priority": [300]}), ConfigError, "simulation config: hca.sl_priority[0]: invalid value: integer `300`, expected u8"),
    ("traffic load=nan", lambda n: T.uniform(math.nan), ConfigError, "load: expected a finite number, got nan"),
    ("traffic load='0.1'", lambda n: T.uniform("0.1"), ConfigError, "load: expected a number, got '0.1' (str)"),
    ("traffic payload_bytes=2.5", lambda n: T.uniform(0.1, 2.5), ConfigError, "payload_bytes: expected a whole number in 0..=4294967295, got 2.5 (float)"),
    ("traffic payload_bytes=nan", lambda n: T.uniform(0.1, math.nan), ConfigError, "payload_bytes: expected a whole number in 0..=4294967295, got nan (float)"),
    ("traffic sizes -256", lambda n: T.empirical_sizes([(32, 1), (-256, 1)]), ConfigError, "payload_sizes[1]: -256 is out of range 0..=4294967295"),
    ("traffic weight nan", lambda n: T.empirical_sizes([(32, 1), (256, math.nan)]), ConfigError, "payload_size_weights[1]: expected a finite number, got nan"),
    ("traffic trace time_scale=nan", lambda n: T.trace("x.trace", time_scale=math.nan), ConfigError, "time_scale: expected a finite number, got nan"),
    ("topology cable_length_m=-1", lambda n: ib.topology.irregular(**IRREGULAR, cable_length_m=-1), TopologyError, "cable_length_m: -1 is below the minimum 0"),
    ("topology cable_length_m=nan", lambda n: ib.topology.irregular(**IRREGULAR, cable_length_m=math.nan), TopologyError, "cable_length_m: expected a finite number, got nan"),
    ("SubnetManager lmc=2.7", lambda n: ib.SubnetManager(n[0], lmc=2.7), ConfigError, "lmc: expected a whole number in 0..=255, got 2.7 (float)"),
    ("SubnetManager lmc=-1", lambda n: ib.SubnetManager(n[0], lmc=-1), ConfigError, "lmc: -1 is out of range 0..=255"),
    ("SubnetManager lmc=nan", lambda n: ib.SubnetManager(n[0], lmc=math.nan), ConfigError, "lmc: expected a whole number in 0..=255, got nan (float)"),
    ("SubnetManager seed=-1", lambda n: ib.SubnetManager(n[0], seed=-1), ConfigError, "seed: -1 is out of range 0..=18446744073709551615"),
    (
        "SubnetManager minhop with lfts_file",
        lambda n: ib.SubnetManager(n[0], routing="minhop", lfts_file="/does/not/exist.dump"),
        ConfigError,
        "invalid option 'lfts_file': tables to load are read by the 'file' engine only, not by 'minhop': drop the file, or route with 'file'",
    ),
    ("route lid_offset=-1", lambda n: n[1].route("h0", "h1", lid_offset=-1), ConfigError, "lid_offset: -1 is out of range 0..=65535"),
    ("check data_vls=-1", lambda n: n[1].check(data_vls=-1), ConfigError, "data_vls: -1 is out of range 0..=255"),
    ("check data_vls=nan", lambda n: n[1].check(data_vls=math.nan), ConfigError, "data_vls: expected a whole number in 0..=255, got nan (float)"),
    ("check sl=-1", lambda n: n[1].check(sl=-1), ConfigError, "sl: -1 is out of range 0..=255"),
    ("qos.setup connections=2**32", lambda n: ib.qos.setup(*n, connections=2**32), ConfigError, "connections: 4294967296 is out of range 0..=4294967295"),
    ("qos.setup retry_limit=2**64", lambda n: ib.qos.setup(*n, connections=1, retry_limit=2**64), ConfigError, "retry_limit: 18446744073709551616 is out of range 1..=4294967295"),
    ("qos.plan high_limit=2.5", lambda n: ib.qos.plan(*n, [], high_limit=2.5), ConfigError, "high_limit: expected a whole number in 0..=255, got 2.5 (float)"),
    ("qos.plan be_share=nan", lambda n: ib.qos.plan(*n, [], be_share=math.nan), ConfigError, "be_share: expected a finite number, got nan"),
]

PLAN_CASES = [(bw, f"request 1: bandwidth {bw} b/s is out of range; expected 0..=") for bw in (math.nan, math.inf, 1e30)]


@pytest.mark.parametrize("label,call,error,message", API_CASES, ids=[c[0] for c in API_CASES])
def test_api_argument_is_refused_naming_it(net, label, call, error, message):
    with pytest.raises(error) as e:
        call(net)
    assert str(e.value) == message


@pytest.mark.parametrize("bandwidth,message", PLAN_CASES, ids=["nan", "inf", "1e30"])
def test_qos_plan_refuses_a_bandwidth_that_is_not_a_finite_bit_rate(net, bandwidth, message):
    fab, sm = net
    with pytest.raises(ConfigError) as e:
        ib.qos.plan(fab, sm, [("h0", "h1", "DB", bandwidth)])
    assert str(e.value).startswith(message)



def test_only_the_callers_keys_cross_into_the_core(monkeypatch):
    # The preset's keys stay in the core, which lays the caller's over them;
    # the document holds what simulate() was given (and the run's own keys).
    import json

    import ibnetsim as ib

    seen = {}
    real = ib._core.Simulation

    def spy(subnet, text, *args, **kw):
        seen.update(doc=json.loads(text), preset=kw.get("preset"))
        return real(subnet, text, *args, **kw)

    monkeypatch.setattr(ib._core, "Simulation", spy)
    fab = ib.topology.single_switch(2)
    r = ib.simulate(fab, ib.SubnetManager(fab), traffic=ib.traffic.uniform(0.5), time_us=50, preset="martinez2003", switch={"speedup": 2.0})
    assert seen["preset"] == "martinez2003"
    assert set(seen["doc"]) == {"switch", "seed", "warmup_ns", "traffic"} and seen["doc"]["switch"] == {"speedup": 2.0}
    assert r.raw["delivered"] > 0
    with pytest.raises(ConfigError, match=r"simulation config: switch\.speedup: invalid type: string \"fast\""):
        ib.simulate(fab, ib.SubnetManager(fab), traffic=ib.traffic.uniform(0.1), time_us=5, preset="martinez2003", switch={"speedup": "fast"})
