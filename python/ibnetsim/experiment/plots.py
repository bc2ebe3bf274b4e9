"""The standard figures of a results directory, as PNG and SVG (matplotlib, Agg backend).

Two families:

- **Per-kind figures**: each point kind declares figures (``Figure``: a result
  column against a swept key). Every other swept key except ``seed`` makes one
  series; the line is the mean over seeds and the band their min–max range, so
  every figure shows its spread and (in the legend) its sample size.
- **Data-plane figures**, drawn whenever the rows carry these columns (the
  contract for simulation kinds, documented in docs/scenario.md):

  ====================== =====================================================
  ``offered_load``       offered load, fraction of link bandwidth
  ``accepted_load``      accepted traffic, fraction of link bandwidth
  ``latency_mean_ns``    mean packet latency
  ``port_utilization``   list: utilization of every port, in port order
  ``latency_hist_edges_ns`` / ``latency_hist_counts``  list: histogram
  ====================== =====================================================

  giving latency vs accepted traffic (one series per swept key other than seed
  and the load), throughput vs offered load, per-port utilization sorted and
  unsorted, and latency histograms and CDFs. A per-link ``channel_loads`` list
  (a routing kind's static analogue of utilization) is drawn like
  ``port_utilization``.

The results of ``ibnetsim reproduce`` carry the paper's values (report.json),
and each is drawn where it belongs (docs/experiments.md): a point of a per-kind
figure as an open diamond in the colour of its series, a bar of a category
figure as a diamond over the bar, a ratio of two curves' peaks as a dashed line
on the latency panels, and every other value in ``paper_vs_ours`` (one row
each, or a scatter of ours against the paper's when there are many). Ours
outside its tolerance (known deviations included) is marked in red.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from ibnetsim.experiment import kinds  # noqa: E402
from ibnetsim.experiment.registry import comparison_of, select_rows  # noqa: E402
from ibnetsim.experiment.store import Store, load_table  # noqa: E402
from ibnetsim.sim import plot_link_series  # noqa: E402

__all__ = ["plot_results", "FORMATS", "PROFILE_COLUMNS"]

log = logging.getLogger(__name__)

FORMATS = ("png", "svg")
PROFILE_COLUMNS = ("port_utilization", "channel_loads")


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s).strip("_")


def _is_numeric(values: Iterable[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _series_label(keys: Sequence[str], values: Sequence[Any]) -> str:
    return ", ".join(f"{k.split('.')[-1]}={v}" for k, v in zip(keys, values)) or "all points"


def _save(fig: plt.Figure, out: Path, name: str, formats: Sequence[str]) -> list[Path]:
    paths = []
    for fmt in formats:
        p = out / f"{_slug(name)}.{fmt}"
        fig.savefig(p, format=fmt, dpi=120, bbox_inches="tight")
        paths.append(p)
    plt.close(fig)
    return paths


#: Legends with more entries than this go beside the axes, where they cover no data.
LEGEND_INSIDE_MAX = 6


def _legend(ax: plt.Axes, handles: list) -> None:
    if len(handles) > LEGEND_INSIDE_MAX:
        ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    else:
        ax.legend(handles=handles, fontsize="small")


def _groups(df: pd.DataFrame, keys: list[str]) -> list[tuple[tuple, pd.DataFrame]]:
    if not keys:
        return [((), df)]
    return [((k if isinstance(k, tuple) else (k,)), g) for k, g in df.groupby(keys, sort=True, dropna=False)]


SPREAD_LABEL = "min–max over seeds"
OUTSIDE_LABEL = "outside tolerance"


def _paper_label(paper: Optional[dict]) -> str:
    return f"paper ({paper['short_reference']})" if paper and paper.get("short_reference") else "paper"


def _paper_values(paper: Optional[dict]) -> list[tuple[int, dict]]:
    """The paper's values with their position in the comparison (for the record of what was drawn)."""
    return list(enumerate((paper or {}).get("values", [])))


def _selects(d: pd.DataFrame, where: dict) -> bool:
    """Whether ``where`` names rows of ``d`` (a key of another scenario of the entry names none)."""
    try:
        return not select_rows(d, where).empty
    except KeyError:
        return False


def _paper_points(paper: Optional[dict], d: pd.DataFrame, x: str, y: str, series: list[str]) -> list[tuple[Any, Optional[tuple], float, bool, int]]:
    """The paper's values that are points of the figure of ``y`` against ``x``:
    ``y`` itself (not an expression, a ratio or a curve's peak) at one ``x``, for
    rows these results hold. Each is (x, its series or None when it spans
    several, the paper's value, whether ours is outside the tolerance, its index)."""
    out = []
    for i, r in _paper_values(paper):
        where = r.get("where") or {}
        at = where.get(x)
        if r.get("column") != y or r.get("denominator") or r.get("peak_over") or at is None or isinstance(at, list):
            continue
        if not _selects(d, where):
            continue
        pinned = all(k in where and not isinstance(where[k], list) for k in series)
        out.append((at, tuple(where[k] for k in series) if pinned else None, float(r["paper"]), _outside(r), i))
    return out


def _outside(r: dict) -> bool:
    return r.get("verdict") in ("outside", "known deviation")


def _diamond(ax: plt.Axes, x: float, y: float, colour: str, outside: bool) -> None:
    """One paper value: an open diamond, ringed in red when ours is outside its tolerance."""
    ax.plot(x, y, linestyle="none", marker="D", markersize=7, markerfacecolor="white", markeredgewidth=1.6, markeredgecolor=colour, zorder=4)
    if outside:
        ax.plot(x, y, linestyle="none", marker="o", markersize=15, markerfacecolor="none", markeredgewidth=1.4, markeredgecolor="#c00", zorder=4)


def _draw_paper(ax: plt.Axes, points: list, colours: dict, position: Any, label: str) -> list:
    """Draws the paper's points; returns their legend entries."""
    for at, key, value, outside, _ in points:
        _diamond(ax, position(at), value, colours.get(key, "black"), outside)
    handles = []
    if points:
        handles.append(Line2D([], [], linestyle="none", marker="D", markerfacecolor="white", markeredgecolor="black", markeredgewidth=1.6, label=label))
    if any(p[3] for p in points):
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=12, markerfacecolor="none", markeredgecolor="#c00", markeredgewidth=1.4, label=OUTSIDE_LABEL))
    return handles


def _metric_figure(
    df: pd.DataFrame,
    x: str,
    y: str,
    series: list[str],
    title: str,
    xlabel: str,
    ylabel: str,
    logy: bool = False,
    paper: Optional[dict] = None,
    drawn: Optional[set] = None,
) -> Optional[plt.Figure]:
    if x not in df or y not in df:
        return None
    d = df[df[y].notna()]
    if d.empty:
        return None
    xs_all = list(dict.fromkeys(d[x].tolist()))
    if len(xs_all) < 2:
        # One x is no curve: the values are in the tables (and in a kind's category figures).
        return None
    numeric_x = _is_numeric(xs_all)
    if numeric_x:
        xs_all = sorted(xs_all)
    pos = {v: i for i, v in enumerate(xs_all)}
    position = (lambda v: v) if numeric_x else pos.__getitem__
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    colours, spread = {}, False
    for values, g in _groups(d, series):
        agg = g.groupby(x, sort=False)[y].agg(["mean", "min", "max", "count"]).reset_index()
        agg["_pos"] = agg[x].map(position)
        agg = agg.sort_values("_pos")
        n = int(agg["count"].max())
        label = _series_label(series, values) + (f" (n={n})" if n > 1 else "")
        line = ax.plot(agg["_pos"], agg["mean"], marker="o", label=label)[0]
        colours[values] = line.get_color()
        if n > 1:
            ax.fill_between(agg["_pos"], agg["min"], agg["max"], alpha=0.18, color=line.get_color(), linewidth=0)
            spread = True
    handles = ax.get_legend_handles_labels()[0]
    if spread:
        handles.append(Patch(facecolor="grey", alpha=0.3, label=SPREAD_LABEL))
    label = _paper_label(paper)
    points = _paper_points(paper, d, x, y, series)
    if drawn is not None:
        drawn.update(p[4] for p in points)
    handles += _draw_paper(ax, points, colours, position, label)
    if not numeric_x:
        ax.set_xticks(range(len(xs_all)), [str(v) for v in xs_all])
    elif all(float(v).is_integer() for v in xs_all) and len(xs_all) <= 12:
        ax.set_xticks(xs_all)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if len(handles) > 1 or series:
        _legend(ax, handles)
    return fig


def _curve_figure(
    df: pd.DataFrame, x: str, y: str, by: list[str], series: list[str], title: str, xlabel: str, ylabel: str, diagonal: Optional[str] = None
) -> Optional[plt.Figure]:
    """y against x where both are measured (latency vs accepted traffic): each point of a
    curve is the mean over seeds of one setting of ``by`` (the load), in load order.
    ``diagonal`` labels a y = x line (accepted = offered)."""
    d = df[df[x].notna() & df[y].notna()]
    if d.empty:
        return None
    by = by or [x]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    spread = False
    for values, g in _groups(d, series):
        agg = g.groupby(by, sort=True).agg(mx=(x, "mean"), my=(y, "mean"), ylo=(y, "min"), yhi=(y, "max"), n=(y, "count")).reset_index()
        n = int(agg["n"].max())
        label = _series_label(series, values) + (f" (n={n} seeds)" if n > 1 else "")
        line = ax.plot(agg["mx"], agg["my"], marker="o", label=label)[0]
        if n > 1:
            ax.vlines(agg["mx"], agg["ylo"], agg["yhi"], color=line.get_color(), alpha=0.4)
            spread = True
    if diagonal:
        lim = float(d[x].max())
        ax.plot([0, lim], [0, lim], color="grey", linestyle=":", linewidth=1, label=diagonal)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    handles = ax.get_legend_handles_labels()[0]
    if spread:
        handles.append(Line2D([], [], color="grey", alpha=0.6, label=SPREAD_LABEL))
    _legend(ax, handles)
    return fig


def _swept(manifest: dict, df: pd.DataFrame) -> list[str]:
    axes = [a for a in manifest.get("axes", {}) if a in df.columns]
    return axes


def _load_key(axes: list[str]) -> list[str]:
    return [a for a in axes if a.rsplit(".", 1)[-1] in ("load", "offered_load", "injection_rate")]


def _as_list(v: Any) -> Optional[np.ndarray]:
    if v is None:
        return None
    if isinstance(v, str):
        v = json.loads(v)
    arr = np.asarray(list(v), dtype=float)
    return arr if arr.size else None


def _representatives(df: pd.DataFrame, series: list[str]) -> list[tuple[str, pd.Series]]:
    """One row per series: the lowest seed at the highest offered load (if any)."""
    out = []
    for values, g in _groups(df, series):
        g = g.sort_values(["offered_load", "seed"] if "offered_load" in g else ["seed"], ascending=[False, True] if "offered_load" in g else [True])
        row = g.iloc[0]
        label = _series_label(series, values)
        if "offered_load" in g:
            label += f" @ load {row['offered_load']:.3g}"
        out.append((label, row))
    return out


#: Latency panels show up to this multiple of their lowest latency: past
#: saturation latency grows with the run length and would flatten the curves.
LATENCY_PANEL_SPAN = 5.0


def _curve_panels(
    df: pd.DataFrame,
    x: str,
    y: str,
    by: list[str],
    facet: str,
    series: list[str],
    title: str,
    xlabel: str,
    ylabel: str,
    paper: Optional[dict] = None,
    drawn: Optional[set] = None,
) -> Optional[plt.Figure]:
    """As :func:`_curve_figure`, one panel per value of ``facet`` (a paper's
    (a), (b), … sub-figures), each with its own axes. The paper's peak ratios
    (throughput of one curve over another's) are drawn where they put the
    numerator's peak: see :func:`_draw_peak_ratios`."""
    d = df[df[x].notna() & df[y].notna()]
    if d.empty:
        return None
    values = sorted(d[facet].dropna().unique().tolist())
    cols = min(len(values), 2)
    rows = -(-len(values) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.0 * cols, 4.0 * rows), squeeze=False)
    for ax, v in zip(axes.flat, values):
        g = d[d[facet] == v]
        lowest = float("inf")
        colours = {}
        for sv, h in _groups(g, series):
            agg = h.groupby(by, sort=True).agg(mx=(x, "mean"), my=(y, "mean")).reset_index()
            line = ax.plot(agg["mx"], agg["my"], marker=".", label=_series_label(series, sv))[0]
            colours[sv] = line.get_color()
            lowest = min(lowest, float(agg["my"].min()))
        if lowest > 0 and lowest != float("inf"):
            ax.set_ylim(0, LATENCY_PANEL_SPAN * lowest)
        handles = ax.get_legend_handles_labels()[0]
        handles += _draw_peak_ratios(ax, paper, g, x, by, series, colours, drawn)
        ax.set_title(f"{facet} = {v}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(handles=handles, fontsize="x-small")
    for ax in list(axes.flat)[len(values):]:
        ax.set_visible(False)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def _peak(rows: pd.DataFrame, column: str, by: list[str]) -> float:
    """The largest ``column`` over the curve of ``rows`` along ``by`` (mean over seeds per setting)."""
    return float(rows.groupby(by, sort=True)[column].mean().max())


def _draw_peak_ratios(ax: plt.Axes, paper: Optional[dict], g: pd.DataFrame, x: str, by: list[str], series: list[str], colours: dict, drawn: Optional[set]) -> list:
    """The paper's ratios of the peak of one curve over another's on this panel
    (e.g. saturation throughput with 100 % adaptive traffic over 0 %), drawn on
    the x axis where they put the numerator's peak: the paper's ratio times the
    peak of our denominator curve, dashed in the numerator's colour, with the
    tolerance shaded. Only where the ratio's column is ``x`` or proportional to
    it on these rows (then the ratio is the same in either unit)."""
    handles: list = []
    for i, r in _paper_values(paper):
        den = (r.get("denominator") or {}).get("where")
        column, where = r.get("column"), r.get("where") or {}
        if not den or r.get("peak_over") not in by or column not in g or not all(k in where and k in den for k in series):
            continue
        num_rows, den_rows = (select_rows(g, w) if _selects(g, w) else None for w in (where, den))
        if num_rows is None or den_rows is None:
            continue
        scale = (den_rows[x] / den_rows[column]).to_numpy(dtype=float) if column != x else np.ones(1)
        if not np.all(np.isfinite(scale)) or np.ptp(scale) > 1e-9 * abs(scale[0]):
            continue
        base = _peak(den_rows, column, by) * float(scale[0])
        colour = colours.get(tuple(where[k] for k in series), "black")
        at = float(r["paper"]) * base
        for lo, hi in r.get("tolerance_bands") or []:
            ax.axvspan(lo * base, hi * base, color=colour, alpha=0.12, linewidth=0)
        ax.axvline(at, color=colour, linestyle="--", linewidth=1.4)
        if _outside(r):
            ax.plot(_peak(num_rows, x, by), ax.get_ylim()[1] * 0.97, marker="v", markersize=9, color="#c00", linestyle="none")
        den_label = _series_label(series, [den[k] for k in series])
        ax.annotate(f"paper: {float(r['paper']):g} × peak of {den_label}", (at, 0.03), xycoords=("data", "axes fraction"), rotation=90, fontsize="x-small", ha="right", va="bottom", color=colour)
        ax.set_xlim(right=max(ax.get_xlim()[1], at * 1.05))
        if drawn is not None:
            drawn.add(i)
        if not handles:
            handles.append(Line2D([], [], color="black", linestyle="--", label="paper's peak ratio (shaded: tolerance)"))
        if _outside(r) and len(handles) == 1:
            handles.append(Line2D([], [], marker="v", color="#c00", linestyle="none", label=f"our peak, {OUTSIDE_LABEL}"))
    return handles


#: A category figure has one panel per point setting; past this many it is left out.
CATEGORY_PANELS_MAX = 12


def _categories_figure(df: pd.DataFrame, spec: kinds.Categories, series: list[str], title: str, paper: Optional[dict], drawn: set) -> Optional[plt.Figure]:
    """One panel per setting of ``series`` (mean over seeds, min–max as a bar's
    whisker): ``spec``'s columns as grouped bars, and the paper's values that
    are one of those columns at that setting as open diamonds over their bar,
    the tolerance as a grey whisker, ringed in red when ours is outside."""
    present = {c for _, columns in spec.series for c in columns if c and c in df}
    groups = _groups(df, series)
    if not present or len(groups) > CATEGORY_PANELS_MAX:
        # A panel per point of a long sweep is no figure to read; the values are in the tables.
        return None
    ncols = min(3, len(groups))
    nrows = -(-len(groups) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.8 * ncols, 3.4 * nrows + 0.8), squeeze=False, sharey=True, layout="constrained")
    width = 0.8 / len(spec.series)
    colours = [f"C{k}" for k in range(len(spec.series))]
    position = {}
    for si, (_, columns) in enumerate(spec.series):
        for ci, c in enumerate(columns):
            if c:
                position[c] = (ci + (si - (len(spec.series) - 1) / 2) * width, colours[si])
    any_outside = any_paper = False
    for ax, (values, g) in zip(axes.flat, groups):
        for si, (label, columns) in enumerate(spec.series):
            xs, mean, lo, hi = [], [], [], []
            for c in columns:
                if c not in present:
                    continue
                v = pd.to_numeric(g[c], errors="coerce").dropna()
                if v.empty:
                    continue
                xs.append(position[c][0])
                mean.append(v.mean())
                lo.append(v.mean() - v.min())
                hi.append(v.max() - v.mean())
            ax.bar(xs, mean, width, color=colours[si], label=label, yerr=[lo, hi] if len(g) > 1 else None, ecolor="black", capsize=2)
        for i, r in _paper_values(paper):
            c = r.get("column")
            if c not in position or r.get("denominator") or r.get("peak_over") or not _selects(g, r.get("where") or {}):
                continue
            at, colour = position[c]
            for b_lo, b_hi in r.get("tolerance_bands") or []:
                ax.vlines(at, b_lo, b_hi, color="black", linewidth=1.0, zorder=3, gid="tolerance")
                ax.plot([at, at], [b_lo, b_hi], linestyle="none", marker="_", markersize=8, color="black", zorder=3)
            _diamond(ax, at, float(r["paper"]), colour, _outside(r))
            any_outside = any_outside or _outside(r)
            any_paper = True
            drawn.add(i)
        crowded = sum(map(len, spec.categories)) > 40
        ax.set_xticks(range(len(spec.categories)), spec.categories, rotation=30 if crowded else 0, ha="right" if crowded else "center", fontsize="small")
        ax.set_xlim(-0.5, len(spec.categories) - 0.5)
        ax.set_title(_series_label(series, values), fontsize="medium")
        ax.set_xlabel(spec.xlabel)
        ax.grid(True, axis="y", alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel(spec.ylabel)
    for ax in list(axes.flat)[len(groups):]:
        ax.set_visible(False)
    handles = axes[0, 0].get_legend_handles_labels()[0]
    if any_paper:
        handles.append(Line2D([], [], linestyle="none", marker="D", markerfacecolor="white", markeredgecolor="black", markeredgewidth=1.6, label=_paper_label(paper)))
        handles.append(Line2D([], [], color="black", linewidth=1.0, marker="_", markersize=8, label="tolerance"))
    if any_outside:
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=12, markerfacecolor="none", markeredgecolor="#c00", markeredgewidth=1.4, label=OUTSIDE_LABEL))
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4), fontsize="small")
    fig.suptitle(title)
    return fig


def _paper_vs_ours_figure(paper: dict, rows: list[tuple[int, dict]], title: str) -> plt.Figure:
    """The paper's values that no other figure shows: one row each, on its own
    scale, with the tolerance as a grey bar, the paper's value as an open diamond
    and ours as a dot (red when outside the tolerance)."""
    fig, axes = plt.subplots(len(rows), 1, figsize=(9.0, 0.62 * len(rows) + 1.1), squeeze=False, layout="constrained")
    for ax, (_, r) in zip(axes[:, 0], rows):
        p, ours = float(r["paper"]), float(r["ours"])
        bands = r.get("tolerance_bands") or []
        lo = min([p, ours] + [b[0] for b in bands])
        hi = max([p, ours] + [b[1] for b in bands])
        pad = (hi - lo) * 0.15 or max(abs(p), abs(ours), 1.0) * 0.1
        for b_lo, b_hi in bands:
            ax.barh(0, b_hi - b_lo, left=b_lo, height=0.5, color="grey", alpha=0.3)
        ax.plot(p, 0, linestyle="none", marker="D", markersize=8, markerfacecolor="white", markeredgewidth=1.6, markeredgecolor="black")
        ax.plot(ours, 0, linestyle="none", marker="o", markersize=7, color="#c00" if _outside(r) else "C0")
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_ylim(-0.6, 0.6)
        ax.set_yticks([])
        ax.tick_params(axis="x", labelsize="x-small")
        quantity = r["quantity"] if len(r["quantity"]) <= 130 else r["quantity"][:129] + "…"
        ax.set_title(f"{quantity}  [{r['verdict']}]", fontsize="small", loc="left")
        for side in ("left", "right", "top"):
            ax.spines[side].set_visible(False)
    handles = [
        Line2D([], [], linestyle="none", marker="D", markerfacecolor="white", markeredgecolor="black", markeredgewidth=1.6, label=_paper_label(paper)),
        Line2D([], [], linestyle="none", marker="o", color="C0", label="ours"),
        Line2D([], [], linestyle="none", marker="o", color="#c00", label=f"ours, {OUTSIDE_LABEL}"),
        Patch(facecolor="grey", alpha=0.3, label="tolerance"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize="small")
    fig.suptitle(title)
    return fig


#: Up to this many values not drawn elsewhere get a row each; more share one scatter of ours against the paper's.
PAPER_ROWS_MAX = 12


def _parity_figure(paper: dict, rows: list[tuple[int, dict]], title: str) -> plt.Figure:
    """Many values (a table's cells): ours against the paper's, one point each,
    the tolerance as a vertical whisker at the paper's value, red when outside;
    on the diagonal ours equals the paper's. Log axes when the values span more
    than two decades."""
    fig, ax = plt.subplots(figsize=(6.4, 5.6), layout="constrained")
    ps = np.array([float(r["paper"]) for _, r in rows])
    ours = np.array([float(r["ours"]) for _, r in rows])
    outside = np.array([_outside(r) for _, r in rows])
    for (_, r), p in zip(rows, ps):
        for lo, hi in r.get("tolerance_bands") or []:
            ax.vlines(p, lo, hi, color="grey", linewidth=2.5, alpha=0.35)
    ax.plot(ps[~outside], ours[~outside], linestyle="none", marker="o", markersize=5, color="C0", label=f"ours, within or context ({int((~outside).sum())})")
    if outside.any():
        ax.plot(ps[outside], ours[outside], linestyle="none", marker="o", markersize=6, color="#c00", label=f"ours, {OUTSIDE_LABEL} ({int(outside.sum())})")
    both = np.concatenate([ps, ours])
    positive = both[both > 0]
    if len(positive) == len(both) and positive.max() / positive.min() > 100:
        ax.set_xscale("log")
        ax.set_yscale("log")
    lo, hi = float(both.min()), float(both.max())
    pad = (hi - lo) * 0.05 or 1.0
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="grey", linestyle=":", linewidth=1, label="ours = paper")
    ax.plot([], [], color="grey", linewidth=2.5, alpha=0.35, label="tolerance")
    ax.set_xlabel(f"the paper's value ({paper['short_reference']})" if paper.get("short_reference") else "the paper's value")
    ax.set_ylabel("ours")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(title)
    return fig


def _undrawn(paper: Optional[dict], df: pd.DataFrame, drawn: set) -> list[tuple[int, dict]]:
    """The paper's values of these results that no figure drew and that have a number of ours."""
    out = []
    for i, r in _paper_values(paper):
        ours = r.get("ours")
        if i in drawn or ours is None or not math.isfinite(float(ours)) or not _selects(df, r.get("where") or {}):
            continue
        out.append((i, r))
    return out


#: Points whose time series ``ibnetsim plot`` draws, at most.
SERIES_PANELS_MAX = 4


def _series_figure(directory, df: pd.DataFrame, series: list[str], title, outdir: Path, formats: Sequence[str]) -> list[Path]:
    """The busiest links' utilization over time, one panel per representative
    point (``[metrics] series_interval_ns``)."""
    reps = _representatives(df, series)[:SERIES_PANELS_MAX]
    table = load_table(directory, "series", keys=[row["key"] for _, row in reps])
    reps = [(label, row) for label, row in reps if (table["key"] == row["key"]).any()]
    if not reps:
        return []
    fig, axs = plt.subplots(len(reps), 1, figsize=(9, 2.9 * len(reps)), layout="constrained", squeeze=False)
    for ax, (label, row) in zip(axs[:, 0], reps):
        plot_link_series(table[table["key"] == row["key"]], ax=ax)
        ax.set_title(label or f"point {row['index']}", fontsize="medium")
        ax.grid(True, alpha=0.3)
    fig.suptitle(title("Busiest links over time"))
    return _save(fig, outdir, "link_utilization_over_time", formats)


def plot_results(
    directory: Union[str, os.PathLike],
    out: Optional[Union[str, os.PathLike]] = None,
    formats: Sequence[str] = FORMATS,
    paper: Optional[dict] = None,
    import_plugins: bool = False,
) -> list[Path]:
    """Draws the standard figures of a results directory into ``out`` (default ``DIR/figures``).

    A point kind a plugin registered draws its own figures only if the kind is
    registered in this process (the caller loaded the scenario), or if
    ``import_plugins`` allows importing the plugins the directory's manifest
    names: a results directory may come from anyone, and importing a module
    runs its code.

    ``paper`` is a comparison as ``ibnetsim reproduce`` writes it to report.json
    (default: the one it wrote for this directory, if any); its values are drawn
    on the figures they are points of. Returns the files written. Failed points
    are left out of every figure.
    """
    store = Store(directory)
    manifest = store.manifest()
    df = store.rows()
    if df.empty or "status" not in df:
        return []
    df = df[df["status"] == "ok"].reset_index(drop=True)
    if df.empty:
        return []
    if paper is None:
        paper = comparison_of(directory)
    outdir = Path(out) if out is not None else Path(directory) / "figures"
    outdir.mkdir(parents=True, exist_ok=True)
    sc = manifest.get("scenario", {})
    prefix = (sc.get("name") or sc.get("kind") or "").strip()
    title = (lambda t: f"{prefix}: {t}" if prefix else t)
    axes = _swept(manifest, df)
    non_seed = [a for a in axes if a != "seed"]
    written: list[Path] = []
    drawn: set[int] = set()

    # Per-kind figures.
    kind = sc.get("kind")
    figs: Sequence[kinds.Figure] = ()
    categories: Sequence[kinds.Categories] = ()
    if kind:
        try:
            if import_plugins:
                for plugin in sc.get("plugins") or []:
                    __import__(plugin)
            figs = kinds.get(kind).figures
            categories = kinds.get(kind).categories
        except (ImportError, KeyError):
            # A plugin kind not registered here: the data-plane figures still work.
            if sc.get("plugins") and not import_plugins:
                log.warning(
                    "%s: kind '%s' comes from plugins %s, not imported (they are code): its own figures are left out; "
                    "allow them with --plugins",
                    directory,
                    kind,
                    ", ".join(sc["plugins"]),
                )
            figs = ()
            categories = ()
    for f in figs:
        x = f.x if f.x in df else (non_seed[0] if non_seed else None)
        if x is None or f.y not in df:
            continue
        series = [a for a in non_seed if a != x]
        fig = _metric_figure(df, x, f.y, series, title(f.title), f.xlabel or x, f.ylabel, f.logy, paper, drawn)
        if fig is not None:
            written += _save(fig, outdir, f.name, formats)
    for c in categories:
        fig = _categories_figure(df, c, non_seed, title(c.title), paper, drawn)
        if fig is not None:
            written += _save(fig, outdir, c.name, formats)

    # Data-plane figures.
    loads = _load_key(non_seed)
    series = [a for a in non_seed if a not in loads]
    if {"accepted_load", "latency_mean_ns"} <= set(df.columns):
        fig = _curve_figure(df, "accepted_load", "latency_mean_ns", loads or ["offered_load"] * ("offered_load" in df), series, title("Latency vs accepted traffic"), "accepted traffic (fraction of link bandwidth)", "mean packet latency (ns)")
        if fig is not None:
            written += _save(fig, outdir, "latency_vs_accepted", formats)
        if len(series) >= 2 and loads:
            # Several curves per setting of the first swept key: one panel each.
            fig = _curve_panels(
                df,
                "accepted_load",
                "latency_mean_ns",
                loads,
                series[0],
                series[1:],
                title("Latency vs accepted traffic"),
                "accepted traffic (fraction of link bandwidth)",
                "mean packet latency (ns)",
                paper,
                drawn,
            )
            if fig is not None:
                written += _save(fig, outdir, "latency_vs_accepted_panels", formats)
    if {"offered_load", "accepted_load"} <= set(df.columns):
        fig = _curve_figure(
            df,
            "offered_load",
            "accepted_load",
            loads,
            series,
            title("Throughput vs offered load"),
            "offered load (fraction of link bandwidth)",
            "accepted traffic (fraction)",
            diagonal="accepted = offered",
        )
        if fig is not None:
            written += _save(fig, outdir, "throughput_vs_offered", formats)
    for col in PROFILE_COLUMNS:
        if col not in df:
            continue
        reps = [(label, _as_list(row[col])) for label, row in _representatives(df, series)]
        reps = [(label, v) for label, v in reps if v is not None]
        if not reps:
            continue
        # One title over both panels: two copies of a long scenario name overlap.
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
        for label, v in reps:
            ax1.plot(np.arange(len(v)), v, linewidth=1, label=label)
            ax2.plot(np.arange(len(v)), np.sort(v)[::-1], linewidth=1.2, label=label)
        fig.suptitle(title("per-port utilization" if col == "port_utilization" else "per-link channel load"))
        ax1.set_title("in fabric order")
        ax2.set_title("sorted, highest first")
        for ax in (ax1, ax2):
            ax.set_xlabel("port (in fabric order)" if ax is ax1 else "rank")
            ax.set_ylabel("utilization" if col == "port_utilization" else "load per unit injection")
            ax.grid(True, alpha=0.3)
        ax2.legend(fontsize="small")
        written += _save(fig, outdir, col, formats)
    if {"latency_hist_edges_ns", "latency_hist_counts"} <= set(df.columns):
        hists = []
        for label, row in _representatives(df, series):
            edges, counts = _as_list(row["latency_hist_edges_ns"]), _as_list(row["latency_hist_counts"])
            if edges is not None and counts is not None and len(edges) == len(counts) + 1 and counts.sum() > 0:
                hists.append((label, edges, counts))
        if hists:
            # Latencies run to 10^5 ns and more past saturation; in µs the tick labels stay short.
            scale, unit = (1e3, "µs") if max(float(e[-1]) for _, e, _ in hists) >= 1e4 else (1.0, "ns")
            fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
            for label, edges, counts in hists:
                ax1.stairs(counts / counts.sum(), edges / scale, label=label)
                ax2.step(edges[1:] / scale, np.cumsum(counts) / counts.sum(), where="post", label=label)
            fig.suptitle(title("Packet latency"))
            ax1.set_title("histogram")
            ax2.set_title("cumulative distribution")
            ax1.set_ylabel("fraction of packets")
            ax2.set_ylabel("cumulative fraction")
            for ax in (ax1, ax2):
                ax.set_xlabel(f"packet latency ({unit})")
                ax.xaxis.set_major_locator(MaxNLocator(nbins=6))
                ax.grid(True, alpha=0.3)
            ax2.legend(fontsize="small")
            written += _save(fig, outdir, "latency_histogram", formats)
    if "series_rows" in df and df["series_rows"].notna().any():
        written += _series_figure(directory, df[df["series_rows"].notna()], series, title, outdir, formats)
    rest = _undrawn(paper, df, drawn)
    if rest:
        heading = title("paper's values not drawn above" if drawn else "paper vs ours")
        fig = _paper_vs_ours_figure(paper, rest, heading) if len(rest) <= PAPER_ROWS_MAX else _parity_figure(paper, rest, heading)
        written += _save(fig, outdir, "paper_vs_ours", formats)
    return written
