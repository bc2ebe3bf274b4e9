"""Experiments: scenario files, sweeps, the results store, plots and the reproduce registry.

::

    from ibnetsim import experiment as ex
    sc = ex.load_scenario("grid.toml")          # validated and expanded
    ex.run_sweep(sc, "out/", ex.make_executor("local"))
    df = ex.load_results("out/")                # one row per point
    ex.plot_results("out/")                     # PNG + SVG figures in out/figures/

The command line is ``ibnetsim sweep``, ``results``, ``plot`` and ``reproduce``
(:mod:`ibnetsim.experiment.cli`).
"""

from ibnetsim.experiment.executors import DaskExecutor, LocalExecutor, SerialExecutor, make_executor
from ibnetsim.experiment.kinds import Figure, PointKind, register
from ibnetsim.experiment.scenario import Point, Scenario, ScenarioError
from ibnetsim.experiment.scenario import load as load_scenario
from ibnetsim.experiment.scenario import loads as loads_scenario
from ibnetsim.experiment.store import Store, load_results, load_table
from ibnetsim.experiment.sweep import SweepSummary, run_sweep



def plot_results(*args, **kwargs):
    """Draws a results directory's standard figures; see :func:`ibnetsim.experiment.plots.plot_results`."""
    from ibnetsim.experiment.plots import plot_results as _plot

    return _plot(*args, **kwargs)


__all__ = [
    "load_scenario",
    "loads_scenario",
    "Scenario",
    "Point",
    "ScenarioError",
    "PointKind",
    "Figure",
    "register",
    "make_executor",
    "SerialExecutor",
    "LocalExecutor",
    "DaskExecutor",
    "Store",
    "load_results",
    "load_table",
    "run_sweep",
    "SweepSummary",
    "plot_results",
]
