"""The reproduce registry: paper experiments as data, and the paper-vs-ours report.

An entry is a TOML file in ``python/ibnetsim/experiments/`` named after its id
(``author-year-figure``). It names a scenario file (and optionally a scaled-down
``quick_scenario`` for CI) and lists the values the paper reports, each with the
table or figure it comes from and how to compute ours from the results::

    id = "alfaro2001-table1"
    title = "Time to send a full arbitration frame per link rate"
    paper = "001"
    reference = "F.J. Alfaro, J.L. Sánchez, J. Duato, ... 2001"
    scenario = "alfaro2001-table1.scenario.toml"

    [[value]]
    quantity = "T_frame, 1x"
    citation = "Table 1, row 1x"
    paper = 3.342336
    unit = "ms"
    column = "t_frame_ms"                 # a result column, or a pandas expression
    where = { "tframe.link_width" = "1x" }   # which rows (a list means any of)
    aggregate = "mean"                    # mean, median, min, max or single
    tolerance = { rel = 1e-9 }            # or { abs = ... }, or { range = [lo, hi] }
                                          # (e.g. the paper's own min-max); none = context

A value may also be a ratio of two row sets matched on some columns (the paper's
"factor of throughput increase"): ``denominator = { where = {...} }`` and
``match = ["fabric.switches", "seed"]`` divide each matched pair, then aggregate.

Entries are data, not code; adding a paper experiment is adding files here.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from ibnetsim._lazy import pandas as pd

from ibnetsim.experiment import scenario as _scenario
from ibnetsim.experiment.numfmt import exact, number, percent, significant_digits
from ibnetsim.experiment.scenario import ScenarioError, _Locator, tomllib
from ibnetsim.experiment.sweep import PROGRESS_INTERVAL_S

__all__ = [
    "EXPERIMENTS_DIR",
    "Entry",
    "Value",
    "Comparison",
    "Report",
    "entries",
    "entry",
    "compare",
    "reproduce",
    "select_rows",
    "display_row",
    "comparison_of",
]

EXPERIMENTS_DIR = Path(__file__).resolve().parent.parent / "experiments"

AGGREGATES = ("mean", "median", "min", "max", "single")
_ENTRY_KEYS = {"id", "title", "paper", "reference", "scenario", "quick_scenario", "notes", "value"}
_VALUE_KEYS = {"quantity", "citation", "paper", "unit", "column", "where", "aggregate", "tolerance", "note", "denominator", "match", "peak_over", "deviation"}

#: Verdicts that do not fail an entry: the value agrees, is only context, is
#: not run by a quick run, or is outside with the cause explained in the entry.
PASSING_VERDICTS = ("within", "context", "not in quick run", "known deviation")


@dataclass(frozen=True)
class Value:
    quantity: str
    citation: str
    paper: float
    column: str
    unit: str = ""
    where: dict = field(default_factory=dict)
    aggregate: str = "mean"
    tolerance_abs: Optional[float] = None
    tolerance_rel: Optional[float] = None
    #: Ours must lie in [lo, hi], e.g. the spread the paper reports around its average.
    tolerance_range: Optional[tuple[float, float]] = None
    note: str = ""
    denominator_where: Optional[dict] = None
    match: tuple[str, ...] = ()
    #: A swept key (e.g. ``traffic.load``): rows equal in ``match`` form one
    #: curve over it, and the curve counts once, with its largest ``column``
    #: (the saturation throughput of a load sweep).
    peak_over: Optional[str] = None
    #: Why ours is outside the tolerance, when that is understood and not a
    #: fault (a model difference, a reading of the paper): the verdict is then
    #: "known deviation", shown as such, and does not fail the entry. Only
    #: used when ours is outside; a value back within it says "within".
    deviation: str = ""

    @property
    def has_tolerance(self) -> bool:
        return self.tolerance_abs is not None or self.tolerance_rel is not None or self.tolerance_range is not None

    def tolerance_text(self) -> str:
        parts = []
        if self.tolerance_range is not None:
            parts.append(f"in [{self.tolerance_range[0]:g}, {self.tolerance_range[1]:g}]")
        if self.tolerance_abs is not None:
            parts.append(f"±{self.tolerance_abs:g}")
        if self.tolerance_rel is not None:
            parts.append(f"±{self.tolerance_rel * 100:g} %")
        return " or ".join(parts) if parts else "context"

    def tolerance_bands(self) -> list[tuple[float, float]]:
        """The intervals ours may lie in (any of them), for drawing."""
        bands = []
        if self.tolerance_range is not None:
            bands.append((float(self.tolerance_range[0]), float(self.tolerance_range[1])))
        if self.tolerance_abs is not None:
            bands.append((self.paper - self.tolerance_abs, self.paper + self.tolerance_abs))
        if self.tolerance_rel is not None:
            half = abs(self.paper) * self.tolerance_rel
            bands.append((self.paper - half, self.paper + half))
        return bands


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    paper: str
    reference: str
    scenario: Path
    quick_scenario: Path
    notes: str
    values: tuple[Value, ...]
    path: Path
    #: Every scenario of the entry (``scenario`` may list several, e.g. sweeps
    #: whose keys cannot share one grid); their results are compared together.
    scenarios: tuple[Path, ...] = ()
    quick_scenarios: tuple[Path, ...] = ()

    @property
    def short_reference(self) -> str:
        """First author and year (``Alfaro et al. 2001``), for figure legends; the paper's
        number when the reference does not read as ``Authors, "Title", …, year``."""
        names = [a.strip() for a in self.reference.split('"')[0].split(",") if a.strip()]
        years = re.findall(r"\b(?:19|20)\d\d\b", self.reference)
        if not names or not years:
            return self.paper
        return f"{names[0].split()[-1]}{' et al.' if len(names) > 1 else ''} {years[-1]}"


def _entry_error(loc: _Locator, path: tuple, msg: str) -> ScenarioError:
    return loc.error(path, msg)


def _load_entry(path: Path) -> Entry:
    text = path.read_text(encoding="utf-8")
    loc = _Locator(text, str(path))
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"invalid TOML: {e}", str(path)) from None
    for k in raw:
        if k not in _ENTRY_KEYS:
            raise loc.error((k,), "unknown key; expected one of: " + ", ".join(sorted(_ENTRY_KEYS)))
    for k in ("id", "title", "paper", "reference"):
        if not isinstance(raw.get(k), str) or not raw[k]:
            raise ScenarioError(f"missing or empty `{k}` (a string)", str(path), loc.line((k,)), k)
    if raw["id"] != path.stem:
        raise loc.error(("id",), f"the id '{raw['id']}' must match the file name '{path.stem}'")
    def files(key: str, names: Any) -> tuple[Path, ...]:
        listed = [names] if isinstance(names, str) else names
        if not isinstance(listed, list) or not listed or not all(isinstance(n, str) and n for n in listed):
            raise ScenarioError(f"missing or empty `{key}` (a file name, or a list of them)", str(path), loc.line((key,)), key)
        out = tuple(path.parent / n for n in listed)
        for p in out:
            if not p.exists():
                raise loc.error((key,), f"no such file: {p}")
        if len({p.stem for p in out}) != len(out):
            raise loc.error((key,), "two scenarios share a file name; their results would share a directory")
        return out

    scens = files("scenario", raw.get("scenario"))
    quicks = files("quick_scenario", raw.get("quick_scenario", raw.get("scenario")))
    values = []
    raw_values = raw.get("value", [])
    if not isinstance(raw_values, list) or not raw_values:
        raise ScenarioError("an entry needs at least one [[value]]", str(path), None, "value")
    for i, v in enumerate(raw_values):
        base = ("value", f"#{i + 1}")
        for k in v:
            if k not in _VALUE_KEYS:
                raise loc.error(base + (k,), f"unknown key in [[value]] #{i + 1}; expected one of: " + ", ".join(sorted(_VALUE_KEYS)))
        for k in ("quantity", "citation", "column"):
            if not isinstance(v.get(k), str) or not v[k]:
                raise ScenarioError(f"[[value]] #{i + 1} needs `{k}` (a string)", str(path), loc.line(base), f"value #{i + 1}.{k}")
        if not isinstance(v.get("paper"), (int, float)) or isinstance(v.get("paper"), bool):
            raise ScenarioError(f"[[value]] #{i + 1} needs `paper`, the reported number", str(path), loc.line(base), f"value #{i + 1}.paper")
        agg = v.get("aggregate", "mean")
        if agg not in AGGREGATES:
            raise loc.error(base + ("aggregate",), f"unknown aggregate '{agg}'; expected one of {', '.join(AGGREGATES)}")
        tol = v.get("tolerance", {})
        if not isinstance(tol, dict) or set(tol) - {"abs", "rel", "range"}:
            raise loc.error(base + ("tolerance",), "expected a table with `abs` and/or `rel`, or `range = [lo, hi]`")
        rng = tol.get("range")
        if rng is not None and not (
            isinstance(rng, list) and len(rng) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in rng) and rng[0] <= rng[1]
        ):
            raise loc.error(base + ("tolerance", "range"), f"expected [lo, hi] with lo <= hi, got {rng!r}")
        den = v.get("denominator")
        if den is not None and (not isinstance(den, dict) or set(den) != {"where"}):
            raise loc.error(base + ("denominator",), "expected { where = { ... } }")
        if den is not None and not v.get("match"):
            raise loc.error(base + ("match",), "a ratio (denominator) needs `match`, the columns that pair rows")
        if "deviation" in v and (not isinstance(v["deviation"], str) or not v["deviation"].strip() or not tol):
            raise loc.error(base + ("deviation",), "expected the reason ours is outside the tolerance (a non-empty string), on a value with a tolerance")
        if v.get("peak_over") is not None and (not isinstance(v["peak_over"], str) or not v.get("match")):
            raise loc.error(base + ("peak_over",), "expected a swept key (a string), with `match` naming the columns that tell curves apart")
        values.append(
            Value(
                quantity=v["quantity"],
                citation=v["citation"],
                paper=float(v["paper"]),
                column=v["column"],
                unit=v.get("unit", ""),
                where=dict(v.get("where", {})),
                aggregate=agg,
                tolerance_abs=tol.get("abs"),
                tolerance_rel=tol.get("rel"),
                tolerance_range=None if rng is None else (float(rng[0]), float(rng[1])),
                note=v.get("note", ""),
                denominator_where=dict(den["where"]) if den else None,
                match=tuple(v.get("match", ())),
                peak_over=v.get("peak_over"),
                deviation=v.get("deviation", "").strip(),
            )
        )
    return Entry(
        id=raw["id"],
        title=raw["title"],
        paper=raw["paper"],
        reference=raw["reference"],
        scenario=scens[0],
        quick_scenario=quicks[0],
        notes=raw.get("notes", "").strip(),
        values=tuple(values),
        path=path,
        scenarios=scens,
        quick_scenarios=quicks,
    )


def entries(directory: Union[str, os.PathLike, None] = None) -> list[Entry]:
    """Every registry entry (files ``*.toml`` that are not ``*.scenario.toml``), sorted by id."""
    d = Path(directory) if directory else EXPERIMENTS_DIR
    files = sorted(p for p in d.glob("*.toml") if not p.name.endswith(".scenario.toml"))
    return [_load_entry(p) for p in files]


def entry(id: str, directory: Union[str, os.PathLike, None] = None) -> Entry:
    d = Path(directory) if directory else EXPERIMENTS_DIR
    p = d / f"{id}.toml"
    if not p.exists():
        known = ", ".join(sorted(q.stem for q in d.glob("*.toml") if not q.name.endswith(".scenario.toml")))
        raise KeyError(f"no experiment '{id}' (known: {known})")
    return _load_entry(p)


# --------------------------------------------------------------------------- comparing
@dataclass
class Comparison:
    value: Value
    ours: Optional[float]
    n: int
    problem: str = ""
    #: A quick run leaves out part of the sweep; values it has no rows for are not judged.
    quick: bool = False

    @property
    def diff(self) -> Optional[float]:
        return None if self.ours is None else self.ours - self.value.paper

    @property
    def rel(self) -> Optional[float]:
        if self.ours is None or self.value.paper == 0:
            return None
        return (self.ours - self.value.paper) / abs(self.value.paper)

    @property
    def verdict(self) -> str:
        if self.ours is None:
            return "not in quick run" if self.quick and self.n == 0 else "missing"
        if not self.value.has_tolerance:
            return "context"
        d = abs(self.diff)
        rng = self.value.tolerance_range
        ok = (
            (self.value.tolerance_abs is not None and d <= self.value.tolerance_abs)
            or (self.value.tolerance_rel is not None and self.rel is not None and abs(self.rel) <= self.value.tolerance_rel)
            or (rng is not None and rng[0] <= self.ours <= rng[1])
        )
        if ok:
            return "within"
        return "known deviation" if self.value.deviation else "outside"


def select_rows(df: pd.DataFrame, where: dict) -> pd.DataFrame:
    """The rows of ``df`` a value's ``where`` names (a list means any of its values)."""
    mask = pd.Series(True, index=df.index)
    for col, want in where.items():
        if col not in df:
            raise KeyError(f"where: no column '{col}' in the results")
        if isinstance(want, list):
            mask &= df[col].isin(want)
        else:
            mask &= df[col] == want
    return df[mask]


def _column(df: pd.DataFrame, expr: str) -> pd.Series:
    if expr in df:
        return pd.to_numeric(df[expr], errors="coerce")
    return pd.to_numeric(df.eval(expr), errors="coerce")


def _aggregate(s: pd.Series, how: str) -> tuple[Optional[float], str]:
    s = s.dropna()
    if s.empty:
        return None, "no rows"
    if how == "single":
        if len(s) != 1:
            return None, f"{len(s)} rows where one was expected"
        return float(s.iloc[0]), ""
    return float(getattr(s, how)()), ""


def _curves(rows: pd.DataFrame, v: Value) -> pd.DataFrame:
    """``match`` columns and ``_v``: the value of each row, or with ``peak_over``
    the largest of each curve (rows equal in ``match``)."""
    t = rows.assign(_v=_column(rows, v.column))[list(v.match) + ["_v"]]
    if v.peak_over is not None:
        if v.peak_over not in rows:
            raise KeyError(f"peak_over: no column '{v.peak_over}' in the results")
        t = t.groupby(list(v.match), dropna=False, as_index=False)["_v"].max()
    return t


def compare(values: tuple[Value, ...], df: pd.DataFrame, quick: bool = False) -> list[Comparison]:
    """Computes our number for every paper value from the (ok) result rows."""
    out = []
    ok = df[df["status"] == "ok"] if "status" in df else df
    for v in values:
        try:
            num = select_rows(ok, v.where)
            if v.denominator_where is None and v.peak_over is None:
                series = _column(num, v.column)
            elif v.denominator_where is None:
                series = _curves(num, v)["_v"]
            else:
                den = select_rows(ok, v.denominator_where)
                m = _curves(num, v).merge(_curves(den, v), on=list(v.match), suffixes=("_n", "_d"))
                series = m["_v_n"] / m["_v_d"]
            ours, problem = _aggregate(series, v.aggregate)
            out.append(Comparison(v, ours, int(series.notna().sum()), problem, quick))
        except (KeyError, ValueError, SyntaxError, TypeError) as e:
            out.append(Comparison(v, None, -1, f"{type(e).__name__}: {e}"))
    return out


@dataclass
class Report:
    entry: Entry
    quick: bool
    comparisons: list[Comparison]
    directory: Path
    figures: list[Path]
    summary: Any = None
    #: One results directory per scenario; ``directory`` itself when there is one.
    result_dirs: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.verdict in PASSING_VERDICTS for c in self.comparisons)

    @property
    def command(self) -> str:
        return f"ibnetsim reproduce {self.entry.id}{' --quick' if self.quick else ''}"

    def rows(self) -> list[dict[str, Any]]:
        rows = []
        for c in self.comparisons:
            v = c.value
            rows.append(
                {
                    "quantity": v.quantity,
                    "citation": v.citation,
                    "paper": v.paper,
                    "ours": c.ours,
                    "unit": v.unit,
                    "diff": c.diff,
                    "rel_diff": c.rel,
                    "n": max(c.n, 0),
                    "tolerance": v.tolerance_text(),
                    "tolerance_bands": v.tolerance_bands(),
                    "verdict": c.verdict,
                    # The verdict already says a quick run has no rows for it.
                    "note": (c.problem if c.verdict != "not in quick run" else "")
                    or (v.deviation if c.verdict == "known deviation" else v.note),
                    # How ours was computed, as in the entry: the figures place the paper's value by it.
                    "column": v.column,
                    "where": v.where,
                    "aggregate": v.aggregate,
                    "denominator": None if v.denominator_where is None else {"where": v.denominator_where},
                    "match": list(v.match),
                    "peak_over": v.peak_over,
                }
            )
        return rows

    def to_json(self) -> dict[str, Any]:
        e = self.entry
        return {
            "id": e.id,
            "title": e.title,
            "paper": e.paper,
            "reference": e.reference,
            "short_reference": e.short_reference,
            "notes": e.notes,
            "command": self.command,
            "quick": self.quick,
            "ok": self.ok,
            "results": [os.path.relpath(d, self.directory) for d in self.result_dirs or [self.directory]],
            "values": self.rows(),
        }

    def markdown(self) -> str:
        e = self.entry
        import ibnetsim

        lines = [
            f"# {e.id}: {e.title}",
            "",
            f"*{e.reference}* (paper {e.paper})",
            "",
            f"Run: `{self.command}` "
            f"({'quick, scaled-down' if self.quick else 'full, the paper parameters'}), "
            f"ibnetsim {ibnetsim.__version__} (build commit {ibnetsim.__build_commit__}), {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds')}.",
            "",
        ]
        if e.notes:
            lines += [e.notes, ""]
        lines += [
            "| quantity | source | paper | ours | unit | ours − paper | relative | n | tolerance | verdict |",
            "|---|---|---:|---:|---|---:|---:|---:|---|---|",
        ]
        rows = self.rows()
        for r in rows:
            t = display_row(r)
            lines.append(
                f"| {r['quantity']} | {r['citation']} | {t['paper']} | {t['ours']} | {r['unit']} | "
                f"{t['diff']} | {t['relative']} | {t['n']} | {r['tolerance']} | {r['verdict']} |"
            )
        notes = value_notes(rows)
        if notes:
            lines += ["", "Notes:", ""] + [f"- {n}" for n in notes]
        lines += ["", verdict_summary(rows)]
        if self.figures:
            lines += ["", "## Figures", ""]
            for f in self.figures:
                if f.suffix == ".png":
                    lines.append(f"![{f.stem}]({os.path.relpath(f, self.directory)})")
        return "\n".join(lines) + "\n"

    def write(self) -> Path:
        p = self.directory / "report.md"
        p.write_text(self.markdown(), encoding="utf-8")
        (self.directory / "report.json").write_text(json.dumps(self.to_json(), indent=1, default=_json_default) + "\n", encoding="utf-8")
        return p


def display_row(r: dict[str, Any]) -> dict[str, str]:
    """The numbers of a :meth:`Report.rows` row (or a report.json value) as printed:
    the paper's as it gives them, ours to one significant digit more than the
    paper's (at least four), the difference signed, the relative one in percent."""
    digits = max(4, significant_digits(r["paper"]) + 1)
    return {
        "paper": exact(r["paper"]),
        "ours": number(r["ours"], digits),
        "diff": number(r["diff"], 3, signed=True),
        "relative": percent(r["rel_diff"]),
        "n": number(r["n"]),
    }


def value_notes(rows: list[dict[str, Any]]) -> list[str]:
    """The notes of the values, each once, with the quantities it is about."""
    notes: dict[str, list[str]] = {}
    for r in rows:
        if r["note"]:
            notes.setdefault(r["note"], []).append(r["quantity"])
    return [
        f"{quantities[0]}: {note}" if len(quantities) == 1 else f"{note} ({len(quantities)} rows: {'; '.join(quantities)})"
        for note, quantities in notes.items()
    ]


def verdict_summary(rows: list[dict[str, Any]]) -> str:
    within = sum(r["verdict"] == "within" for r in rows)
    known = sum(r["verdict"] == "known deviation" for r in rows)
    judged = sum(r["verdict"] in ("within", "outside", "missing", "known deviation") for r in rows)
    text = f"{within} of {judged} values with a tolerance are within it."
    if known:
        text += f" {known} {'is a known deviation' if known == 1 else 'are known deviations'}, explained in {'its note' if known == 1 else 'their notes'}."
    return text


def comparison_of(directory: Union[str, os.PathLike]) -> Optional[dict[str, Any]]:
    """The comparison ``reproduce`` wrote for a results directory (its report.json):
    beside the results, or one level up when the entry has several scenarios and
    this directory is one of them."""
    d = Path(directory)
    for path, name in ((d / "report.json", "."), (d.parent / "report.json", d.name)):
        if path.is_file():
            rep = json.loads(path.read_text(encoding="utf-8"))
            if name in rep.get("results", ["."]):
                return rep
    return None


def _json_default(o: Any) -> Any:
    if isinstance(o, float) and math.isnan(o):
        return None
    return str(o)


def reproduce(
    id: str,
    quick: bool = False,
    executor: Any = None,
    out_dir: Union[str, os.PathLike, None] = None,
    progress: bool = True,
    directory: Union[str, os.PathLike, None] = None,
    progress_interval: float = PROGRESS_INTERVAL_S,
) -> Report:
    """Runs an experiment (resuming if ``out_dir`` holds part of it), plots it and writes the report."""
    from ibnetsim.experiment.plots import plot_results
    from ibnetsim.experiment.report import write_html_report
    from ibnetsim.experiment.store import load_results
    from ibnetsim.experiment.sweep import run_sweep

    e = entry(id, directory)
    files = e.quick_scenarios if quick else e.scenarios
    out = Path(out_dir) if out_dir else Path("reproduce") / (f"{e.id}-quick" if quick else e.id)
    # One results directory per scenario (out itself when there is one).
    dirs = [out] if len(files) == 1 else [out / f.name.removesuffix(".toml").removesuffix(".scenario") for f in files]
    frames, summary = [], None
    for f, d in zip(files, dirs):
        s = run_sweep(_scenario.load(f), d, executor, progress=progress, progress_interval=progress_interval)
        if summary is None:
            summary = s
        else:
            summary.total += s.total
            summary.skipped += s.skipped
            summary.done += s.done
            summary.failed += s.failed
            summary.errors += s.errors
            summary.elapsed_s += s.elapsed_s
        frames.append(load_results(d))
        if s.interrupted:
            summary.interrupted = True
            break
    df = pd.concat(frames, ignore_index=True, sort=False) if len(frames) > 1 else frames[0]
    rep = Report(e, quick, compare(e.values, df, quick), out, [], summary, dirs)
    if not summary.interrupted:
        # The figures show the paper's values beside ours, so they follow the comparison.
        paper = rep.to_json()
        for d in dirs:
            rep.figures += plot_results(d, paper=paper)
    rep.write()
    if not summary.interrupted:
        # Each page reads the comparison from the report.json just written.
        for d in dirs:
            write_html_report(d)
    return rep
