"""Scenario files: loading, validation and expansion into the Cartesian sweep.

A scenario (TOML, keys in :mod:`.schema`) may give any sweepable key a list of
values; the file then stands for the Cartesian product of those lists, in the
order the keys appear, as CAMINOS's ``![...]`` lists do. Every point of the
product is resolved (defaults filled in, paths made absolute) and checked
before anything runs, so an impossible combination deep in a sweep is found at
once, and every error names the file, the line and the key.

Each point is keyed by a hash of its resolved configuration, with file paths
replaced by a hash of the file's content: the results store uses the key to
skip points that are already done (:mod:`.store`).
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import json
import logging
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

from ibnetsim import _args
from ibnetsim._textfile import TextFileError, read_bytes, read_text
from ibnetsim.errors import ConfigError
from ibnetsim.experiment import schema
from ibnetsim.experiment.schema import FROM_SEED, REQUIRED, Key

__all__ = ["ScenarioError", "Scenario", "Point", "Axis", "load", "loads", "point_key"]

log = logging.getLogger(__name__)


class ScenarioError(ConfigError):
    """A scenario is invalid. ``file``, ``line`` and ``key`` say where."""

    def __init__(self, message: str, file: Optional[str] = None, line: Optional[int] = None, key: Optional[str] = None):
        self.file = file
        self.line = line
        self.key = key
        self.message = message
        where = file or "<scenario>"
        if line is not None:
            where += f":{line}"
        super().__init__(f"{where}: {key}: {message}" if key else f"{where}: {message}")


@dataclass(frozen=True)
class Axis:
    """One swept key: its dotted name, its values and the line that gave them."""

    name: str
    values: tuple[Any, ...]
    line: Optional[int] = None


@dataclass(frozen=True)
class Point:
    """One run of a sweep."""

    index: int
    key: str
    #: The resolved configuration handed to the point kind: ``kind``, ``seed``
    #: and one dict per section, every key present.
    config: dict
    #: This point's value of every axis, by dotted name.
    swept: dict

    def label(self) -> str:
        return ", ".join(f"{k}={_short(v)}" for k, v in self.swept.items()) or "single point"


@dataclass
class Scenario:
    """A validated scenario and its expansion."""

    path: Optional[Path]
    text: str
    kind: str
    name: str
    description: str
    plugins: list[str]
    axes: list[Axis]
    points: list[Point]
    #: The parsed file, as written (before expansion).
    raw: dict = field(repr=False, default_factory=dict)
    #: Valid but suspicious settings (``file:line: key: why``), one per key.
    warnings: list[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        return str(self.path) if self.path else "<scenario>"


# --------------------------------------------------------------------------- line numbers
_HEADER = re.compile(r"^\s*\[\[?\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")
_KEYLINE = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")


def _split_dotted(s: str) -> list[str]:
    parts = re.findall(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""", s)
    return [p[1:-1] if p[:1] in "\"'" else p for p in parts]


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Maps every key path defined in a TOML document to the (1-based) line defining it.

    Inline tables (``fabric = { kind = "mesh", dims = [4, 4] }``) map their inner
    keys to the line where each inner key is written. This is a line scanner, not a
    TOML parser: the document has been parsed by tomllib already, so it only needs
    to find where things are.
    """
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    in_multiline: Optional[str] = None
    inline_stack: list[tuple[str, ...]] = []
    array_counts: dict[tuple[str, ...], int] = {}
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw
        if in_multiline:
            if in_multiline in line:
                line = line.split(in_multiline, 1)[1]
                in_multiline = None
            else:
                continue
        if not inline_stack:
            m = _HEADER.match(line)
            if m and "=" not in line.split("]")[0]:
                table = tuple(_split_dotted(m.group(1)))
                lines.setdefault(table, no)
                if line.lstrip().startswith("[["):
                    # Arrays of tables: the n-th [[x]] is also the path (x, "#n").
                    n = array_counts[table] = array_counts.get(table, 0) + 1
                    table = table + (f"#{n}",)
                    lines.setdefault(table, no)
                continue
        base = inline_stack[-1] if inline_stack else table
        pos = 0
        while pos < len(line):
            rest = line[pos:]
            m = _KEYLINE.match(rest)
            if m:
                path = base + tuple(_split_dotted(m.group(1)))
                lines.setdefault(path, no)
                pos += m.end()
                after = line[pos:].lstrip()
                if after.startswith("{"):
                    inline_stack.append(path)
                    base = path
                    pos = len(line) - len(after) + 1
                    continue
                for q in ('"""', "'''"):
                    if after.startswith(q) and after.count(q) == 1:
                        in_multiline = q
                        pos = len(line)
                        break
                continue
            # Skip to the next key inside an inline table, or the end of one.
            nxt = re.search(r"[,{}#]", rest)
            if nxt is None:
                break
            ch = nxt.group(0)
            if ch == "#":
                break
            pos += nxt.end()
            if ch == "}" and inline_stack:
                inline_stack.pop()
                base = inline_stack[-1] if inline_stack else table
    return lines


class _Locator:
    def __init__(self, text: str, file: Optional[str]):
        self.lines = key_lines(text)
        self.file = file

    def line(self, path: Iterable[str]) -> Optional[int]:
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None

    def error(self, path: Iterable[str], message: str) -> ScenarioError:
        path = tuple(path)
        return ScenarioError(message, self.file, self.line(path), ".".join(path) if path else None)


# --------------------------------------------------------------------------- values
def _short(v: Any) -> str:
    return json.dumps(v) if isinstance(v, (list, str)) else str(v).lower() if isinstance(v, bool) else str(v)


def _type_name(v: Any) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a float"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "a table"
    return type(v).__name__


_EXPECT = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "str": "a string",
    "path": "a file path (string)",
}


def _coerce_scalar(kind: str, v: Any) -> tuple[bool, Any]:
    if kind == "int":
        return (isinstance(v, int) and not isinstance(v, bool), v)
    if kind == "float":
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        return (ok, float(v) if ok else v)
    if kind == "bool":
        return (isinstance(v, bool), v)
    if kind in ("str", "path"):
        return (isinstance(v, str), v)
    raise AssertionError(kind)


class _Resolver:
    """Checks one key's value (a single value, not a sweep) and normalises it."""

    def __init__(self, loc: _Locator, base_dir: Path):
        self.loc = loc
        self.base_dir = base_dir

    def value(self, path: tuple[str, ...], key: Key, v: Any) -> Any:
        if key.is_list:
            if not isinstance(v, list):
                raise self.loc.error(path, f"expected a list of {_EXPECT[key.element_type]}s, got {_type_name(v)}")
            return [self._element(path, key, x) for x in v]
        return self._element(path, key, v)

    def _element(self, path: tuple[str, ...], key: Key, v: Any) -> Any:
        kind = key.element_type
        ok, v = _coerce_scalar(kind, v)
        if not ok:
            raise self.loc.error(path, f"expected {_EXPECT[kind]}, got {_type_name(v)} ({_short(v) if not isinstance(v, dict) else '{…}'})")
        allowed = key.allowed()
        if allowed is not None and v not in allowed:
            raise self.loc.error(path, f"unknown value {_short(v)}; expected one of: {', '.join(map(str, allowed))}")
        if kind == "float" and not math.isfinite(v):
            raise self.loc.error(path, f"expected a finite number, got {v}")
        lo, hi = key.bounds()
        # An integer's limits are exact (2^32 - 1 must not read 4.29497e+09).
        show = str if kind == "int" else (lambda x: f"{x:g}")
        if lo is not None and v < lo:
            raise self.loc.error(path, f"{show(v)} is below the minimum {show(lo)}")
        if hi is not None and v > hi:
            raise self.loc.error(path, f"{show(v)} is above the maximum {show(hi)}")
        if kind == "path":
            p = Path(os.path.expanduser(v))
            if not p.is_absolute():
                p = self.base_dir / p
            if not p.exists():
                raise self.loc.error(path, f"no such file or folder: {p}")
            v = str(p.resolve())
        return v


def _is_sweep(key: Key, v: Any) -> bool:
    if not isinstance(v, list):
        return False
    if key.is_list:
        return len(v) > 0 and all(isinstance(x, list) for x in v)
    return True


# --------------------------------------------------------------------------- hashing
def _file_digest(path: str, cache: dict[str, str]) -> str:
    """SHA-256 of what the core reads from a path key: a file's bytes, or for a
    directory (``ibnl_dirs``) the ``.ibnl`` files directly in it, by name."""
    if path not in cache:
        h = hashlib.sha256()
        p = Path(path)
        if p.is_dir():
            for q in sorted(q for q in p.iterdir() if q.suffix == ".ibnl" and q.is_file()):
                h.update(q.name.encode() + b"\0")
                h.update(read_bytes(q, "a netlist (.ibnl) file"))
        else:
            h.update(read_bytes(p, "a file"))
        cache[path] = h.hexdigest()
    return cache[path]


def point_key(identity: dict) -> str:
    """The results key of a point: 16 hex digits of SHA-256 over its canonical JSON."""
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- loading
def load(path: Union[str, os.PathLike]) -> Scenario:
    """Reads, validates and expands a scenario file."""
    p = Path(path)
    try:
        text = read_text(p, "a scenario file (.toml)")
    except TextFileError as e:
        raise ScenarioError(e.message, str(p), e.line) from None
    return loads(text, path=p)


def loads(text: str, path: Optional[Union[str, os.PathLike]] = None, base_dir: Optional[Union[str, os.PathLike]] = None) -> Scenario:
    """Validates and expands a scenario given as TOML text.

    ``path`` names the file in errors; relative paths in the scenario resolve
    against ``base_dir`` (default: the file's folder, else the working directory).
    """
    file = str(path) if path is not None else None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        raise ScenarioError(f"invalid TOML: {msg}" + (f" (column {m.group(2)})" if m else ""), file, int(m.group(1)) if m else None) from None
    bdir = Path(base_dir) if base_dir is not None else (Path(path).resolve().parent if path is not None else Path.cwd())
    return _build(raw, text, file, bdir)


def _import_plugins(plugins: list[str], loc: _Locator) -> None:
    for mod in plugins:
        try:
            importlib.import_module(mod)
        except Exception as e:  # an import error of a plugin is the user's input error
            raise loc.error(("plugins",), f"cannot import plugin module '{mod}': {type(e).__name__}: {e}") from None


def _build(raw: dict, text: str, file: Optional[str], base_dir: Path) -> Scenario:
    from ibnetsim.experiment import kinds

    loc = _Locator(text, file)
    res = _Resolver(loc, base_dir)
    top = {k.name: k for k in schema.TOP_LEVEL}

    # plugins first: they may register the kind and sections used below.
    plugins = res.value(("plugins",), top["plugins"], raw["plugins"]) if "plugins" in raw else []
    _import_plugins(plugins, loc)

    if "kind" not in raw:
        raise ScenarioError(
            "the scenario needs a top-level `kind` (what each point runs): one of " + ", ".join(kinds.names()), file, None, "kind"
        )
    kind_name = raw["kind"]
    if isinstance(kind_name, list):
        raise loc.error(("kind",), "cannot be a list: one sweep runs one point kind")
    kind_name = res.value(("kind",), top["kind"], kind_name)
    pk = kinds.get(kind_name)

    fixed: dict[str, Any] = {}  # dotted name -> value (unswept)
    axes: list[Axis] = []
    layout: dict[str, _Entry] = {}  # table name (traffic, traffic[1], …) -> its entry

    def take(path: tuple[str, ...], key: Key, v: Any, dotted: Optional[str] = None) -> None:
        dotted = dotted or ".".join(path)
        if _is_sweep(key, v):
            if not key.sweep:
                raise loc.error(path, "cannot be a list (this key is not sweepable)")
            if not v:
                raise loc.error(path, "an empty list sweeps over nothing")
            values = tuple(res.value(path, key, x) for x in v)
            seen: list[Any] = []
            for x in values:
                if x in seen:
                    raise loc.error(path, f"the sweep repeats the value {_short(x)}")
                seen.append(x)
            if len(values) == 1:
                fixed[dotted] = values[0]
            else:
                axes.append(Axis(dotted, values, loc.line(path)))
        else:
            fixed[dotted] = res.value(path, key, v)

    for name, value in raw.items():
        if name in top:
            if name in ("kind", "plugins"):
                continue
            take((name,), top[name], value)
            continue
        secs = schema.sections()
        if name not in secs:
            raise loc.error((name,), "unknown key" + _suggest(name, list(top) + list(secs)))
        if name not in pk.sections:
            raise loc.error(
                (name,),
                f"section [{name}] is not read by point kind '{pk.name}' (it reads: "
                + ", ".join(f"[{s}]" for s in pk.sections)
                + ")",
            )
        sec = schema.section(name)
        if sec.repeated and isinstance(value, list):
            if not value or not all(isinstance(t, dict) for t in value):
                raise loc.error((name,), f"expected one or more tables ([[{name}]]), got {_type_name(value)}")
            # One table is named like a single [name] (as the results store does).
            tables = [(name if len(value) == 1 else f"{name}[{i}]", (name, f"#{i + 1}"), t) for i, t in enumerate(value)]
        elif not isinstance(value, dict):
            raise loc.error((name,), f"expected a table ([{name}]), got {_type_name(value)}")
        else:
            tables = [(name, (name,), value)]
        for inst, where_path, table in tables:
            variant: Optional[str] = None
            if sec.variants:
                if "kind" not in table:
                    raise loc.error(where_path, f"[{name}] needs `kind`: one of " + ", ".join(sec.kinds))
                kv = table["kind"]
                if isinstance(kv, list):
                    raise _error_at(loc, where_path + ("kind",), f"{inst}.kind", "cannot be a list: the kind decides which keys are allowed; write one scenario per kind")
                variant = res.value(where_path + ("kind",), sec.keys_for(None)["kind"], kv)
            keys = sec.keys_for(variant)
            layout[inst] = _Entry(variant, keys, name, where_path)
            for k, v in table.items():
                if k not in keys:
                    where = f"[{name}]" + (f" with kind = \"{variant}\"" if variant else "")
                    raise _error_at(loc, where_path + (k,), f"{inst}.{k}", f"unknown key in {where}" + _suggest(k, list(keys)))
                if k == "kind" and variant is not None:
                    fixed[f"{inst}.kind"] = variant
                    continue
                try:
                    take(where_path + (k,), keys[k], v, f"{inst}.{k}")
                except ScenarioError as e:
                    raise _error_at(loc, where_path + (k,), f"{inst}.{k}", e.message) from None

    for sname in pk.sections:
        if not any(e.section == sname for e in layout.values()):
            sec = schema.section(sname)
            if sec.repeated:
                continue  # zero tables: the point gets an empty list
            if sec.variants:
                if sname in pk.required:
                    raise ScenarioError(
                        f"point kind '{pk.name}' needs a [{sname}] section (with kind = one of {', '.join(sec.kinds)})", file, None, sname
                    )
                continue
            layout[sname] = _Entry(None, sec.keys_for(None), sname, (sname,))
    for sname, entry in layout.items():
        variant = entry.variant
        for kname, key in entry.keys.items():
            if key.default is REQUIRED and f"{sname}.{kname}" not in fixed and not any(a.name == f"{sname}.{kname}" for a in axes):
                raise _error_at(
                    loc,
                    entry.where,
                    sname,
                    f"missing key `{kname}`" + (f" (required when kind = \"{variant}\")" if variant else "") + f": {key.doc}",
                )

    # Order the axes as their keys appear in the file, so expansion follows reading order.
    axes.sort(key=lambda a: (a.line if a.line is not None else 0))
    warned: dict[str, str] = {}
    points = _expand(pk, fixed, axes, layout, loc, warned)
    for w in warned.values():
        log.warning("warning: %s", w)
    return Scenario(
        path=Path(file) if file else None,
        text=text,
        kind=pk.name,
        name=fixed.get("name", ""),
        description=fixed.get("description", ""),
        plugins=plugins,
        axes=axes,
        points=points,
        raw=raw,
        warnings=list(warned.values()),
    )


@dataclass(frozen=True)
class _Entry:
    """One table of a point: its variant and keys, the section it belongs to
    (``traffic`` for ``traffic[1]``) and where the locator finds it
    (``("traffic", "#2")`` for the second ``[[traffic]]``)."""

    variant: Optional[str]
    keys: dict
    section: str
    where: tuple[str, ...]


def _error_at(loc: _Locator, path: tuple[str, ...], key: str, message: str) -> ScenarioError:
    """An error at the line of ``path`` that names the key as the user reads it (``traffic[1].load``)."""
    return ScenarioError(message, loc.file, loc.line(path), key)


def _suggest(word: str, options: list[str]) -> str:
    close = _args.closest(word, options)
    return f" (did you mean `{close}`?)" if close else f"; expected one of: {', '.join(options)}"


def _expand(pk: Any, fixed: dict, axes: list[Axis], layout: dict, loc: _Locator, warned: dict[str, str]) -> list[Point]:
    """The points of the sweep, each checked; the sections' warnings go to ``warned`` by key."""
    digests: dict[str, str] = {}
    points: list[Point] = []
    seen: dict[str, int] = {}
    for index, combo in enumerate(itertools.product(*(a.values for a in axes))):
        swept = {a.name: v for a, v in zip(axes, combo)}
        values = {**fixed, **swept}
        seed = values.get("seed", 1)
        config: dict[str, Any] = {"kind": pk.name, "seed": seed}
        identity: dict[str, Any] = {"kind": pk.name, "seed": seed}
        position: dict[str, int] = {}  # a repeated section's table -> its index in the config list
        for sname, entry in layout.items():
            keys = entry.keys
            sec_cfg: dict[str, Any] = {}
            sec_id: dict[str, Any] = {}
            for kname, key in keys.items():
                dotted = f"{sname}.{kname}"
                v = values.get(dotted, key.default)
                if v is FROM_SEED:
                    v = seed
                if isinstance(v, list):
                    v = list(v)
                sec_cfg[kname] = v
                if key.element_type == "path" and v is not None:
                    try:
                        sec_id[kname] = [_file_digest(x, digests) for x in v] if key.is_list else {"sha256": _file_digest(v, digests)}
                    except TextFileError as e:
                        raise _error_at(loc, (*entry.where, kname), dotted, e.message) from None
                else:
                    sec_id[kname] = v
            base = entry.section
            if schema.section(base).repeated:
                position[sname] = len(config.setdefault(base, []))
                config[base].append(sec_cfg)
                identity.setdefault(base, []).append(sec_id)
            else:
                config[sname] = sec_cfg
                identity[sname] = sec_id
        for sname in pk.sections:
            if schema.section(sname).repeated:
                config.setdefault(sname, [])
                identity.setdefault(sname, [])
        for sname, entry in layout.items():
            sec_cfg = config[entry.section][position[sname]] if sname in position else config[sname]
            for warn in schema.section(entry.section).warns:
                problem = warn(sec_cfg, config)
                # One warning per key: a load sweep past 1 is one mistake, not one per load.
                if problem and f"{sname}.{problem[0]}" not in warned:
                    kname, msg = problem
                    warned[f"{sname}.{kname}"] = str(_error_at(loc, entry.where + (kname,), f"{sname}.{kname}", msg))
            for check in schema.section(entry.section).checks:
                problem = check(sec_cfg, config)
                if problem:
                    kname, msg = problem
                    ctx = ", ".join(f"{k} = {_short(v)}" for k, v in swept.items())
                    raise _error_at(loc, entry.where + (kname,), f"{sname}.{kname}", msg + (f" (in the point with {ctx})" if ctx else ""))
        if pk.check is not None:
            problem = pk.check(config)
            if problem:
                dotted, msg = problem
                ctx = ", ".join(f"{k} = {_short(v)}" for k, v in swept.items())
                head, *rest = dotted.split(".")
                where = layout[head].where if head in layout else (head,)
                raise _error_at(loc, where + tuple(rest), dotted, msg + (f" (in the point with {ctx})" if ctx else ""))
        key = point_key(identity)
        if key in seen:
            raise loc.error((), f"points {seen[key]} and {index} have the same configuration")
        seen[key] = index
        points.append(Point(index=index, key=key, config=config, swept=swept))
    return points
