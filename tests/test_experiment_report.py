"""The reports of `ibnetsim reproduce` and `ibnetsim report`: what they say and how they print it.

Each test is a regression test for a defect readers reported (issue 16):
notes, reference and command missing from report.html, raw numbers, overlapping
figure labels, no paper values on the figures.
"""

import html
import itertools
import json
import re
from pathlib import Path
from textwrap import dedent

import matplotlib.pyplot as plt
import pytest
from click.testing import CliRunner

from ibnetsim.cli import main
from ibnetsim.experiment import loads_scenario, make_executor, plots, registry, run_sweep
from ibnetsim.experiment.numfmt import exact, number, percent, significant_digits
from ibnetsim.experiment.report import write_html_report


def sweep(tmp_path: Path, text: str, name: str = "out") -> Path:
    sc = loads_scenario(dedent(text), path=tmp_path / f"{name}.toml")
    run_sweep(sc, tmp_path / name, make_executor("serial"), progress=False)
    return tmp_path / name


@pytest.fixture
def drawn(monkeypatch):
    """The figures plot_results draws, by name, instead of files."""
    figs: dict[str, plt.Figure] = {}

    def keep(fig, out, name, formats):
        figs[name] = fig
        return []

    monkeypatch.setattr(plots, "_save", keep)
    # The tests keep every figure open to look at it.
    monkeypatch.setitem(plt.rcParams, "figure.max_open_warning", 0)
    yield figs
    for f in figs.values():
        plt.close(f)


# --------------------------------------------------------------------------- numbers
def test_numbers_print_with_significant_digits_and_separators():
    assert number(57.14285714) == "57.14"
    assert number(5.000250013e-05) == "5e-05"
    assert number(None) == number(float("nan")) == "—"
    assert number(256.0) == "256" and number(12000.0) == "12,000" and number(12000) == "12,000"
    assert number(12345.678) == "12,346"  # past the digits asked for: whole, never 1.235e+04
    assert number(999.96) == "1,000"
    assert number(-0.1722, 3, signed=True) == "-0.172" and number(0.0023, 3, signed=True) == "+0.0023"
    assert number(0.0, signed=True) == "0"
    assert exact(3.342336) == "3.342336" and exact(256.0) == "256" and exact(16320.0) == "16,320"
    assert percent(-0.4) == "-40 %" and percent(0.003) == "+0.3 %" and percent(0.18812) == "+18.8 %"
    assert percent(0.0) == "0 %" and percent(None) == "—"
    assert [significant_digits(x) for x in (0.769, 12000.0, 3.342336, 57.14, 1.0, 0.0)] == [3, 2, 7, 4, 1, 1]


def test_ours_gets_one_digit_more_than_the_paper():
    row = {"paper": 57.14, "ours": 57.142857142857, "diff": 0.002857142857, "rel_diff": 5.0e-05, "n": 10}
    assert registry.display_row(row) == {"paper": "57.14", "ours": "57.143", "diff": "+0.00286", "relative": "+0.005 %", "n": "10"}
    missing = {"paper": 256.0, "ours": None, "diff": None, "rel_diff": None, "n": 0}
    assert registry.display_row(missing) == {"paper": "256", "ours": "—", "diff": "—", "relative": "—", "n": "0"}


def test_reproduce_command_prints_formatted_numbers(tmp_path):
    r = CliRunner().invoke(main, ["reproduce", "alfaro2001-table1", "--quick", "--executor", "serial", "--no-progress", "-o", str(tmp_path / "r")])
    assert r.exit_code == 0, r.output
    cells = {}
    for line in r.output.splitlines():
        parts = [p.strip() for p in line.split("│")[1:-1]]
        if parts and parts[0]:
            cells[parts[0]] = parts[2:]
    assert cells["T_frame, 1x (2.5 Gb/s)"] == ["3.342336 ms", "3.342336 ms", "0", "0 %", "within"]
    assert cells["Slots per frame"] == ["16,320", "16,320", "0", "0 %", "within"]


# --------------------------------------------------------------------------- a paper entry with two scenarios
TOY_REFERENCE = 'A. Toy, B. Other, "A Toy Paper & Co", Journal of Tests, 2020'


@pytest.fixture
def toy_entry(tmp_path) -> Path:
    """An entry with two scenarios (results in subdirectories a/ and b/): one value
    within tolerance and one across series in a, one outside tolerance in b."""
    d = tmp_path / "entries"
    d.mkdir()
    (d / "a.scenario.toml").write_text(
        'kind = "synthetic"\nname = "toy a"\nplugins = ["experiment_plugin"]\nseed = [1, 2]\n[synthetic]\nx = [1.0, 2.0]\nn = [100, 200]\n'
    )
    (d / "b.scenario.toml").write_text('kind = "synthetic"\nname = "toy b"\nplugins = ["experiment_plugin"]\nseed = [1, 2]\n[synthetic]\nx = [4.0, 8.0]\nn = 50\n')
    (d / "toy-2020.toml").write_text(
        dedent(
            '''\
            id = "toy-2020"
            title = "A toy reproduction"
            paper = "999"
            reference = 'A. Toy, B. Other, "A Toy Paper & Co", Journal of Tests, 2020'
            scenario = ["a.scenario.toml", "b.scenario.toml"]
            notes = """
            What the toy measures, with `code`.

            - first difference
            - second difference
            """

            [[value]]
            quantity = "mean at x = 1, n = 100"
            citation = "Fig. 1"
            paper = 0.0
            column = "mean"
            where = { "synthetic.x" = 1.0, "synthetic.n" = 100 }
            tolerance = { abs = 1.0 }

            [[value]]
            quantity = "mean at x = 2, every n"
            citation = "Fig. 1"
            paper = 0.5
            column = "mean"
            where = { "synthetic.x" = 2.0 }
            tolerance = { abs = 1.0 }

            [[value]]
            quantity = "mean at x = 4"
            citation = "Fig. 2"
            paper = 100.0
            column = "mean"
            where = { "synthetic.x" = 4.0 }
            tolerance = { abs = 0.5 }

            [[value]]
            quantity = "samples × 120"
            citation = "Table 1"
            paper = 12000
            column = "count * 120"
            where = { "synthetic.n" = 100 }
            tolerance = { rel = 0.01 }

            [[value]]
            quantity = "samples ÷ 1.75"
            citation = "Table 1"
            paper = 57.14
            column = "count / 1.75"
            where = { "synthetic.n" = 100 }
            '''
        )
    )
    return d


def reproduce_toy(toy_entry: Path, out: Path) -> registry.Report:
    return registry.reproduce("toy-2020", executor=make_executor("serial"), out_dir=out, progress=False, directory=toy_entry)


def test_report_json_carries_notes_reference_and_command(toy_entry, tmp_path):
    rep = reproduce_toy(toy_entry, tmp_path / "out")
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["notes"] == "What the toy measures, with `code`.\n\n- first difference\n- second difference"
    assert data["reference"] == TOY_REFERENCE and data["short_reference"] == "Toy et al. 2020"
    assert data["command"] == "ibnetsim reproduce toy-2020" and data["title"] == "A toy reproduction"
    assert data["results"] == ["a", "b"]
    verdicts = [v["verdict"] for v in data["values"]]
    assert verdicts == ["within", "within", "outside", "within", "context"] and not rep.ok
    assert data["values"][0]["where"] == {"synthetic.x": 1.0, "synthetic.n": 100}


def test_every_scenario_page_shows_the_paper_experiment(toy_entry, tmp_path):
    reproduce_toy(toy_entry, tmp_path / "out")
    for sub in ("a", "b"):
        page = (tmp_path / "out" / sub / "report.html").read_text()
        assert "<h1>toy-2020: A toy reproduction</h1>" in page and f"<p>Scenario: toy {sub}.</p>" in page
        assert f"<em>{html.escape(TOY_REFERENCE)}</em>" in page
        assert "Run: <code>ibnetsim reproduce toy-2020</code>" in page
        assert "<p>What the toy measures, with <code>code</code>.</p>" in page
        assert "<ul><li>first difference</li><li>second difference</li></ul>" in page
        table = page.split('<table id="paper-vs-ours">')[1].split("</table>")[0]
        rows = [re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in table.split("<tr>")[2:]]
        # Paper and ours side by side, the difference signed and in percent.
        assert rows[3][:8] == ["samples × 120", "Table 1", "12,000", "12,000", "", "0", "0 %", "4"]
        assert rows[4][2:4] == ["57.14", "57.143"] and rows[4][6] == "+0.005 %"
        assert rows[2][9] == "outside" and '<td class="text outside">outside</td>' in table
        assert "4 of 5 values with a tolerance are within it." not in page and "3 of 4 values with a tolerance are within it." in page


def test_markdown_prints_numbers_as_read(toy_entry, tmp_path):
    reproduce_toy(toy_entry, tmp_path / "out")
    md = (tmp_path / "out" / "report.md").read_text()
    assert "| samples × 120 | Table 1 | 12,000 | 12,000 |  | 0 | 0 % | 4 | ±1 % | within |" in md
    assert "| samples ÷ 1.75 | Table 1 | 57.14 | 57.143 |  | +0.00286 | +0.005 % | 4 | context | context |" in md
    assert "Run: `ibnetsim reproduce toy-2020`" in md
    assert "None" not in md and "12000.0" not in md and "57.142857" not in md


def test_figures_show_the_papers_points_beside_ours(toy_entry, tmp_path, drawn):
    reproduce_toy(toy_entry, tmp_path / "out")
    drawn.clear()
    # Without `paper`, plot_results reads the comparison reproduce wrote one level up.
    plots.plot_results(tmp_path / "out" / "a")
    ax = drawn["mean"].axes[0]
    curves = {line.get_label(): line for line in ax.lines if line.get_linestyle() != "None"}
    diamonds = [line for line in ax.lines if line.get_marker() == "D"]
    placed = sorted((float(line.get_xdata()[0]), float(line.get_ydata()[0]), line.get_markeredgecolor()) for line in diamonds)
    # x = 1 names n = 100: its series' colour; x = 2 spans both series: black. b's value is not here.
    assert placed == [(1.0, 0.0, curves["n=100 (n=2)"].get_color()), (2.0, 0.5, "black")]
    assert not [line for line in ax.lines if line.get_marker() == "o" and line.get_linestyle() == "None"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["n=100 (n=2)", "n=200 (n=2)", "min–max over seeds", "paper (Toy et al. 2020)"]

    drawn.clear()
    plots.plot_results(tmp_path / "out" / "b")
    ax = drawn["mean"].axes[0]
    rings = [line for line in ax.lines if line.get_marker() == "o" and line.get_linestyle() == "None"]
    assert [(float(r.get_xdata()[0]), float(r.get_ydata()[0])) for r in rings] == [(4.0, 100.0)]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[-2:] == ["paper (Toy et al. 2020)", "outside tolerance"]


def test_ratios_and_expressions_are_not_drawn_as_points(tmp_path, drawn):
    out = sweep(tmp_path, 'kind = "synthetic"\nplugins = ["experiment_plugin"]\nseed = [1, 2]\n[synthetic]\nx = [1.0, 2.0]\n')
    value = {"paper": 1.0, "verdict": "within", "column": "mean", "where": {"synthetic.x": 1.0}, "denominator": None, "peak_over": None}
    paper = {
        "short_reference": "X 2000",
        "values": [
            dict(value, column="mean * 2"),
            dict(value, denominator={"where": {"synthetic.x": 2.0}}),
            dict(value, peak_over="synthetic.x"),
            dict(value, where={"synthetic.x": [1.0, 2.0]}),
            dict(value, where={"synthetic.x": 1.0, "other.key": 3}),
            dict(value, paper=7.0),
        ],
    }
    plots.plot_results(out, paper=paper)
    ax = drawn["mean"].axes[0]
    assert [(float(line.get_xdata()[0]), float(line.get_ydata()[0])) for line in ax.lines if line.get_marker() == "D"] == [(1.0, 7.0)]


def paper_value(**kw) -> dict:
    """A value as report.json carries it."""
    v = {"quantity": "q", "paper": 1.0, "ours": 1.0, "verdict": "within", "column": "mean", "where": {}, "denominator": None, "peak_over": None, "tolerance_bands": []}
    return dict(v, **kw)


def markers(ax, marker: str) -> list[tuple[float, float]]:
    return [(round(float(line.get_xdata()[0]), 9), float(line.get_ydata()[0])) for line in ax.lines if line.get_marker() == marker and line.get_linestyle() == "None"]


def test_values_no_figure_shows_get_a_paper_vs_ours_figure(toy_entry, tmp_path, drawn):
    reproduce_toy(toy_entry, tmp_path / "out")
    drawn.clear()
    plots.plot_results(tmp_path / "out" / "a")
    # The two expressions of `count` are on no figure of a: one row each, on its own scale.
    fig = drawn["paper_vs_ours"]
    rows = [ax for ax in fig.axes if ax.get_title(loc="left")]
    assert [ax.get_title(loc="left") for ax in rows] == ["samples × 120  [within]", "samples ÷ 1.75  [context]"]
    assert markers(rows[0], "D") == [(12000.0, 0.0)] and markers(rows[0], "o") == [(12000.0, 0.0)]
    assert markers(rows[1], "D") == [(57.14, 0.0)] and markers(rows[1], "o") == [(round(100 / 1.75, 9), 0.0)]
    # ±1 % of 12,000 is the tolerance bar.
    (bar,) = rows[0].patches
    assert (bar.get_x(), bar.get_x() + bar.get_width()) == pytest.approx((11880.0, 12120.0))
    assert fig.get_suptitle() == "toy a: paper's values not drawn above"
    drawn.clear()
    plots.plot_results(tmp_path / "out" / "b")
    # b's one value is a point of its `mean` figure.
    assert "paper_vs_ours" not in drawn and "mean" in drawn


def test_a_figure_over_one_x_is_left_out_and_its_values_go_to_paper_vs_ours(tmp_path, drawn):
    # Six series at one x made two degenerate figures for alfaro2001-figs5-12 (issue 16).
    out = sweep(tmp_path, 'kind = "synthetic"\nplugins = ["experiment_plugin"]\nseed = [1, 2]\n[synthetic]\nx = 3.0\nn = [10, 20]\n')
    value = paper_value(quantity="mean at x = 3", column="mean", paper=0.0, ours=0.1, where={"synthetic.x": 3.0}, tolerance_bands=[[-1.0, 1.0]])
    plots.plot_results(out, paper={"short_reference": "X 2000", "values": [value]})
    assert sorted(drawn) == ["paper_vs_ours"]
    assert [ax.get_title(loc="left") for ax in drawn["paper_vs_ours"].axes if ax.get_title(loc="left")] == ["mean at x = 3  [within]"]


def test_a_long_legend_goes_beside_the_axes(tmp_path, drawn):
    # Twelve series of martinez2003-table1 had their legend over the curves (issue 16).
    ns = [10 * (i + 1) for i in range(plots.LEGEND_INSIDE_MAX + 1)]
    out = sweep(tmp_path, f'kind = "synthetic"\nplugins = ["experiment_plugin"]\nseed = 1\n[synthetic]\nx = [1.0, 2.0]\nn = {ns}\n')
    plots.plot_results(out)
    fig = drawn["mean"]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    assert len(ax.get_legend().get_texts()) == len(ns)
    assert ax.get_legend().get_window_extent(renderer).x0 > ax.get_window_extent(renderer).x1


def test_many_values_share_one_scatter_of_ours_against_the_papers(tmp_path, drawn):
    out = sweep(tmp_path, 'kind = "synthetic"\nplugins = ["experiment_plugin"]\nseed = 1\n[synthetic]\nx = [1.0, 2.0]\n')
    values = [paper_value(quantity=f"cell {i}", column="max", paper=float(i), ours=float(i) + 0.5, tolerance_bands=[[i - 1.0, i + 1.0]]) for i in range(1, 14)]
    values[3] = dict(values[3], ours=9.0, verdict="outside")
    plots.plot_results(out, paper={"short_reference": "X 2000", "values": values})
    ax = drawn["paper_vs_ours"].axes[0]
    dots = {line.get_label(): line for line in ax.lines if line.get_marker() == "o"}
    assert list(dots) == ["ours, within or context (12)", "ours, outside tolerance (1)"]
    assert list(dots["ours, outside tolerance (1)"].get_xydata()[0]) == [4.0, 9.0]
    assert ax.get_xlabel() == "the paper's value (X 2000)" and ax.get_xscale() == "linear"


def test_categories_figure_puts_the_papers_values_over_their_bars(tmp_path, drawn):
    out = sweep(tmp_path, 'kind = "shares"\nplugins = ["experiment_plugin"]\nseed = [1, 2]\n[shares]\ngroup = [1, 2]\n')
    values = [
        paper_value(quantity="b mid, group 2", column="b_1", paper=0.5, ours=0.45, where={"shares.group": 2}, tolerance_bands=[[0.4, 0.6]]),
        paper_value(quantity="a high, group 1", column="a_2", paper=0.9, ours=0.5, where={"shares.group": 1}, verdict="outside"),
        paper_value(quantity="b high, group 1", column="b_2", paper=0.6, ours=0.55, where={"shares.group": 1}),
    ]
    plots.plot_results(out, paper={"short_reference": "X 2000", "values": values})
    fig = drawn["shares"]
    one, two = fig.axes[:2]
    assert [one.get_title(), two.get_title()] == ["group=1", "group=2"]
    # Bars: series a at category − 0.2, b at + 0.2 (no b for "high"); the mean over the two seeds.
    assert sorted((round(b.get_x() + b.get_width() / 2, 9), round(b.get_height(), 9)) for b in two.patches) == [
        (-0.2, 0.2), (0.2, 0.25), (0.8, 0.4), (1.2, 0.45), (1.8, 0.6)
    ]
    assert markers(two, "D") == [(1.2, 0.5)] and markers(two, "o") == []
    assert [(list(seg[0]), list(seg[1])) for c in two.collections if c.get_gid() == "tolerance" for seg in c.get_segments()] == [([1.2, 0.4], [1.2, 0.6])]
    assert markers(one, "D") == [(1.8, 0.9)] and markers(one, "o") == [(1.8, 0.9)]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a", "b", "paper (X 2000)", "tolerance", "outside tolerance"]
    # b_2 is on no figure: it is in the paper-vs-ours rows, the two drawn values are not.
    assert [ax.get_title(loc="left") for ax in drawn["paper_vs_ours"].axes if ax.get_title(loc="left")] == ["b high, group 1  [within]"]


def test_a_category_figure_of_a_long_sweep_is_left_out(tmp_path, drawn):
    groups = list(range(plots.CATEGORY_PANELS_MAX + 1))
    out = sweep(tmp_path, f'kind = "shares"\nplugins = ["experiment_plugin"]\nseed = 1\n[shares]\ngroup = {groups}\n')
    value = paper_value(quantity="b mid, group 2", column="b_1", paper=0.5, ours=0.45, where={"shares.group": 2})
    plots.plot_results(out, paper={"values": [value]})
    assert "shares" not in drawn
    assert [ax.get_title(loc="left") for ax in drawn["paper_vs_ours"].axes if ax.get_title(loc="left")] == ["b mid, group 2  [within]"]


def test_peak_ratios_are_drawn_where_they_put_the_numerators_peak(tmp_path, drawn):
    out = sweep(
        tmp_path,
        """\
        kind = "fake_dataplane"
        plugins = ["experiment_plugin"]
        seed = 1
        [fake]
        load = [0.2, 0.5, 0.9]
        vls = [1, 2]
        accept_cap = [0.4, 0.6]
        """,
    )
    ratio = dict(
        paper_value(quantity="cap 0.6 over 0.4, 1 VL", column="accepted_load", paper=1.5, ours=0.65 / 0.45),
        where={"fake.vls": 1, "fake.accept_cap": 0.6},
        denominator={"where": {"fake.vls": 1, "fake.accept_cap": 0.4}},
        peak_over="fake.load",
        tolerance_bands=[[1.4, 1.6]],
    )
    # Latency is not proportional to accepted traffic: that ratio has no place on the x axis.
    latency = dict(ratio, quantity="latency ratio", column="latency_mean_ns", ours=1.0)
    plots.plot_results(out, paper={"short_reference": "X 2000", "values": [ratio, latency]})
    one, two = drawn["latency_vs_accepted_panels"].axes[:2]
    assert [one.get_title(), two.get_title()] == ["fake.vls = 1", "fake.vls = 2"]
    dashed = [line for line in one.lines if line.get_linestyle() == "--"]
    # Our 0.4 curve peaks at 0.45 accepted: the paper's 1.5 puts the 0.6 curve's peak at 0.675.
    assert [float(line.get_xdata()[0]) for line in dashed] == [pytest.approx(0.675)]
    assert dashed[0].get_color() == next(line for line in one.lines if line.get_label() == "accept_cap=0.6").get_color()
    (span,) = one.patches
    assert (span.get_x(), span.get_x() + span.get_width()) == (pytest.approx(0.63), pytest.approx(0.72))
    assert [t.get_text() for t in one.texts] == ["paper: 1.5 × peak of accept_cap=0.4"]
    assert not [line for line in two.lines if line.get_linestyle() == "--"] and not two.texts
    assert "paper's peak ratio (shaded: tolerance)" in [t.get_text() for t in one.get_legend().get_texts()]
    assert [ax.get_title(loc="left") for ax in drawn["paper_vs_ours"].axes if ax.get_title(loc="left")] == ["latency ratio  [within]"]


# --------------------------------------------------------------------------- the HTML page of any sweep
def test_html_tables_index_once_no_index_mean_and_red_only_when_failed(tmp_path):
    ok = sweep(tmp_path, 'kind = "synthetic"\nplugins = ["experiment_plugin"]\nseed = [1, 2]\n[synthetic]\nx = [1.0, 2.0]\n', "ok")
    page = write_html_report(ok).read_text()
    assert "4 points: 4 ok, 0 failed." in page and 'class="failed"' not in page
    points = page.split("<h2>Points</h2>")[1]
    assert points.count("<th>index</th>") == 1
    assert re.findall(r"<td[^>]*>(.*?)</td>", points.split("</tr>")[1])[:2] == ["0", "1"]  # index, seed
    summary = page.split("<h2>Summary</h2>")[1].split("<h2>")[0]
    assert re.findall(r"<th>(.*?)</th>", summary) == ["synthetic.x", "mean", "max", "count"]
    # Every table scrolls sideways inside the page.
    assert page.count("<table") == page.count('<div class="scroll"><table') > 0

    bad = sweep(tmp_path, 'kind = "synthetic"\nplugins = ["experiment_plugin"]\nseed = [1, 2]\n[synthetic]\nfail_seed = 2\n', "bad")
    page = write_html_report(bad).read_text()
    assert '2 points: 1 ok, <span class="failed">1 failed</span>.' in page


def test_html_cells_print_numbers_as_read(tmp_path):
    out = sweep(tmp_path, 'kind = "synthetic"\nplugins = ["experiment_plugin"]\nseed = 1\n[synthetic]\nx = [1.0, 2.0]\nn = 12000\n')
    page = write_html_report(out).read_text()
    points = page.split("<h2>Points</h2>")[1].split("</table>")[0]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", points.split("</tr>")[1])
    # index, x, status, mean, max, count, label, profile
    assert cells[0] == "0" and cells[1] == "1" and cells[2] == "ok" and cells[5] == "12,000"
    assert len(cells[3].lstrip("-").replace(".", "").replace("e", "").lstrip("0")) <= 7  # five significant digits, not seventeen
    assert cells[7] == "[5 values]" and "None" not in points


# --------------------------------------------------------------------------- figure layout
def overlapping(boxes) -> list:
    return [(a, b) for a, b in itertools.combinations(boxes, 2) if a.overlaps(b)]


def test_two_panel_figures_have_one_title_and_readable_ticks(tmp_path, drawn):
    out = sweep(
        tmp_path,
        """\
        kind = "fake_dataplane"
        name = "a scenario with a rather long name: 16-switch irregular, up*/down*"
        plugins = ["experiment_plugin"]
        seed = 1
        [fake]
        load = [0.2, 0.9]
        latency_max_ns = 140000.0
        """,
    )
    plots.plot_results(out)
    for name, titles in (("latency_histogram", ["histogram", "cumulative distribution"]), ("port_utilization", ["in fabric order", "sorted, highest first"])):
        fig = drawn[name]
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        assert fig.get_suptitle().startswith("a scenario with a rather long name"), name
        assert [ax.get_title() for ax in fig.axes] == titles
        assert not overlapping([ax.title.get_window_extent(renderer) for ax in fig.axes]), name
        for ax in fig.axes:
            ticks = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
            assert len(ticks) >= 3 and not overlapping(ticks), (name, [t.get_text() for t in ax.get_xticklabels()])
    hist = drawn["latency_histogram"].axes[0]
    assert hist.get_xlabel() == "packet latency (µs)"
    assert max(float(t.get_text().replace("−", "-")) for t in hist.get_xticklabels() if t.get_text()) <= 160


def test_curve_spread_has_a_legend_entry(tmp_path, drawn):
    out = sweep(tmp_path, 'kind = "fake_dataplane"\nplugins = ["experiment_plugin"]\nseed = [1, 2]\n[fake]\nload = [0.2, 0.9]\n')
    plots.plot_results(out)
    legend = [t.get_text() for t in drawn["throughput_vs_offered"].axes[0].get_legend().get_texts()]
    assert legend == ["all points (n=2 seeds)", "accepted = offered", "min–max over seeds"]


# --------------------------------------------------------------------------- entries
def test_entry_notes_speak_to_the_reader():
    for e in registry.entries():
        assert not re.search(r"\b(issue|the team|asks for it)\b", e.notes, re.IGNORECASE), e.id
