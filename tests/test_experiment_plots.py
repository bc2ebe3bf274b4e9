"""Plots: the standard figures exist and are valid PNG and SVG files showing the right series."""

import xml.etree.ElementTree as ET
from pathlib import Path
from textwrap import dedent

import pytest
from click.testing import CliRunner

from ibnetsim.cli import main
from ibnetsim.experiment import loads_scenario, make_executor, plot_results, run_sweep

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_png(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, path
    assert data[12:16] == b"IHDR"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width > 200 and height > 150
    assert data.rstrip(b"\x00")[-8:-4] == b"IEND"
    return width, height


def svg_texts(path: Path) -> list[str]:
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    # matplotlib writes text as paths with the string in a comment-free <g id="text_…"> plus
    # the glyph ids; the legend labels are kept in the <!-- label --> comments it emits.
    return [c for c in path.read_text().split("<!-- ")[1:]]


def sweep(tmp_path: Path, text: str):
    sc = loads_scenario(dedent(text), path=tmp_path / "s.toml")
    run_sweep(sc, tmp_path / "out", make_executor("serial"), progress=False)
    return tmp_path / "out"


def test_kind_figures_as_png_and_svg(tmp_path):
    out = sweep(
        tmp_path,
        """\
        kind = "tframe"
        name = "Table 1"
        [tframe]
        link_width = ["1x", "4x", "12x"]
        rate_basis = ["signalling", "data"]
        """,
    )
    paths = plot_results(out)
    assert sorted(p.name for p in paths) == ["t_frame.png", "t_frame.svg"]
    assert all(p.parent == out / "figures" for p in paths)
    assert_png(out / "figures" / "t_frame.png")
    comments = " ".join(svg_texts(out / "figures" / "t_frame.svg"))
    # One series per rate basis, categorical x axis in sweep order.
    for label in ("rate_basis=signalling", "rate_basis=data", "1x", "4x", "12x"):
        assert label in comments, label


def test_seeds_are_aggregated_with_sample_size(tmp_path):
    out = sweep(
        tmp_path,
        """\
        kind = "synthetic"
        plugins = ["experiment_plugin"]
        seed = [1, 2, 3]
        [synthetic]
        x = [1.0, 2.0, 4.0]
        n = [10, 20]
        """,
    )
    paths = plot_results(out, formats=("svg",))
    assert [p.name for p in paths] == ["mean.svg"]
    comments = " ".join(svg_texts(paths[0]))
    assert "n=10 (n=3)" in comments and "n=20 (n=3)" in comments


def test_dataplane_figures(tmp_path):
    out = sweep(
        tmp_path,
        """\
        kind = "fake_dataplane"
        plugins = ["experiment_plugin"]
        seed = [1, 2]
        [fake]
        load = [0.1, 0.3, 0.5, 0.7, 0.9]
        vls = [1, 2]
        """,
    )
    paths = plot_results(out)
    names = sorted({p.stem for p in paths})
    assert names == ["latency_histogram", "latency_vs_accepted", "port_utilization", "throughput_vs_offered"]
    for p in paths:
        if p.suffix == ".png":
            assert_png(p)
        else:
            svg_texts(p)
    comments = " ".join(svg_texts(out / "figures" / "latency_vs_accepted.svg"))
    # One series per swept parameter other than the load and the seed.
    assert "vls=1" in comments and "vls=2" in comments and "load=" not in comments
    util = " ".join(svg_texts(out / "figures" / "port_utilization.svg"))
    assert "vls=1 @ load 0.9" in util


def test_plot_command(tmp_path):
    out = sweep(tmp_path, 'kind = "tframe"\n[tframe]\nlink_width = ["1x", "4x"]\n')
    r = CliRunner().invoke(main, ["plot", str(out), "-o", str(tmp_path / "figs"), "--format", "png"])
    assert r.exit_code == 0, r.output
    assert r.output.split() == [str(tmp_path / "figs" / "t_frame.png")]
    assert_png(tmp_path / "figs" / "t_frame.png")


def test_nothing_to_plot_when_every_point_failed(tmp_path):
    out = sweep(
        tmp_path,
        """\
        kind = "synthetic"
        plugins = ["experiment_plugin"]
        seed = 3
        [synthetic]
        fail_seed = 3
        """,
    )
    assert plot_results(out) == []
    r = CliRunner().invoke(main, ["plot", str(out)])
    assert r.exit_code == 1 and "no successful points" in r.output


# --------------------------------------------------------------------------- HTML report
def chromium() -> str:
    import os
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI") == "true":
        pytest.fail("headless Chromium is missing (apt-get install chromium), and CI=true requires the browser check")
    pytest.skip("no Chromium on this machine (apt-get install chromium)")


def test_html_report_renders_in_headless_chromium(tmp_path):
    import subprocess

    out = sweep(
        tmp_path,
        """\
        kind = "fake_dataplane"
        name = "report <test> & co"
        plugins = ["experiment_plugin"]
        seed = [1, 2]
        [fake]
        load = [0.2, 0.6, 0.9]
        vls = [1, 2]
        """,
    )
    r = CliRunner().invoke(main, ["report", str(out), "-o", str(tmp_path / "report.html")])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "report.html").read_text()
    # Self-contained: no external resources, the scenario and tables inline, names escaped.
    assert "src=\"http" not in page and "href=\"http" not in page and "<link" not in page
    assert page.count("<figure") == 4 and "report &lt;test&gt; &amp; co" in page
    assert "load = [0.2, 0.6, 0.9]" in page and "Mean over seeds" in page
    dom = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000", "--dump-dom", (tmp_path / "report.html").as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
    ).stdout
    # The page's own script measured every inline SVG figure with a non-empty box.
    assert '<body data-figures-rendered="4">' in dom, dom[:500]


def test_plugins_of_a_results_directory_are_not_imported_unless_allowed(tmp_path):
    # A results directory names the plugins its scenario used; `plot` and
    # `report` import them (their code runs) only with --plugins. The plugin
    # here leaves a marker when imported.
    import os
    import subprocess
    import sys

    tests = Path(__file__).resolve().parent
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "marking_plugin.py").write_text(
        "import os\nimport experiment_plugin  # noqa: F401 (registers kind synthetic)\n"
        "open(os.environ['PLUGIN_MARKER'], 'a').close()\n"
    )
    scen = tmp_path / "s.toml"
    scen.write_text('kind = "synthetic"\nplugins = ["marking_plugin"]\nseed = [1, 2]\n[synthetic]\nx = [1.0, 2.0]\n')
    marker = tmp_path / "imported"
    env = {**os.environ, "PLUGIN_MARKER": str(marker), "PYTHONPATH": os.pathsep.join([str(tmp_path / "lib"), str(tests), os.environ.get("PYTHONPATH", "")])}
    cli = lambda *a: subprocess.run([sys.executable, "-m", "ibnetsim.cli", *map(str, a)], env=env, capture_output=True, text=True)  # noqa: E731
    out = tmp_path / "out"
    assert cli("sweep", scen, "-o", out, "--no-progress", "--executor", "serial").returncode == 0
    assert marker.exists()  # running the scenario runs its plugin: it is code
    marker.unlink()
    for command, status in ((["plot", out], 1), (["report", out], 0)):
        proc = cli(*command)
        # The synthetic kind's figure is its only one: plot has nothing to draw.
        assert proc.returncode == status, proc.stderr
        assert not marker.exists(), command
        assert "comes from plugins marking_plugin, not imported (they are code)" in proc.stderr and "--plugins" in proc.stderr
    proc = cli("plot", out, "--plugins")
    assert proc.returncode == 0 and marker.exists(), proc.stderr
    assert any(Path(line).stem == "mean" for line in proc.stdout.splitlines()), proc.stdout
