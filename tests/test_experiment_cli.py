"""The sweep and results commands: their counted nouns."""

from pathlib import Path
from textwrap import dedent

from click.testing import CliRunner

from ibnetsim.cli import main
from ibnetsim.experiment.executors import DaskExecutor, LocalExecutor


def scenario_file(tmp_path: Path, seeds=(1, 2, 3), **synthetic) -> Path:
    s = tmp_path / "s.toml"
    s.write_text(
        f'kind = "synthetic"\nplugins = ["experiment_plugin"]\nseed = {list(seeds)}\n[synthetic]\n'
        + "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in synthetic.items())
    )
    return s


def sweep(tmp_path: Path, *args: str, seeds=(1, 2, 3), **synthetic):
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["sweep", str(scenario_file(tmp_path, seeds, **synthetic)), "-o", str(out), "--executor", "serial", *args])
    return r, out


# --------------------------------------------------------------------------- counted nouns
def test_one_of_a_thing_is_singular(tmp_path):
    r = CliRunner().invoke(main, ["sweep", str(scenario_file(tmp_path, (1,))), "--dry-run"])
    assert r.exit_code == 0 and f"{tmp_path / 's.toml'}: kind synthetic, 1 point\n" in r.stdout
    r, out = sweep(tmp_path, "--no-progress", seeds=(1,))
    assert r.exit_code == 0, r.output
    assert f"s.toml: 1 point on serial → {out}" in r.stderr and "1 point, 0 already done, 1 ran, 0 failed" in r.stderr
    r = CliRunner().invoke(main, ["results", str(out)])
    assert "— 1 point" in r.stdout and "[1 value]" not in r.stdout
    r, out = sweep(tmp_path, "--no-progress", seeds=(1, 2), fail_seed=2)
    assert r.exit_code == 1
    r = CliRunner().invoke(main, ["results", str(out)])
    assert "1 point failed: ibnetsim results" in r.stderr
    assert LocalExecutor(1).describe() == "local process pool, 1 worker"
    assert LocalExecutor(2).describe() == "local process pool, 2 workers"
    assert DaskExecutor(workers=1).describe() == "dask LocalCluster, 1 worker process"


def test_qos_plan_counts_one_request(tmp_path):
    runner = CliRunner()
    net = tmp_path / "hc.net"
    assert runner.invoke(main, ["topo", "gen", "hypercube", "--dim", "2", "--hosts", "2", "-o", str(net)]).exit_code == 0
    req = tmp_path / "req.csv"
    req.write_text(dedent("""\
        source, destination, class, bandwidth
        h0, h7, DB, 100M
        """))
    r = runner.invoke(main, ["qos", "plan", str(net), str(req)])
    assert r.exit_code == 0, r.output
    assert "1 request: 1 accepted, 0 refused" in r.stderr
    assert "# 1 request: 1 accepted, 0 refused;" in r.stdout
