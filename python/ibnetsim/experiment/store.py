"""The results directory of a sweep: a manifest plus one Parquet row per point.

Layout::

    DIR/manifest.json       scenario text, path and SHA-256, axes, every expanded
                            point (key, index, swept values, resolved config),
                            ibnetsim version and build commit, host, and one
                            entry per run
    DIR/points/KEY.parquet  one row, written (atomically) as soon as a point finishes
    DIR/results.parquet     all rows, compacted from points/ at the end of each run

Writing each point on its own the moment it finishes is what makes an
interrupted or crashed sweep lose nothing: a re-run reads the keys already
present and runs only the rest (``finished_keys``). Compaction merges the point
files into ``results.parquet`` and removes them; if it is interrupted, the
duplicate rows it leaves are dropped on load (newest row of a key wins).

A row holds ``key``, ``index``, ``status`` (``ok``/``error``), ``error`` and
``traceback``, every resolved parameter as a dotted column (``fabric.switches``,
lists as JSON text), the kind's result columns, and the runtime columns
(:data:`RUNTIME_COLUMNS`), which are the only ones that differ between
executors.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import socket
import sys
import uuid
from pathlib import Path
from typing import Any, Iterable, Optional, Union

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ibnetsim.experiment.scenario import Point, Scenario

__all__ = ["Store", "load_results", "flatten_config", "RUNTIME_COLUMNS", "FORMAT"]

FORMAT = 1
MANIFEST = "manifest.json"
RESULTS = "results.parquet"
POINTS = "points"

#: Columns that depend on where and when a point ran, not on what it computed.
RUNTIME_COLUMNS = ("elapsed_s", "host", "pid", "finished_at", "run")


def flatten_config(config: dict, prefix: str = "") -> dict[str, Any]:
    """``{"fabric": {"switches": 8}}`` → ``{"fabric.switches": 8}``; lists become JSON text.

    A repeated section (a list of tables, ``[[traffic]]``) flattens like the
    sweep names its keys: ``traffic.load`` for one table, ``traffic[i].load``
    for several.
    """
    out: dict[str, Any] = {}
    for k, v in config.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten_config(v, name + "."))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for i, table in enumerate(v):
                out.update(flatten_config(table, f"{name}." if len(v) == 1 else f"{name}[{i}]."))
        elif isinstance(v, list):
            out[name] = json.dumps(v)
        else:
            out[name] = v
    return out


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _write_table(path: Path, table: pa.Table) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def _read_tables(files: Iterable[Path]) -> list[pa.Table]:
    tables = []
    for f in files:
        try:
            tables.append(pq.read_table(f))
        except (OSError, pa.ArrowInvalid):
            # A file cut short by a crash: that point simply runs again.
            continue
    return tables


class Store:
    """A results directory (created on first write)."""

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = Path(path)

    # -- manifest ----------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def manifest(self) -> dict:
        try:
            return json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}

    def exists(self) -> bool:
        return self.manifest_path.exists()

    def _write_manifest(self, m: dict) -> None:
        _atomic_write_bytes(self.manifest_path, (json.dumps(m, indent=1, sort_keys=False) + "\n").encode())

    def open_run(self, scenario: Scenario, executor: str, workers: Optional[int]) -> int:
        """Records the scenario and its points (merged with earlier runs) and starts a run entry.

        Returns the run number.
        """
        (self.path / POINTS).mkdir(parents=True, exist_ok=True)
        import ibnetsim

        m = self.manifest()
        points = {p["key"]: p for p in m.get("points", [])}
        for pt in scenario.points:
            points[pt.key] = {"key": pt.key, "index": pt.index, "swept": pt.swept, "config": pt.config}
        runs = m.get("runs", [])
        run_no = len(runs) + 1
        # The scenario text is the file's bytes, decoded as UTF-8 without newline translation.
        provenance = {
            "ibnetsim_version": ibnetsim.__version__,
            "build_commit": ibnetsim.__build_commit__,
            "scenario_sha256": hashlib.sha256(scenario.text.encode("utf-8")).hexdigest(),
        }
        # Each run keeps its own provenance: rows carry their run number, so a
        # sweep resumed under another version still says which code made each row.
        runs.append(
            {
                "run": run_no,
                "started": _now(),
                "finished": None,
                "executor": executor,
                "workers": workers,
                "points": len(scenario.points),
                **provenance,
                "host": socket.gethostname(),
            }
        )
        m.update(
            {
                "format": FORMAT,
                "created": m.get("created", _now()),
                "scenario": {
                    "path": str(scenario.path.resolve()) if scenario.path else None,
                    "name": scenario.name,
                    "description": scenario.description,
                    "kind": scenario.kind,
                    "plugins": scenario.plugins,
                    "text": scenario.text,
                },
                "axes": {a.name: list(a.values) for a in scenario.axes},
                "points": list(points.values()),
                **provenance,
                "host": socket.gethostname(),
                "platform": platform.platform(),
                "python": sys.version.split()[0],
                "runs": runs,
            }
        )
        self._write_manifest(m)
        return run_no

    def close_run(self, run_no: int, **summary: Any) -> None:
        m = self.manifest()
        for r in m.get("runs", []):
            if r["run"] == run_no:
                r["finished"] = _now()
                r.update(summary)
        self._write_manifest(m)

    # -- rows --------------------------------------------------------------
    def write_point(self, point: Point, result: dict, run_no: int = 0) -> dict:
        """Writes one finished point (ok or error) and returns its full row."""
        row: dict[str, Any] = {"key": point.key, "index": point.index}
        row.update(flatten_config(point.config))
        row.update(result)
        row["finished_at"] = _now()
        row["run"] = run_no
        _write_table(self.path / POINTS / f"{point.key}.parquet", pa.Table.from_pylist([row]))
        return row

    def _tables(self) -> list[pa.Table]:
        files = []
        if (self.path / RESULTS).exists():
            files.append(self.path / RESULTS)
        if (self.path / POINTS).is_dir():
            files += sorted((self.path / POINTS).glob("*.parquet"), key=lambda p: p.stat().st_mtime)
        return _read_tables(files)

    def rows(self) -> pd.DataFrame:
        """Every row, one per key (the newest), ordered by point index."""
        tables = self._tables()
        if not tables:
            return pd.DataFrame(columns=["key", "index", "status", "error"])
        table = pa.concat_tables(tables, promote_options="permissive")
        df = table.to_pandas()
        df = df.drop_duplicates("key", keep="last")
        return df.sort_values(["index", "key"], kind="stable").reset_index(drop=True)

    def finished_keys(self, include_failed: bool = False) -> set[str]:
        """Keys of points that need not run again: ok ones, and failed ones too if asked."""
        df = self.rows()
        if df.empty:
            return set()
        if include_failed:
            return set(df["key"])
        return set(df.loc[df["status"] == "ok", "key"])

    def compact(self) -> None:
        """Merges points/*.parquet into results.parquet (atomically), then removes them."""
        pdir = self.path / POINTS
        point_files = sorted(pdir.glob("*.parquet")) if pdir.is_dir() else []
        if not point_files:
            return
        df = self.rows()
        _write_table(self.path / RESULTS, pa.Table.from_pandas(df, preserve_index=False))
        for f in point_files:
            f.unlink(missing_ok=True)


def load_results(path: Union[str, os.PathLike], ok_only: bool = False) -> pd.DataFrame:
    """A sweep's rows as a pandas DataFrame: ``ibnetsim.experiment.load_results("out/")``."""
    store = Store(path)
    if not store.exists() and not (Path(path) / RESULTS).exists():
        raise FileNotFoundError(f"{path}: not a results directory (no {MANIFEST})")
    df = store.rows()
    if ok_only and not df.empty:
        df = df[df["status"] == "ok"].reset_index(drop=True)
    return df
