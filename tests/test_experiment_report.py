"""The reports of `ibnetsim reproduce` and `ibnetsim report`: what they say and how they print it.

Each test is a regression test for a defect readers reported (issue 16):
notes, reference and command missing from report.html, raw numbers, overlapping
figure labels, no paper values on the figures.
"""

import itertools
import re
from pathlib import Path
from textwrap import dedent

import matplotlib.pyplot as plt
import pytest

from ibnetsim.experiment import loads_scenario, make_executor, plots, registry, run_sweep
from ibnetsim.experiment.numfmt import exact, number, percent, significant_digits


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

