"""Scenario files: Cartesian expansion, validation errors (key, file, line), point keys, reference page."""

import os
from pathlib import Path
from textwrap import dedent

import pytest

from ibnetsim.errors import ConfigError
from ibnetsim.experiment import scenario as scn
from ibnetsim.experiment.scenario import ScenarioError, key_lines
from ibnetsim.experiment.schema import render_reference

REPO = Path(__file__).resolve().parent.parent

IRREGULAR = """\
kind = "routing_stats"
seed = [1, 2, 3]

[fabric]
kind = "irregular"
switches = [8, 16]
switch_ports = 8
links_per_switch = 4
hosts_per_switch = 4

[routing]
engine = ["updn", "minhop"]
"""


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(dedent(text))
    return p


def err(tmp_path: Path, text: str) -> ScenarioError:
    p = write(tmp_path, text)
    with pytest.raises(ScenarioError) as e:
        scn.load(p)
    assert e.value.file == str(p)
    assert str(e.value).startswith(f"{p}:")
    return e.value


# --------------------------------------------------------------------------- expansion
def test_cartesian_expansion_follows_file_order(tmp_path):
    sc = scn.load(write(tmp_path, IRREGULAR))
    assert [a.name for a in sc.axes] == ["seed", "fabric.switches", "routing.engine"]
    assert len(sc.points) == 3 * 2 * 2
    # The last axis varies fastest, like nested loops in reading order.
    assert [(p.swept["seed"], p.swept["fabric.switches"], p.swept["routing.engine"]) for p in sc.points[:4]] == [
        (1, 8, "updn"),
        (1, 8, "minhop"),
        (1, 16, "updn"),
        (1, 16, "minhop"),
    ]
    assert [p.index for p in sc.points] == list(range(12))
    assert len({p.key for p in sc.points}) == 12


def test_points_are_fully_resolved_with_defaults(tmp_path):
    sc = scn.load(write(tmp_path, IRREGULAR))
    p = sc.points[5]  # seed 2, switches 8, minhop
    assert p.config["seed"] == 2
    f = p.config["fabric"]
    assert f == {
        "kind": "irregular",
        "switches": 8,
        "switch_ports": 8,
        "hosts_per_switch": 4,
        "links_per_switch": 4,
        "total_links": None,
        "independent_cycles": None,
        "seed": 2,  # the topology seed follows the point's seed
        "link_width": "1x",
        "link_speed": "SDR",
        "cable_length_m": 1.0,
    }
    assert p.config["routing"] == {"engine": "minhop", "lmc": 0, "root": [], "lfts_file": None, "fdbs_key": None, "seed": 2, "max_vls": None, "lash_start_vl": None, "torus_config": None, "lid_order": "ibnetsim"}
    # [check] was not written but the kind reads it: defaults.
    assert p.config["check"] == {"data_vls": 1, "qos_file": None, "spread_lmc": False}


def test_list_typed_key_sweeps_with_list_of_lists(tmp_path):
    sc = scn.load(
        write(
            tmp_path,
            """\
            kind = "routing_stats"
            [fabric]
            kind = "mesh"
            dims = [[4, 4], [3, 3, 3]]
            torus = [false, true]
            [routing]
            engine = "dor"
            """,
        )
    )
    assert [p.config["fabric"]["dims"] for p in sc.points] == [[4, 4], [4, 4], [3, 3, 3], [3, 3, 3]]
    single = scn.loads('kind = "routing_stats"\n[fabric]\nkind = "mesh"\ndims = [3, 3]\n')
    assert len(single.points) == 1 and single.points[0].config["fabric"]["dims"] == [3, 3]
    assert single.axes == []


def test_explicit_fabric_seed_is_not_tied_to_the_point_seed(tmp_path):
    text = IRREGULAR.replace("hosts_per_switch = 4", "hosts_per_switch = 4\nseed = 42")
    sc = scn.load(write(tmp_path, text))
    assert {p.config["fabric"]["seed"] for p in sc.points} == {42}
    assert {p.config["seed"] for p in sc.points} == {1, 2, 3}


def test_point_key_is_stable_and_ignores_name_and_location(tmp_path):
    a = scn.load(write(tmp_path, IRREGULAR))
    (tmp_path / "elsewhere").mkdir()
    b = scn.load(write(tmp_path / "elsewhere", 'name = "renamed"\ndescription = "x"\n' + IRREGULAR))
    assert [p.key for p in a.points] == [p.key for p in b.points]
    c = scn.load(write(tmp_path, IRREGULAR.replace("switch_ports = 8", "switch_ports = 10"), "c.toml"))
    assert not {p.key for p in a.points} & {p.key for p in c.points}


def test_file_paths_are_keyed_by_content(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        (tmp_path / d / "fab.net").write_text("same content\n")
    text = 'kind = "routing_stats"\n[fabric]\nkind = "file"\npath = "fab.net"\n'
    ka = scn.load(write(tmp_path / "a", text)).points[0]
    kb = scn.load(write(tmp_path / "b", text)).points[0]
    assert ka.config["fabric"]["path"] == str((tmp_path / "a" / "fab.net").resolve())
    assert ka.key == kb.key
    (tmp_path / "b" / "fab.net").write_text("other content\n")
    assert scn.load(tmp_path / "b" / "s.toml").points[0].key != ka.key


def test_routing_max_vls_bounds_dfsssp_layers(tmp_path):
    import ibnetsim as ib
    from ibnetsim.experiment.kinds.routing_stats import build_fabric, build_subnet

    # A ring of six switches needs two layers (docs/routing.md): one is refused, naming max_vls.
    text = '{}[fabric]\nkind = "ring"\nswitches = 6\n[routing]\nengine = "dfsssp"\nmax_vls = {}\n'
    two = scn.load(write(tmp_path, text.format('kind = "routing_stats"\n', 2))).points[0]
    fab = build_fabric(two.config["fabric"])
    assert build_subnet(fab, two.config["routing"]).routing == "dfsssp"
    one = scn.load(write(tmp_path, text.format('kind = "routing_stats"\n', 1))).points[0]
    assert one.key != two.key
    with pytest.raises(ib.RoutingError, match="max.vls"):
        build_subnet(fab, one.config["routing"])
    with pytest.raises(ScenarioError, match="routing.max_vls"):
        scn.load(write(tmp_path, text.format('kind = "routing_stats"\n', 16)))


def test_routing_lash_start_vl_reaches_lash(tmp_path):
    from ibnetsim.experiment.kinds.routing_stats import build_fabric, build_subnet

    text = 'kind = "routing_stats"\n[fabric]\nkind = "ring"\nswitches = 4\n[routing]\nengine = "lash"\nmax_vls = 4\nlash_start_vl = {}\n'
    p = scn.load(write(tmp_path, text.format(2))).points[0]
    sm = build_subnet(build_fabric(p.config["fabric"]), p.config["routing"])
    assert sm.routing == "lash" and "on SLs 2-3" in sm.notes[0]
    with pytest.raises(ScenarioError, match="routing.lash_start_vl"):
        scn.load(write(tmp_path, text.format(15)))


def test_routing_torus_config_reaches_torus_2qos(tmp_path):
    import ibnetsim as ib
    from ibnetsim.experiment.kinds.routing_stats import build_fabric, build_subnet

    fab = ib.topology.torus([3, 3], hosts_per_switch=1)
    g = fab.nodes.set_index("name")["guid"]
    (tmp_path / "t.conf").write_text(f"torus 3 3 1\nxp_link {g['sw0']} {g['sw1']}\nyp_link {g['sw0']} {g['sw3']}\n")
    text = 'kind = "routing_stats"\n[fabric]\nkind = "mesh"\ndims = [3, 3]\ntorus = true\n[routing]\nengine = "torus-2qos"\ntorus_config = "t.conf"\n'
    p = scn.load(write(tmp_path, text)).points[0]
    assert p.config["routing"]["torus_config"] == str((tmp_path / "t.conf").resolve())
    sm = build_subnet(build_fabric(p.config["fabric"]), p.config["routing"])
    # The name in any case, as OpenSM takes it.
    assert sm.routing == "torus-2QoS" and sm.notes == ["torus-2QoS: torus 3x3x1 from seed switch 'sw0' at (0,0,0)"]


def test_a_file_fabric_takes_link_defaults_and_a_cable_length_file(tmp_path):
    import ibnetsim as ib
    from ibnetsim.experiment.kinds.routing_stats import build_fabric

    ib.topology.ring(3).write(tmp_path / "fab.net")
    (tmp_path / "len.txt").write_text("sw1 2 12.5\n")
    text = (
        'kind = "routing_stats"\n[fabric]\nkind = "file"\npath = "fab.net"\n'
        'cable_length_m = 4.0\ncable_lengths = "len.txt"\n'
    )
    point = scn.load(write(tmp_path, text)).points[0]
    assert point.config["fabric"]["cable_lengths"] == str((tmp_path / "len.txt").resolve())
    lengths = sorted(build_fabric(point.config["fabric"]).links["length_m"])
    assert lengths[-1] == 12.5 and set(lengths[:-1]) == {4.0}
    # The length file is part of the point's key, by content.
    (tmp_path / "len.txt").write_text("sw1 2 13\n")
    assert scn.load(tmp_path / "s.toml").points[0].key != point.key


def test_an_ibnl_directory_is_keyed_by_its_netlists_only(tmp_path):
    (tmp_path / "fab.net").write_text("content\n")
    lib = tmp_path / "lib"
    (lib / "deep").mkdir(parents=True)
    (lib / "A.ibnl").write_text("SYSTEM A\n")
    text = 'kind = "routing_stats"\n[fabric]\nkind = "file"\npath = "fab.net"\nibnl_dirs = ["lib"]\n'
    key = scn.load(write(tmp_path, text)).points[0].key
    # What the core does not read (other files, subdirectories) does not change the key ...
    (lib / "notes.txt").write_text("x")
    (lib / "deep" / "B.ibnl").write_text("SYSTEM B\n")
    assert scn.load(tmp_path / "s.toml").points[0].key == key
    # ... a netlist it reads does.
    (lib / "A.ibnl").write_text("SYSTEM A2\n")
    assert scn.load(tmp_path / "s.toml").points[0].key != key


def test_files_that_are_not_regular_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "s.toml"
    os.mkfifo(fifo)
    with pytest.raises(ScenarioError, match="not a regular file .*; give a scenario file"):
        scn.load(fifo)
    sub = tmp_path / "sub"
    sub.mkdir()
    os.mkfifo(sub / "fab.net")
    e = err(sub, 'kind = "routing_stats"\n[fabric]\nkind = "file"\npath = "fab.net"\n')
    assert (e.line, e.key) == (4, "fabric.path") and "not a regular file" in str(e)
    (sub / "s.toml").write_bytes(b'kind = "routing_stats"\n# caf\xe9\n')
    with pytest.raises(ScenarioError, match=r"s.toml:2: not UTF-8 text: byte 0xe9 at column 6"):
        scn.load(sub / "s.toml")


# --------------------------------------------------------------------------- validation
def test_unknown_top_level_key_names_line(tmp_path):
    e = err(tmp_path, 'kind = "tframe"\n\nsed = [1, 2]\n')
    assert (e.line, e.key) == (3, "sed")
    assert "did you mean `seed`" in str(e)


def test_unknown_key_in_section_names_line(tmp_path):
    e = err(tmp_path, IRREGULAR.replace("switch_ports = 8", "switch_prots = 8"))
    assert (e.line, e.key) == (7, "fabric.switch_prots")
    assert "switch_ports" in str(e)


def test_key_of_another_variant_is_unknown(tmp_path):
    e = err(tmp_path, 'kind = "routing_stats"\n[fabric]\nkind = "mesh"\ndims = [4]\nswitches = 4\n')
    assert (e.line, e.key) == (5, "fabric.switches")
    assert 'kind = "mesh"' in str(e)


def test_wrong_type_names_line_and_expectation(tmp_path):
    e = err(tmp_path, IRREGULAR.replace("switch_ports = 8", 'switch_ports = "eight"'))
    assert (e.line, e.key) == (7, "fabric.switch_ports")
    assert "expected an integer, got a string" in str(e)
    e = err(tmp_path, IRREGULAR.replace("switches = [8, 16]", "switches = [8, 16.5]"))
    assert (e.line, e.key) == (6, "fabric.switches")
    assert "got a float (16.5)" in str(e)


def test_value_out_of_range_and_unknown_choice(tmp_path):
    e = err(tmp_path, IRREGULAR.replace('engine = ["updn", "minhop"]', "engine = \"updn\"\nlmc = 9"))
    assert (e.line, e.key) == (13, "routing.lmc")
    assert "above the maximum 7" in str(e)
    e = err(tmp_path, IRREGULAR.replace('"minhop"]', '"spf"]'))
    assert (e.line, e.key) == (12, "routing.engine")
    assert "unknown value \"spf\"" in str(e) and "minhop" in str(e)


def test_range_bounds_are_inclusive_and_booleans_are_not_integers(tmp_path):
    # IBA allows LMC 0 to 7: both ends are valid values, one past either end is not.
    for lmc in (0, 7):
        sc = scn.load(write(tmp_path, IRREGULAR.replace('engine = ["updn", "minhop"]', f'engine = "updn"\nlmc = {lmc}')))
        assert {p.config["routing"]["lmc"] for p in sc.points} == {lmc}
    e = err(tmp_path, IRREGULAR.replace('engine = ["updn", "minhop"]', 'engine = "updn"\nlmc = -1'))
    assert (e.line, e.key) == (13, "routing.lmc")
    assert "below the minimum 0" in str(e)
    # TOML's true is not the integer 1 (Python's bool is an int subclass).
    e = err(tmp_path, IRREGULAR.replace('engine = ["updn", "minhop"]', 'engine = "updn"\nlmc = true'))
    assert (e.line, e.key) == (13, "routing.lmc")
    assert "expected an integer, got a boolean" in str(e)


SIMULATE = """\
kind = "simulate"
[fabric]
kind = "irregular"
switches = 4
switch_ports = 6
links_per_switch = 2
hosts_per_switch = 2
[routing]
engine = "updn"
lmc = 1
[simulation]
time_us = 100.0
selection = ["deterministic", "adaptive-by-credits", "lfu"]
[traffic]
load = 0.1
"""


def test_every_selection_policy_is_a_choice(tmp_path):
    sc = scn.load(write(tmp_path, SIMULATE))
    assert [p.config["simulation"]["selection"] for p in sc.points] == ["deterministic", "adaptive-by-credits", "lfu"]
    e = err(tmp_path, SIMULATE.replace('"lfu"]', '"lru"]'))
    assert (e.line, e.key) == (13, "simulation.selection")
    assert 'unknown value "lru"' in str(e) and "lfu" in str(e)


def test_impossible_combination_names_key_line_and_point(tmp_path):
    e = err(tmp_path, IRREGULAR.replace("links_per_switch = 4", "links_per_switch = [4, 6]"))
    assert (e.line, e.key) == (8, "fabric.links_per_switch")
    assert "links_per_switch (6) + hosts_per_switch (4) exceeds switch_ports (8)" in str(e)
    assert "fabric.links_per_switch = 6" in str(e)
    e = err(tmp_path, IRREGULAR.replace("switches = [8, 16]", "switches = 5").replace("links_per_switch = 4", "links_per_switch = 3"))
    assert e.key == "fabric.links_per_switch" and "odd" in str(e)
    e = err(tmp_path, IRREGULAR.replace("links_per_switch = 4", "links_per_switch = 4\ntotal_links = 20"))
    assert e.key == "fabric.links_per_switch" and "exactly one of" in str(e)


def test_engine_file_needs_tables(tmp_path):
    e = err(tmp_path, IRREGULAR.replace('engine = ["updn", "minhop"]', 'engine = "file"'))
    assert e.key == "routing.lfts_file" and "needs lfts_file" in str(e)
    assert e.line == 11  # the [routing] header: the key itself is absent


def test_dor_on_irregular_fabric_is_impossible(tmp_path):
    e = err(tmp_path, IRREGULAR.replace('engine = ["updn", "minhop"]', 'engine = ["updn", "dor"]'))
    assert (e.line, e.key) == (12, "routing.engine")
    assert "dor" in str(e) and "routing.engine = \"dor\"" in str(e)


def test_section_not_read_by_kind(tmp_path):
    e = err(tmp_path, 'kind = "tframe"\n[routing]\nengine = "updn"\n')
    assert (e.line, e.key) == (2, "routing")
    assert "not read by point kind 'tframe'" in str(e)


def test_non_sweepable_and_degenerate_lists(tmp_path):
    e = err(tmp_path, 'kind = "routing_stats"\n[fabric]\nkind = ["mesh", "ring"]\n')
    assert (e.line, e.key) == (3, "fabric.kind")
    e = err(tmp_path, 'kind = "tframe"\nseed = []\n')
    assert (e.line, e.key) == (2, "seed") and "empty" in str(e)
    e = err(tmp_path, 'kind = "tframe"\nseed = [1, 2, 1]\n')
    assert (e.line, e.key) == (2, "seed") and "repeats the value 1" in str(e)


def test_missing_required_keys(tmp_path):
    e = err(tmp_path, 'kind = "routing_stats"\n[fabric]\nkind = "irregular"\nswitches = 8\n')
    assert e.key == "fabric" and e.line == 2 and "switch_ports" in str(e)
    e = err(tmp_path, 'kind = "routing_stats"\n')
    assert e.key == "fabric" and "needs a [fabric] section" in str(e)
    e = err(tmp_path, 'seed = 1\n')
    assert e.key == "kind" and "routing_stats" in str(e)


def test_missing_file_names_line(tmp_path):
    e = err(tmp_path, 'kind = "routing_stats"\n[fabric]\nkind = "file"\npath = "nope.net"\n')
    assert (e.line, e.key) == (4, "fabric.path") and "no such file" in str(e)


def test_invalid_toml_names_line(tmp_path):
    e = err(tmp_path, 'kind = "tframe"\n[tframe]\nlink_width = "1x\n')
    assert e.line == 3 and "invalid TOML" in str(e)


def test_inline_tables_report_the_inner_key_line(tmp_path):
    e = err(tmp_path, 'kind = "tframe"\n\ntframe = { link_width = "1x", entries = 65 }\n')
    assert (e.line, e.key) == (3, "tframe.entries")
    e = err(tmp_path, 'kind = "routing_stats"\nfabric = { kind = "mesh", dims = [0, 2], torus = true }\n')
    assert (e.line, e.key) == (2, "fabric.dims") and "at least 1" in str(e)


def test_scenario_error_is_a_config_error(tmp_path):
    e = err(tmp_path, 'kind = "nope"\n')
    assert isinstance(e, ConfigError) and (e.line, e.key) == (1, "kind")


def test_key_lines_scanner():
    text = dedent(
        """\
        # comment = 1
        kind = "x"
        desc = \"\"\"
        fake = 3
        \"\"\"
        [a.b]
        c = 1  # d = 2
        e = { f = 1, g = { h = 2 } }
        [[v]]
        w = 1
        [[v]]
        w = 2
        "q.r" = 3
        """
    )
    lines = key_lines(text)
    assert lines[("kind",)] == 2
    assert ("fake",) not in lines and ("comment",) not in lines and ("a", "b", "d") not in lines
    assert lines[("a", "b", "c")] == 7
    assert lines[("a", "b", "e", "g", "h")] == 8
    assert lines[("v", "#1", "w")] == 10 and lines[("v", "#2", "w")] == 12
    assert lines[("v", "#2", "q.r")] == 13


# --------------------------------------------------------------------------- reference page
def test_reference_page_matches_schema():
    page = REPO / "docs" / "scenario.md"
    assert page.read_text(encoding="utf-8") == render_reference(), (
        "docs/scenario.md is out of date: python -m ibnetsim.experiment.schema docs/scenario.md"
    )


def test_reference_page_documents_every_key():
    from ibnetsim.experiment import schema

    page = render_reference()
    for k in schema.TOP_LEVEL:
        assert f"| `{k.name}` |" in page
    for sec in schema.sections().values():
        if sec.name in ("synthetic", "fake", "shares"):  # test plugin sections
            continue
        for k in sec.keys:
            assert f"| `{sec.name}.{k.name}` |" in page
        for keys in sec.variants.values():
            for k in keys:
                assert f"| `{sec.name}.{k.name}` |" in page


def test_routing_engine_chains_are_checked_member_by_member(tmp_path):
    sc = scn.load(write(tmp_path, IRREGULAR.replace('engine = ["updn", "minhop"]', 'engine = ["dfsssp,updn", "sssp"]')))
    assert sorted({p.config["routing"]["engine"] for p in sc.points}) == ["dfsssp,updn", "sssp"]
    e = err(tmp_path, IRREGULAR.replace('"minhop"]', '"dfsssp, nosuch"]'))
    assert (e.line, e.key) == (12, "routing.engine")
    assert 'unknown value "nosuch" in the chain "dfsssp, nosuch"' in str(e) and "minhop" in str(e)
