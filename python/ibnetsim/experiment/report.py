"""One self-contained HTML page for a results directory: figures, scenario and summary tables.

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
from pathlib import Path
from typing import Optional, Union

import pandas as pd

from ibnetsim._cliutil import plural
from ibnetsim.experiment.store import RUNTIME_COLUMNS, Store

__all__ = ["write_html_report"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #f3f3f3; } td.text { text-align: left; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
figure { display: inline-block; margin: 0.5em; vertical-align: top; }
figure svg { max-width: 40em; height: auto; }
.failed { color: #b00; }
"""

_SCRIPT = """
(function () {
  var figs = document.querySelectorAll('figure svg');
  var ok = figs.length > 0;
  figs.forEach(function (s) { var b = s.getBBox(); if (!(b.width > 0 && b.height > 0)) ok = false; });
  document.body.setAttribute('data-figures-rendered', ok ? String(figs.length) : 'no');
})();
"""


def _table(df: pd.DataFrame, max_rows: int = 500) -> str:
    cols = list(df.columns)
    out = ["<table><thead><tr>" + "".join(f"<th>{html.escape(str(c))}</th>" for c in cols) + "</tr></thead><tbody>"]
    for _, row in df.head(max_rows).iterrows():
        cells = []
        for c in cols:
            v = row[c]
            if isinstance(v, float):
                text, cls = ("" if v != v else f"{v:.10g}"), ""
            elif hasattr(v, "__len__") and not isinstance(v, str):
                text, cls = f"[{plural(len(v), 'value')}]", "text"
            else:
                text, cls = str(v), "text" if isinstance(v, str) else ""
            cells.append(f'<td class="{cls}">{html.escape(text)}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    if len(df) > max_rows:
        out.append(f"<p>… {plural(len(df) - max_rows, 'more row')} in results.parquet.</p>")
    return "\n".join(out)


def _svg_inline(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.find("<svg")
    return text[start:] if start >= 0 else ""


def write_html_report(directory: Union[str, os.PathLike], out: Optional[Union[str, os.PathLike]] = None) -> Path:
    """Writes ``out`` (default ``DIR/report.html``) and returns its path; draws the figures if needed."""
    from ibnetsim.experiment.plots import plot_results

    d = Path(directory)
    store = Store(d)
    m = store.manifest()
    if not m:
        raise FileNotFoundError(f"{d}: not a results directory (no manifest.json)")
    df = store.rows()
    figures = [p for p in plot_results(d, formats=("svg",)) if p.suffix == ".svg"]
    sc = m.get("scenario", {})
    title = sc.get("name") or sc.get("kind") or str(d)
    ok = df[df["status"] == "ok"] if "status" in df else df
    failed = df[df["status"] != "ok"] if "status" in df else df.iloc[0:0]
    axes = [a for a in m.get("axes", {}) if a in df.columns]
    hidden = {"key", "status", "error", "traceback", "kind", *RUNTIME_COLUMNS}
    params = {c for c in df.columns if "." in c} | {"seed"}
    results = [c for c in ok.columns if c not in hidden and c not in params]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{plural(len(df), 'point')}: {len(ok)} ok, <span class=\"failed\">{len(failed)} failed</span>. "
        f"ibnetsim {html.escape(str(m.get('ibnetsim_version')))}, build commit {html.escape(str(m.get('build_commit', 'not recorded')))}, "
        f"scenario SHA-256 {html.escape(str(m.get('scenario_sha256', 'not recorded')))}, host {html.escape(str(m.get('host')))}.</p>",
    ]
    if sc.get("description"):
        parts.append(f"<p>{html.escape(sc['description'])}</p>")
    comparison = d / "report.json"
    if comparison.exists():
        # Written by `ibnetsim reproduce`: the paper's values beside ours.
        rep = json.loads(comparison.read_text(encoding="utf-8"))
        parts.append(f"<h2>Paper vs ours ({html.escape(rep['id'])}{', quick' if rep.get('quick') else ''})</h2>")
        parts.append(_table(pd.DataFrame(rep["values"])))
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
    parts.append(_table(df[[c for c in ["index"] + axes + ["status"] + results if c in df.columns]]))
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
