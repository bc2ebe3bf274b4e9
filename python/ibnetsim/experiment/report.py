"""One self-contained HTML page for a results directory: figures, scenario and summary tables.

For the results of ``ibnetsim reproduce`` the page opens with the paper
experiment: its reference, the command that made it, the entry's notes and the
paper's values beside ours (from the report.json ``reproduce`` wrote beside the
results, or one level up for one scenario of several).

Everything is inline (figures as SVG markup, no scripts or styles fetched from
anywhere), so the page can be mailed, archived with the results, or opened on a
cluster's login node. A small inline script marks the page once every figure has
rendered (``data-figures-rendered`` on ``<body>``), which is what the browser
test checks in headless Chromium.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path
from typing import Any, Optional, Union

from ibnetsim._lazy import pandas as pd

from ibnetsim._cliutil import plural
from ibnetsim.experiment.numfmt import MISSING, number
from ibnetsim.experiment.registry import comparison_of, display_row, value_notes, verdict_summary
from ibnetsim.experiment.store import RUNTIME_COLUMNS, Store

__all__ = ["write_html_report"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #f3f3f3; } td.text { text-align: left; } td:not(.text) { white-space: nowrap; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
code { background: #f3f3f3; padding: 0 0.2em; }
figure { display: inline-block; margin: 0.5em; vertical-align: top; max-width: calc(100% - 1em); }
figure svg { max-width: 100%; height: auto; }
.scroll { max-width: 100%; overflow-x: auto; }
.failed, .outside, .missing { color: #b00; }
.within { color: #070; }
.context, .not-in-quick-run { color: #666; }
.known-deviation { color: #a60; }
"""

_SCRIPT = """
(function () {
  var figs = document.querySelectorAll('figure svg');
  var ok = figs.length > 0;
  figs.forEach(function (s) { var b = s.getBBox(); if (!(b.width > 0 && b.height > 0)) ok = false; });
  document.body.setAttribute('data-figures-rendered', ok ? String(figs.length) : 'no');
})();
"""


def _cell(v: Any) -> tuple[str, str]:
    """A value's text and its cell class (text left-aligned, numbers right-aligned)."""
    if v is None or (isinstance(v, float) and v != v):
        return MISSING, ""
    if isinstance(v, str):
        return v, "text"
    if hasattr(v, "__len__"):
        return f"[{plural(len(v), 'value')}]", "text"
    return number(v, digits=5), ""


def _table(df: pd.DataFrame, max_rows: int = 500) -> str:
    cols = list(df.columns)
    # A wide table scrolls inside the page instead of running off its edge.
    out = ['<div class="scroll"><table><thead><tr>' + "".join(f"<th>{html.escape(str(c))}</th>" for c in cols) + "</tr></thead><tbody>"]
    for row in df.head(max_rows).itertuples(index=False):
        cells = (_cell(v) for v in row)
        out.append("<tr>" + "".join(f'<td class="{cls}">{html.escape(text)}</td>' for text, cls in cells) + "</tr>")
    out.append("</tbody></table></div>")
    if len(df) > max_rows:
        out.append(f"<p>… {plural(len(df) - max_rows, 'more row')} in results.parquet.</p>")
    return "\n".join(out)


def _prose(text: str) -> str:
    """An entry's notes as HTML: paragraphs at blank lines, a block of ``- `` lines
    as a list, `backticks` as code."""

    def inline(t: str) -> str:
        return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(" ".join(t.split()), quote=False))

    out = []
    for block in (b.strip() for b in re.split(r"\n\s*\n", text)):
        if block.startswith("- "):
            items = re.split(r"\n- ", block[2:])
            out.append("<ul>" + "".join(f"<li>{inline(i)}</li>" for i in items) + "</ul>")
        elif block:
            out.append(f"<p>{inline(block)}</p>")
    return "\n".join(out)


_COMPARISON_COLUMNS = ("quantity", "source", "paper", "ours", "unit", "ours − paper", "relative", "n", "tolerance", "verdict")


def _comparison(rep: dict[str, Any]) -> list[str]:
    """The paper experiment: reference, command, notes and the paper's values beside ours."""
    parts = [f"<h2>Paper vs ours ({html.escape(rep['id'])}{', quick' if rep.get('quick') else ''})</h2>"]
    # Older report.json files hold the values only.
    if rep.get("reference"):
        parts.append(f"<p><em>{html.escape(rep['reference'])}</em> (paper {html.escape(str(rep.get('paper', '')))})</p>")
    if rep.get("command"):
        kind = "quick, scaled-down" if rep.get("quick") else "full, the paper parameters"
        parts.append(f"<p>Run: <code>{html.escape(rep['command'])}</code> ({kind}).</p>")
    if rep.get("notes"):
        parts.append(_prose(rep["notes"]))
    rows = rep["values"]
    head = "".join(f"<th>{c}</th>" for c in _COMPARISON_COLUMNS)
    out = [f'<div class="scroll"><table id="paper-vs-ours"><thead><tr>{head}</tr></thead><tbody>']
    for r in rows:
        t = display_row(r)
        verdict = r["verdict"]
        cells = [
            (r["quantity"], "text"),
            (r["citation"], "text"),
            (t["paper"], ""),
            (t["ours"], ""),
            (r["unit"], "text"),
            (t["diff"], ""),
            (t["relative"], ""),
            (t["n"], ""),
            (r["tolerance"], "text"),
            (verdict, "text " + verdict.replace(" ", "-")),
        ]
        out.append("<tr>" + "".join(f'<td class="{cls}">{html.escape(text)}</td>' for text, cls in cells) + "</tr>")
    out.append("</tbody></table></div>")
    parts += out
    notes = value_notes(rows)
    if notes:
        parts.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>")
    parts.append(f"<p>{html.escape(verdict_summary(rows))}</p>")
    return parts


def _svg_inline(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.find("<svg")
    return text[start:] if start >= 0 else ""


def write_html_report(
    directory: Union[str, os.PathLike], out: Optional[Union[str, os.PathLike]] = None, import_plugins: bool = False
) -> Path:
    """Writes ``out`` (default ``DIR/report.html``) and returns its path; draws
    the figures if needed. ``import_plugins``: as for
    :func:`~ibnetsim.experiment.plots.plot_results`."""
    from ibnetsim.experiment.plots import plot_results

    d = Path(directory)
    store = Store(d)
    m = store.manifest()
    if not m:
        raise FileNotFoundError(f"{d}: not a results directory (no manifest.json)")
    df = store.rows()
    figures = [p for p in plot_results(d, formats=("svg",), import_plugins=import_plugins) if p.suffix == ".svg"]
    sc = m.get("scenario", {})
    title = sc.get("name") or sc.get("kind") or str(d)
    ok = df[df["status"] == "ok"] if "status" in df else df
    failed = df[df["status"] != "ok"] if "status" in df else df.iloc[0:0]
    axes = [a for a in m.get("axes", {}) if a in df.columns]
    # The point index is listed first in the points table and is no result to average.
    hidden = {"key", "index", "status", "error", "traceback", "kind", *RUNTIME_COLUMNS}
    params = {c for c in df.columns if "." in c} | {"seed"}
    results = [c for c in ok.columns if c not in hidden and c not in params]
    rep = comparison_of(d)
    heading = f"{rep['id']}: {rep['title']}" if rep and rep.get("title") else title
    failed_text = f"{len(failed)} failed"
    if len(failed):
        failed_text = f'<span class="failed">{failed_text}</span>'
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(heading)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(heading)}</h1>",
    ]
    if heading != title:
        parts.append(f"<p>Scenario: {html.escape(title)}.</p>")
    parts.append(
        f"<p>{plural(len(df), 'point')}: {len(ok)} ok, {failed_text}. "
        f"ibnetsim {html.escape(str(m.get('ibnetsim_version')))}, build commit {html.escape(str(m.get('build_commit', 'not recorded')))}, "
        f"scenario SHA-256 {html.escape(str(m.get('scenario_sha256', 'not recorded')))}, host {html.escape(str(m.get('host')))}.</p>"
    )
    if sc.get("description"):
        parts.append(f"<p>{html.escape(sc['description'])}</p>")
    if rep:
        parts += _comparison(rep)
    parts.append("<h2>Figures</h2>")
    for f in figures:
        parts.append(f'<figure id="fig-{html.escape(f.stem)}">{_svg_inline(f)}<figcaption>{html.escape(f.stem)}</figcaption></figure>')
    parts.append("<h2>Summary</h2>")
    if axes and results:
        numeric = [c for c in results if pd.api.types.is_numeric_dtype(ok[c]) and not pd.api.types.is_bool_dtype(ok[c])]
        group = [a for a in axes if a != "seed"]
        if group and numeric:
            summary = ok.groupby(group, dropna=False)[numeric].mean().reset_index()
            parts.append(f"<p>Mean over {'seeds' if 'seed' in axes else 'points'} for each setting.</p>")
            parts.append(_table(summary))
    parts.append("<h2>Points</h2>")
    parts.append(_table(df[[c for c in ["index", *axes, "status", *results] if c in df.columns]]))
    if len(failed):
        parts.append("<h2>Failed points</h2>")
        parts.append(_table(failed[[c for c in ["index"] + axes + ["error"] if c in failed.columns]]))
    parts.append("<h2>Scenario</h2>")
    parts.append(f"<p>{html.escape(str(sc.get('path')))}</p><pre>{html.escape(sc.get('text', ''))}</pre>")
    parts.append("<h2>Axes</h2>")
    parts.append(f"<pre>{html.escape(json.dumps(m.get('axes', {}), indent=1))}</pre>")
    parts.append(f"<script>{_SCRIPT}</script></body></html>")
    path = Path(out) if out else d / "report.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
