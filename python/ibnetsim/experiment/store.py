"""The results directory of a sweep: a manifest plus one Parquet row per point.

Layout::

    DIR/manifest.json       scenario text, path and SHA-256, axes, every expanded
                            point (key, index, swept values, resolved config),
                            ibnetsim version and build commit, host, and one
                            entry per run
    DIR/points/KEY.parquet  one row, written (atomically) as soon as a point finishes
    DIR/tables/NAME/KEY.parquet  a table a point returned besides its row (a
                            time series), written before the row
    DIR/results.parquet     all rows, compacted from points/ at the end of each run
    DIR/.sweep.lock         held (flock) by the sweep writing here, with its pid

Writing each point on its own the moment it finishes is what makes an
interrupted or crashed sweep lose nothing: a re-run reads the keys already
present and runs only the rest (``finished_keys``). Compaction merges the point
files into ``results.parquet`` and removes them; if it is interrupted, the
duplicate rows it leaves are dropped on load (newest row of a key wins).

A Parquet file that cannot be read (a disk fault, a copy cut short) is reported
by a warning naming it, through the ``ibnetsim.experiment.store`` logger; its
points count as not run, so the next sweep runs them again, and compaction
renames it to ``NAME.corrupt`` instead of dropping its bytes.

A row holds ``key``, ``index``, ``status`` (``ok``/``error``), ``error`` and
``traceback``, every resolved parameter as a dotted column (``fabric.switches``,
lists as JSON text), the kind's result columns, and the runtime columns
(:data:`RUNTIME_COLUMNS`), which are the only ones that differ between
executors.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import logging
import os
import platform
import re
import socket
import sys
import uuid
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Union

from ibnetsim._lazy import pandas as pd
from ibnetsim._lazy import pyarrow as pa
from ibnetsim._lazy import parquet as pq

from ibnetsim.errors import ResultsError
from ibnetsim.experiment.scenario import Point, Scenario

__all__ = ["Store", "load_results", "load_table", "flatten_config", "RUNTIME_COLUMNS", "FORMAT"]

FORMAT = 1
MANIFEST = "manifest.json"
RESULTS = "results.parquet"
POINTS = "points"
TABLES_DIR = "tables"
#: The key of a result under which a point returns whole tables (``kinds.TABLES``).
_TABLES_KEY = "_tables"
LOCK = ".sweep.lock"

log = logging.getLogger(__name__)
_TEMP_FILE = re.compile(r"\..+\.[0-9a-f]{32}\.tmp")

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


def _temp_path(path: Path) -> Path:
    """Where ``path`` is written before it is renamed into place; a writer
    killed in between leaves it behind, for :meth:`Store.writing` to remove
    (it matches ``_TEMP_FILE``)."""
    return path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = _temp_path(path)
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _write_table(path: Path, table: pa.Table) -> None:
    tmp = _temp_path(path)
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def _set_aside(path: Path) -> Path:
    """Renames an unreadable file to NAME.corrupt (NAME.corrupt.2, … if taken), out of every glob."""
    target = path.with_name(path.name + ".corrupt")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt.{n}")
    os.replace(path, target)
    return target


class Store:
    """A results directory (created on first write)."""

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = Path(path)
        #: The files the last :meth:`rows` could not read as Parquet.
        self.unreadable: list[Path] = []

    # -- manifest ----------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def manifest(self) -> dict:
        try:
            m = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ResultsError(self._corrupt_manifest(str(e))) from None
        if not isinstance(m, dict):
            raise ResultsError(self._corrupt_manifest(f"a JSON {type(m).__name__}, not an object"))
        return m

    def _corrupt_manifest(self, why: str) -> str:
        return (
            f"{self.manifest_path}: not a results manifest ({why}); rename it (e.g. to {MANIFEST}.corrupt) "
            f"and run the sweep again: it writes a new one and keeps the finished points in {RESULTS} and {POINTS}/"
        )

    def exists(self) -> bool:
        return self.manifest_path.exists()

    def require(self) -> None:
        """Raises FileNotFoundError unless this is a results directory."""
        if not self.exists() and not (self.path / RESULTS).exists():
            raise FileNotFoundError(f"{self.path}: not a results directory (no {MANIFEST})")

    def _write_manifest(self, m: dict) -> None:
        _atomic_write_bytes(self.manifest_path, (json.dumps(m, indent=1, sort_keys=False) + "\n").encode())

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Holds the directory for one sweep: another sweep into it fails at
        once (instead of running the same points twice) with a
        :class:`ResultsError` naming the holder's pid and host. Temporary files
        left by a writer that was killed (``kill -9``, a node failure) are
        removed once the lock is held, as nobody else can be writing them."""
        self.path.mkdir(parents=True, exist_ok=True)
        lock_path = self.path / LOCK
        # a+: opening must not erase the pid of a sweep that holds the lock.
        with open(lock_path, "a+", encoding="utf-8") as f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.seek(0)
                pid, _, host = f.read().strip().partition(" ")
                who = f"another sweep (pid {pid} on {host})" if pid and host else "another sweep"
                raise ResultsError(
                    f"{self.path}: {who} is writing to this results directory (it holds {lock_path}); "
                    "wait for it to finish, or give another directory with -o"
                ) from None
            f.seek(0)
            f.truncate()
            f.write(f"{os.getpid()} {socket.gethostname()}\n")
            f.flush()
            for d in (self.path, self.path / POINTS):
                if d.is_dir():
                    for tmp in d.iterdir():
                        if _TEMP_FILE.fullmatch(tmp.name):
                            tmp.unlink(missing_ok=True)
            yield

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
                "warnings": scenario.warnings,
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
        result = dict(result)
        # Tables first: a point whose row is stored has its tables too.
        for name, columns in result.pop(_TABLES_KEY, {}).items():
            folder = self.path / TABLES_DIR / name
            folder.mkdir(parents=True, exist_ok=True)
            _write_table(folder / f"{point.key}.parquet", pa.table(columns))
            result[f"{name}_rows"] = len(next(iter(columns.values()), []))
        row.update(result)
        row["finished_at"] = _now()
        row["run"] = run_no
        _write_table(self.path / POINTS / f"{point.key}.parquet", pa.Table.from_pylist([row]))
        return row

    def _files(self) -> list[Path]:
        files = []
        if (self.path / RESULTS).exists():
            files.append(self.path / RESULTS)
        if (self.path / POINTS).is_dir():
            files += sorted((self.path / POINTS).glob("*.parquet"), key=lambda p: p.stat().st_mtime)
        return files

    def _read(self) -> tuple[list[pa.Table], dict[Path, str]]:
        """The tables of the results files, oldest first, and why each file that is not readable Parquet is not."""
        tables, unreadable = [], {}
        for f in self._files():
            try:
                tables.append(pq.read_table(f))
            except FileNotFoundError:
                # Compacted into results.parquet by a sweep since the directory was listed.
                continue
            except PermissionError:
                # Not corrupt: the user has to fix it, and setting it aside would lose it.
                raise
            except (pa.ArrowException, OSError) as e:
                unreadable[f] = str(e)
        return tables, unreadable

    def rows(self) -> pd.DataFrame:
        """Every row, one per key (the newest), ordered by point index.

        Files that are not readable Parquet are left out, with a warning naming
        each; :attr:`unreadable` lists them after the call."""
        tables, unreadable = self._read()
        for f, why in unreadable.items():
            log.warning("%s: not readable Parquet (%s); its points count as not run: a sweep into %s runs them again", f, why, self.path)
        self.unreadable = list(unreadable)
        return self._frame(tables)

    @staticmethod
    def _frame(tables: list[pa.Table]) -> pd.DataFrame:
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
        """Merges points/*.parquet into results.parquet (atomically), then removes them.

        An unreadable file among them is renamed to ``NAME.corrupt`` (with a
        warning), not deleted: its rows are missing from the results either way,
        but its bytes may still be worth a look."""
        pdir = self.path / POINTS
        point_files = sorted(pdir.glob("*.parquet")) if pdir.is_dir() else []
        if not point_files:
            return
        tables, unreadable = self._read()
        for f, why in unreadable.items():
            log.warning("%s: not readable Parquet (%s); set aside as %s", f, why, _set_aside(f).name)
        _write_table(self.path / RESULTS, pa.Table.from_pandas(self._frame(tables), preserve_index=False))
        for f in point_files:
            f.unlink(missing_ok=True)


def load_table(path: Union[str, os.PathLike], name: str, keys: Optional[Iterable[str]] = None) -> pd.DataFrame:
    """Table ``name`` of every point of a sweep that stored one (``"series"``:
    the time series of ``[metrics] series_interval_ns``), with the point's
    ``key`` and ``index`` in front; ``keys`` picks points. Empty when no point
    stored it."""
    store = Store(path)
    store.require()
    rows = store.rows()
    count = f"{name}_rows"
    # Only points whose stored row says they wrote the table: a point run
    # again without it leaves a stale file behind.
    rows = rows[rows[count].notna()] if count in rows else rows.iloc[0:0]
    index = dict(zip(rows["key"], rows["index"]))
    wanted = None if keys is None else set(keys)
    frames = []
    folder = store.path / TABLES_DIR / name
    for f in sorted(folder.glob("*.parquet")) if folder.is_dir() else []:
        key = f.stem
        if key not in index or (wanted is not None and key not in wanted):
            continue
        df = pq.read_table(f).to_pandas()
        df.insert(0, "index", index[key])
        df.insert(0, "key", key)
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=["key", "index"])
    return pd.concat(frames, ignore_index=True).sort_values(["index"], kind="stable").reset_index(drop=True)


def load_results(path: Union[str, os.PathLike], ok_only: bool = False) -> pd.DataFrame:
    """A sweep's rows as a pandas DataFrame: ``ibnetsim.experiment.load_results("out/")``."""
    store = Store(path)
    store.require()
    df = store.rows()
    if ok_only and not df.empty:
        df = df[df["status"] == "ok"].reset_index(drop=True)
    return df
