"""Point kinds: what one point of a sweep runs.

A point kind is a plain function ``run(config: dict) -> dict`` from a point's
resolved configuration (see :mod:`ibnetsim.experiment.scenario`) to its result
columns, registered under a name with the scenario sections it reads. The sweep
machinery knows nothing else about it, which is what lets the data plane add a
``simulate`` kind beside the control-plane ``routing_stats`` and the analytic
``tframe`` (the registry of CAMINOS's ``Plugs`` and OpenSM's
``static_routing_modules[]``, in Python).

Result columns are scalars (int, float, bool, str) or flat lists of numbers
(per-port profiles, histograms); names are identifiers without dots, because
dotted names are the parameters (``fabric.switches``) in the results table.
A kind may also return whole tables under the key :data:`TABLES`: a dict from
a table name to its columns (equal-length lists). The store writes each as
``DIR/tables/NAME/KEY.parquet`` before the point's row, which gets the table's
row count as ``NAME_rows`` (``simulate`` stores its time series this way).

Points run in worker processes or on dask workers: :func:`run_point` is the
picklable entry point, and it imports the scenario's plugin modules first so
kinds registered by a plugin exist on every worker.
"""

from __future__ import annotations

import importlib
import math
import os
import re
import socket
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

__all__ = ["PointKind", "Figure", "Categories", "register", "get", "names", "all_kinds", "run_point", "STATUS_OK", "STATUS_ERROR", "TABLES"]

STATUS_OK = "ok"
STATUS_ERROR = "error"
#: The key of a result under which a kind returns whole tables (see above).
TABLES = "_tables"

_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Figure:
    """A standard figure of a point kind: ``y`` against ``x``, one series per
    value of the other swept keys, mean over seeds with the min–max range shaded."""

    name: str
    x: str
    y: str
    title: str
    ylabel: str
    xlabel: Optional[str] = None
    logy: bool = False


@dataclass(frozen=True)
class Categories:
    """A standard figure of several result columns of each point: one panel per
    setting of the swept keys other than seed (mean over seeds), ``categories``
    along x and one bar series per entry of ``series``, which names a result
    column for each category (``None`` where the series has none). A paper's
    figure of a distribution, such as the share of packets below each delay
    threshold per SL, is drawn this way."""

    name: str
    title: str
    ylabel: str
    xlabel: str
    categories: tuple[str, ...]
    series: tuple[tuple[str, tuple[Optional[str], ...]], ...]

    def __post_init__(self) -> None:
        for label, columns in self.series:
            if len(columns) != len(self.categories):
                raise ValueError(f"figure {self.name}: series {label!r} names {len(columns)} columns for {len(self.categories)} categories")


@dataclass(frozen=True)
class PointKind:
    name: str
    summary: str
    run: Callable[[dict], dict]
    #: Scenario sections the kind reads, in the order the reference lists them.
    sections: tuple[str, ...]
    #: Sections that must be present (sections with variants have no defaults).
    required: tuple[str, ...] = ()
    #: Result columns and what they mean (documented in docs/scenario.md).
    columns: dict[str, str] = field(default_factory=dict)
    #: The result columns ``ibnetsim results`` shows, after the swept keys
    #: (``--wide`` shows every column): a few that fit a terminal. Empty: every
    #: scalar result column, for kinds with few.
    table_columns: tuple[str, ...] = ()
    figures: tuple[Figure, ...] = ()
    #: Figures of several columns per point (distributions, per-SL shares).
    categories: tuple[Categories, ...] = ()
    #: Whole-point check run at validation time: ``(dotted key, message)`` or None.
    check: Optional[Callable[[dict], Optional[tuple[str, str]]]] = None


_KINDS: dict[str, PointKind] = {}
_BUILTINS_LOADED = False


def register(kind: PointKind) -> PointKind:
    """Registers a point kind; names are unique."""
    if not _COLUMN.match(kind.name):
        raise ValueError(f"point kind name {kind.name!r} must be an identifier")
    if kind.name in _KINDS and _KINDS[kind.name] is not kind:
        raise ValueError(f"point kind '{kind.name}' is already registered")
    from ibnetsim.experiment import schema

    for s in kind.sections:
        if s not in schema.sections():
            raise ValueError(f"point kind '{kind.name}' reads section [{s}], which is not registered")
    for c in kind.columns:
        if not _COLUMN.match(c):
            raise ValueError(f"point kind '{kind.name}': result column {c!r} must be an identifier without dots")
    unknown = [c for c in kind.table_columns if c not in kind.columns]
    if unknown:
        raise ValueError(f"point kind '{kind.name}': table_columns {', '.join(unknown)} are not among its result columns")
    _KINDS[kind.name] = kind
    return kind


#: The point kinds that ship with ibnetsim, in the order they are loaded and documented.
BUILTIN_MODULES = (
    "ibnetsim.experiment.kinds.routing_stats",
    "ibnetsim.experiment.kinds.tframe",
    "ibnetsim.experiment.kinds.simulate",
    "ibnetsim.experiment.kinds.saturation",
    "ibnetsim.experiment.kinds.qos_setup",
    "ibnetsim.experiment.kinds.qos_run",
)


def _load_builtins() -> None:
    global _BUILTINS_LOADED
    if not _BUILTINS_LOADED:
        _BUILTINS_LOADED = True
        for module in BUILTIN_MODULES:
            importlib.import_module(module)


def names() -> list[str]:
    _load_builtins()
    return list(_KINDS)


def all_kinds() -> list[PointKind]:
    _load_builtins()
    return list(_KINDS.values())


def get(name: str) -> PointKind:
    _load_builtins()
    try:
        return _KINDS[name]
    except KeyError:
        raise KeyError(f"unknown point kind '{name}' (known: {', '.join(_KINDS)})") from None


# --------------------------------------------------------------------------- running
def _check_tables(kind: str, tables: Any) -> dict[str, dict[str, list]]:
    if not isinstance(tables, dict):
        raise TypeError(f"point kind '{kind}' returned {TABLES} as {type(tables).__name__}, not a dict of tables")
    for name, cols in tables.items():
        if not isinstance(name, str) or not _COLUMN.match(name):
            raise TypeError(f"point kind '{kind}' returned table {name!r}; names must be identifiers")
        if not isinstance(cols, dict) or len({len(v) for v in cols.values()}) > 1:
            raise TypeError(f"point kind '{kind}' returned table '{name}' not as columns of equal length")
    return tables


def _check_columns(kind: str, out: Any) -> dict[str, Any]:
    if not isinstance(out, dict):
        raise TypeError(f"point kind '{kind}' returned {type(out).__name__}, not a dict of result columns")
    clean: dict[str, Any] = {}
    if TABLES in out:
        out = dict(out)
        clean[TABLES] = _check_tables(kind, out.pop(TABLES))
    for name, v in out.items():
        if not isinstance(name, str) or not _COLUMN.match(name):
            raise TypeError(f"point kind '{kind}' returned column {name!r}; names must be identifiers without dots")
        if hasattr(v, "item") and not hasattr(v, "__len__"):
            v = v.item()  # numpy scalar
        elif hasattr(v, "tolist"):
            v = v.tolist()
        if isinstance(v, (list, tuple)):
            if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
                raise TypeError(f"point kind '{kind}' returned column '{name}' as a list with non-numbers")
            v = [float(x) for x in v]
        elif v is not None and not isinstance(v, (bool, int, float, str)):
            raise TypeError(f"point kind '{kind}' returned column '{name}' of type {type(v).__name__}")
        if isinstance(v, float) and math.isnan(v):
            v = None
        clean[name] = v
    return clean


#: While a point runs: (seconds between progress lines or None, the point's
#: label). A kind that runs long may report progress with it (``simulate`` does).
point_progress: tuple[Optional[float], str] = (None, "")


def run_point(kind: str, plugins: Sequence[str], config: dict, progress: tuple[Optional[float], str] = (None, "")) -> dict[str, Any]:
    """Runs one point and returns its row fragment: ``status``, ``error``, the
    result columns, and the runtime columns ``elapsed_s`` and ``host``.
    ``progress`` is (seconds between plain progress lines on stderr, or None;
    the point's label), for kinds that run long.

    An exception in the kind becomes an error row (message and traceback), so a
    failing point never stops the sweep. KeyboardInterrupt and SystemExit are
    not caught: they stop the sweep.
    """
    t0 = time.perf_counter()
    meta = {"host": socket.gethostname(), "pid": os.getpid()}
    global point_progress
    point_progress = progress
    try:
        for mod in plugins:
            importlib.import_module(mod)
        out = _check_columns(kind, get(kind).run(config))
        row: dict[str, Any] = {"status": STATUS_OK, "error": "", "traceback": ""}
        row.update(out)
    except Exception as e:  # noqa: BLE001 - a failing point is data, not a crash
        row = {
            "status": STATUS_ERROR,
            "error": f"{type(e).__name__}: {e}",
            "traceback": traceback.format_exc(),
        }
    finally:
        point_progress = (None, "")
    row["elapsed_s"] = time.perf_counter() - t0
    row.update(meta)
    return row
