"""The reproduce registry, the paper-vs-ours comparison and the experiment commands."""

import json
from fractions import Fraction
from pathlib import Path
from textwrap import dedent

import pandas as pd
import pytest
from click.testing import CliRunner

from ibnetsim.cli import main
from ibnetsim.experiment import registry, scenario
from ibnetsim.experiment.kinds.tframe import link_rate_bps, t_frame
from ibnetsim.experiment.registry import Value, compare
from ibnetsim.experiment.scenario import ScenarioError


def test_every_entry_and_its_scenarios_are_valid():
    entries = registry.entries()
    assert "alfaro2001-table1" in [e.id for e in entries]
    for e in entries:
        assert e.values and e.reference and e.title
        for path in {*e.scenarios, *e.quick_scenarios}:
            sc = scenario.load(path)
            assert sc.points, path


def test_tframe_by_hand():
    # 64 × 255 × 64 B × 8 bit = 8,355,840 bit; at 2.5 Gb/s that is 3.342336 ms (paper 001 Table 1).
    assert t_frame("1x", "SDR") == Fraction(8_355_840, 2_500_000_000)
    assert float(t_frame("4x", "SDR") * 1000) == 0.835584
    assert float(t_frame("12x", "SDR") * 1000) == 0.278528
    # On the data rate (8b/10b: 2 Gb/s per lane) a frame takes 25 % longer.
    assert t_frame("1x", "SDR", "data") == t_frame("1x", "SDR") * Fraction(5, 4)
    assert link_rate_bps("4x", "FDR", "data") == Fraction(4 * 14_062_500_000 * 64, 66)
    with pytest.raises(ValueError):
        link_rate_bps("1x", "SDR", "baud")


def test_tframe_rates_agree_with_the_rust_link_model():
    import ibnetsim as ib

    for width in ("1x", "4x", "12x"):
        for speed in ("SDR", "QDR", "FDR", "EDR"):
            fab = ib.topology.single_switch(1, link_width=width, link_speed=speed)
            rust = float(fab.links["data_rate_gbps"].iloc[0])
            assert rust == pytest.approx(float(link_rate_bps(width, speed, "data") / 10**9), rel=1e-12)


def test_alfaro_table1_reproduces_exactly(tmp_path):
    from ibnetsim.experiment import make_executor

    rep = registry.reproduce("alfaro2001-table1", quick=True, executor=make_executor("serial"), out_dir=tmp_path / "r", progress=False)
    assert rep.ok
    rows = {r["quantity"]: r for r in rep.rows()}
    assert rows["T_frame, 1x (2.5 Gb/s)"]["ours"] == 3.342336
    assert rows["T_frame, 12x (30 Gb/s)"]["ours"] == 0.278528
    assert all(r["verdict"] == "within" and r["diff"] == 0 for r in rows.values())
    md = (tmp_path / "r" / "report.md").read_text()
    assert "| T_frame, 4x (10 Gb/s) | Table 1, row 4x | 0.835584 | 0.835584 | ms | 0 | 0 % |" in md
    assert "![t_frame](figures/t_frame.png)" in md
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["ok"] is True and len(data["values"]) == 4
    page = (tmp_path / "r" / "report.html").read_text()
    assert "Paper vs ours (alfaro2001-table1, quick)" in page and "3.342336" in page


ROWS = pd.DataFrame(
    {
        "status": ["ok"] * 6 + ["error"],
        "seed": [1, 2, 1, 2, 1, 2, 3],
        "engine": ["updn", "updn", "minhop", "minhop", "dor", "dor", "updn"],
        "size": [8, 8, 8, 8, 16, 16, 8],
        "bound": [0.2, 0.4, 0.5, 0.6, 1.0, 1.0, 99.0],
    }
)


def value(**kw) -> Value:
    base = dict(quantity="q", citation="c", paper=0.3, column="bound", where={"engine": "updn"})
    base.update(kw)
    return Value(**base)


def test_compare_verdicts():
    within, outside, context, missing, single, expr, anyof = compare(
        (
            value(tolerance_abs=1e-12),  # mean 0.3 (the failed row is ignored)
            value(paper=0.5, tolerance_rel=0.1),
            value(paper=0.5),
            value(where={"engine": "ftree"}, tolerance_abs=1.0),
            value(aggregate="single", tolerance_abs=1.0),
            value(column="bound * 10", aggregate="max", paper=4.0, tolerance_abs=0.0),
            value(where={"engine": ["updn", "minhop"]}, aggregate="min", paper=0.2, tolerance_abs=0.0),
        ),
        ROWS,
    )
    assert (within.ours, within.n, within.verdict) == (pytest.approx(0.3), 2, "within")
    assert outside.verdict == "outside" and outside.rel == pytest.approx(-0.4)
    assert context.verdict == "context"
    assert missing.verdict == "missing" and missing.problem == "no rows"
    assert single.verdict == "missing" and "2 rows where one was expected" in single.problem
    assert (expr.ours, expr.verdict) == (4.0, "within")
    assert (anyof.ours, anyof.n) == (0.2, 4)


def test_compare_peak_over_a_sweep():
    # Per engine, the largest bound over seeds (the swept key here): updn 0.4,
    # minhop 0.6; their ratio 1.5; dor's curve alone peaks at 1.0.
    rows = ROWS.assign(load=ROWS["seed"])
    ratio, single = compare(
        (
            value(where={"engine": "minhop"}, denominator_where={"engine": "updn"}, match=("size",), peak_over="load", paper=1.5, tolerance_abs=1e-12),
            value(where={"engine": "dor"}, match=("size",), peak_over="load", aggregate="single", paper=1.0, tolerance_abs=0.0),
        ),
        rows,
    )
    assert (ratio.ours, ratio.n, ratio.verdict) == (pytest.approx(1.5), 1, "within")
    assert (single.ours, single.verdict) == (1.0, "within")
    (bad,) = compare((value(match=("size",), peak_over="nope"),), rows)
    assert bad.verdict == "missing" and "peak_over: no column 'nope'" in bad.problem


def test_compare_range_tolerance():
    # updn's mean bound is 0.3: inside [0.25, 0.35], outside [0.31, 0.4].
    inside, above = compare((value(tolerance_range=(0.25, 0.35)), value(tolerance_range=(0.31, 0.4))), ROWS)
    assert (inside.verdict, above.verdict) == ("within", "outside")
    assert inside.value.tolerance_text() == "in [0.25, 0.35]"


def test_a_known_deviation_is_marked_and_does_not_fail_the_entry():
    # updn's mean bound is 0.3: outside 0.5 ± 10 %; with the cause given it is
    # a known deviation, and the same value within its tolerance says so.
    known, back_within = compare(
        (value(paper=0.5, tolerance_rel=0.1, deviation="a model difference"), value(paper=0.3, tolerance_abs=0.01, deviation="unused")),
        ROWS,
    )
    assert (known.verdict, back_within.verdict) == ("known deviation", "within")
    from ibnetsim.experiment.registry import Report, verdict_summary

    e = registry.Entry(id="x", title="t", paper="000", reference="r", scenario=Path("s"), quick_scenario=Path("s"), notes="", values=(known.value,), path=Path("x.toml"))
    rep = Report(e, False, [known], Path("."), [], None)
    assert rep.ok
    (row,) = rep.rows()
    assert (row["verdict"], row["note"]) == ("known deviation", "a model difference")
    assert verdict_summary(rep.rows()) == "0 of 1 values with a tolerance are within it. 1 is a known deviation, explained in its note."
    outside = Report(e, False, compare((value(paper=0.5, tolerance_rel=0.1),), ROWS), Path("."), [], None)
    assert not outside.ok


def test_compare_ratio_of_matched_rows():
    # minhop ÷ updn per seed: 0.5/0.2 = 2.5 and 0.6/0.4 = 1.5, mean 2.0.
    (r,) = compare(
        (value(where={"engine": "minhop"}, denominator_where={"engine": "updn"}, match=("seed", "size"), paper=2.0, tolerance_abs=1e-12),),
        ROWS,
    )
    assert (r.ours, r.n, r.verdict) == (pytest.approx(2.0), 2, "within")


def write_entry(d: Path, body: str, name: str = "x-1") -> Path:
    (d / "x.scenario.toml").write_text('kind = "tframe"\n')
    p = d / f"{name}.toml"
    p.write_text(dedent(body))
    return p


GOOD = """\
id = "x-1"
title = "t"
paper = "001"
reference = "r"
scenario = "x.scenario.toml"

[[value]]
quantity = "q"
citation = "c"
paper = 1.0
column = "t_frame_ms"
"""


def test_entry_errors_name_file_line_and_key(tmp_path):
    write_entry(tmp_path, GOOD)
    assert [e.id for e in registry.entries(tmp_path)] == ["x-1"]
    write_entry(tmp_path, GOOD + "\n[[value]]\nquantity = \"q2\"\ncitation = \"c\"\npaper = 2\ncolumn = \"c\"\naggregate = \"avg\"\n")
    with pytest.raises(ScenarioError) as e:
        registry.entry("x-1", tmp_path)
    assert e.value.line == 18 and "unknown aggregate 'avg'" in str(e.value)
    write_entry(tmp_path, GOOD.replace('title = "t"', 'titel = "t"'))
    with pytest.raises(ScenarioError) as e:
        registry.entry("x-1", tmp_path)
    assert (e.value.line, e.value.key) == (2, "titel")
    write_entry(tmp_path, GOOD.replace('id = "x-1"', 'id = "y-2"'))
    with pytest.raises(ScenarioError, match="must match the file name"):
        registry.entry("x-1", tmp_path)
    with pytest.raises(KeyError, match="no experiment 'nope'"):
        registry.entry("nope", tmp_path)
    # A deviation is a reason, and only on a value with a tolerance.
    for extra in ('deviation = ""\ntolerance = { abs = 0.1 }\n', "deviation = 3\ntolerance = { abs = 0.1 }\n", 'deviation = "why"\n'):
        write_entry(tmp_path, GOOD + extra)
        with pytest.raises(ScenarioError, match="expected the reason ours is outside the tolerance") as e:
            registry.entry("x-1", tmp_path)
        assert (e.value.key, e.value.line) == ("value.#1.deviation", 12)


# --------------------------------------------------------------------------- commands
def test_reproduce_list_and_run(tmp_path):
    r = CliRunner().invoke(main, ["reproduce", "--list"])
    assert r.exit_code == 0 and "alfaro2001-table1" in r.output
    r = CliRunner().invoke(main, ["reproduce", "alfaro2001-table1", "--quick", "--executor", "serial", "--no-progress", "-o", str(tmp_path / "r")])
    assert r.exit_code == 0, r.output
    assert "3.342336 ms" in r.output and "within" in r.output
    r = CliRunner().invoke(main, ["reproduce", "nope"])
    assert r.exit_code == 2 and "no experiment 'nope'" in r.output


def test_sweep_and_results_commands(tmp_path):
    s = tmp_path / "s.toml"
    s.write_text('kind = "synthetic"\nplugins = ["experiment_plugin"]\nseed = [1, 2, 3]\n[synthetic]\nfail_seed = 2\n')
    runner = CliRunner()
    r = runner.invoke(main, ["sweep", str(s), "--dry-run"])
    assert r.exit_code == 0 and "3 points" in r.output and "axis seed: 1, 2, 3" in r.output
    r = runner.invoke(main, ["sweep", str(s), "-o", str(tmp_path / "out"), "--executor", "serial", "--no-progress"])
    assert r.exit_code == 1, r.output  # one point failed
    assert "3 points, 0 already done, 2 ran, 1 failed" in r.output
    assert "RuntimeError: synthetic failure at seed 2" in r.output
    r = runner.invoke(main, ["results", str(tmp_path / "out")])
    assert r.exit_code == 0
    lines = [line for line in r.output.splitlines() if "│" in line]
    assert len(lines) == 3 and "error" in lines[1] and "ok" in lines[0]
    r = runner.invoke(main, ["results", str(tmp_path / "out"), "--failed", "--csv", str(tmp_path / "all.csv")])
    assert "synthetic failure at seed 2" in r.output
    assert len(pd.read_csv(tmp_path / "all.csv")) == 3
    r = runner.invoke(main, ["results", str(tmp_path / "out"), "--columns", "seed,nope"])
    assert r.exit_code == 2 and "no column nope" in r.output


def test_sweep_command_rejects_bad_scenario_with_file_and_line(tmp_path):
    s = tmp_path / "bad.toml"
    s.write_text('kind = "tframe"\n[tframe]\nentries = 100\n')
    r = CliRunner().invoke(main, ["sweep", str(s), "-o", str(tmp_path / "out")])
    assert r.exit_code == 2
    assert f"error: {s}:3: tframe.entries: 100 is above the maximum 64" in r.output
    assert not (tmp_path / "out").exists()  # nothing ran
    r = CliRunner().invoke(main, ["sweep", str(s), "--scheduler", "tcp://x:1"])
    assert r.exit_code == 2 and "--scheduler needs --executor dask" in r.output


def test_example_scenarios_are_valid():
    examples = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.toml"))
    assert examples
    for p in examples:
        assert scenario.load(p).points, p


def test_martinez_quick_reproduces_table2_for_small_networks(tmp_path):
    from ibnetsim.experiment import make_executor

    rep = registry.reproduce("martinez2003-updn-vs-minhop", quick=True, executor=make_executor("local", workers=2), out_dir=tmp_path / "r", progress=False)
    verdicts = {r["quantity"]: r["verdict"] for r in rep.rows()}
    table2_small = [q for q in verdicts if q.startswith(("8 switches", "16 switches")) and "% of" in q]
    assert len(table2_small) == 12
    assert all(verdicts[q] == "within" for q in table2_small), rep.markdown()
    # The quick sweep has no 32- or 64-switch networks: those values are not judged.
    assert {v for q, v in verdicts.items() if q.startswith(("32 ", "64 "))} == {"not in quick run"}
    # Table 1 rows are context (a static bound ratio against a simulated factor), computed on matched topologies.
    ratios = [r for r in rep.rows() if "minimal ÷ up*/down*" in r["quantity"] and r["ours"] is not None]
    assert len(ratios) == 3 and all(r["verdict"] == "context" and r["n"] == 10 and r["ours"] > 0 for r in ratios)
    assert rep.ok


def test_reference_page_documents_every_entry_key():
    page = (Path(__file__).resolve().parent.parent / "docs" / "experiments.md").read_text(encoding="utf-8")
    entry_part, value_part = page.split("## `[[value]]` keys")
    for k in registry._ENTRY_KEYS:
        assert f"| `{k}` |" in entry_part, f"docs/experiments.md does not document entry key `{k}`"
    for k in registry._VALUE_KEYS:
        assert f"| `{k}` |" in value_part, f"docs/experiments.md does not document [[value]] key `{k}`"
    for a in registry.AGGREGATES:
        assert f"`{a}`" in value_part


def test_martinez2003_fully_adaptive_quick_reproductions(tmp_path):
    # Paper 002 by simulation and from the fa engine's tables, in CI form:
    # Table 2's 8- and 16-switch rows, Table 1's uniform 32 B factors for 8 and
    # 16 switches (five topologies each), Fig. 3's 8-switch factor.
    from ibnetsim.experiment import make_executor

    expected = {"martinez2003-table2": 27, "martinez2003-table1": 2, "martinez2003-fig3": 1}
    for exp_id, judged in expected.items():
        rep = registry.reproduce(exp_id, quick=True, executor=make_executor("local", workers=2), out_dir=tmp_path / exp_id, progress=False)
        rows = rep.rows()
        within = [r for r in rows if r["verdict"] == "within"]
        assert len(within) == judged and rep.ok, rep.markdown()
        assert not rep.summary.failed, rep.summary.errors
    # The factors themselves: adaptive routing gains more on larger networks.
    t1 = {r["quantity"]: r["ours"] for r in registry.reproduce("martinez2003-table1", quick=True, out_dir=tmp_path / "martinez2003-table1", progress=False).rows()}
    small = t1["8 switches, MR/LS 2/4, Unif., 32 B: throughput factor, Avg"]
    large = t1["16 switches, MR/LS 2/4, Unif., 32 B: throughput factor, Avg"]
    assert 1.0 < small < large
