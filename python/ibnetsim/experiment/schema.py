"""The scenario schema: every key a scenario file may hold, its type, default and meaning.

A scenario is a TOML file with a few top-level keys (``kind``, ``seed``, …) and
one table per *section* (``[fabric]``, ``[routing]``, …). Each point kind
(:mod:`ibnetsim.experiment.kinds`) names the sections it reads; a section that
the kind does not read is an unknown key. Sections with a ``kind`` key
(``[fabric]``) are discriminated unions: the keys allowed depend on the kind.

The schema is the single source of truth for validation (:mod:`.scenario`) and
for the reference page ``docs/scenario.md`` (:func:`render_reference`); a test
compares the page with this module so the two cannot drift. New subsystems add
their sections with :func:`register_section`, the way the data plane adds
``[traffic]`` and ``[switch]``.

Key names follow the project's convention of carrying their unit
(``cable_length_m``), and generator and routing keys use the names of the
Python API (:func:`ibnetsim.topology.generate`, :class:`ibnetsim.SubnetManager`)
so a scenario reads like the call it makes.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

from ibnetsim import _core

__all__ = [
    "REQUIRED",
    "FROM_SEED",
    "Key",
    "Section",
    "Check",
    "TOP_LEVEL",
    "register_section",
    "section",
    "sections",
    "render_reference",
]


class _Sentinel:
    def __init__(self, name: str, doc: str):
        self.name = name
        self.doc = doc

    def __repr__(self) -> str:
        return self.name


#: The key has no default: the scenario must give it.
REQUIRED = _Sentinel("REQUIRED", "required")
#: The default is the point's ``seed`` (so one seed axis drives topology and run).
FROM_SEED = _Sentinel("FROM_SEED", "the point's `seed`")

#: The largest integer a key without a ``max`` takes: counts are u32 in the core.
U32_MAX = 2**32 - 1

#: Value types a key may have. ``path`` is a file path, resolved relative to
#: the scenario file and hashed by content; ``list[...]`` values are a single
#: value (a list of lists is then a sweep).
TYPES = ("int", "float", "bool", "str", "path", "list[int]", "list[float]", "list[str]", "list[path]")

Choices = Union[Sequence[Any], Callable[[], Sequence[Any]]]


@dataclass(frozen=True)
class Key:
    """One key: its name, type, default and the values it accepts."""

    name: str
    type: str
    doc: str
    default: Any = REQUIRED
    choices: Optional[Choices] = None
    min: Optional[float] = None
    max: Optional[float] = None
    #: False for keys that select the shape of the scenario (``kind``): a list
    #: there is an error, not a sweep.
    sweep: bool = True
    #: What the reference page shows as allowed values, instead of listing ``choices``.
    allowed_doc: Optional[str] = None

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"key {self.name}: unknown type {self.type!r} (one of {', '.join(TYPES)})")

    def allowed(self) -> Optional[list[Any]]:
        if self.choices is None:
            return None
        return list(self.choices() if callable(self.choices) else self.choices)

    def bounds(self) -> tuple[Optional[float], Optional[float]]:
        """The range a value must lie in: ``min``/``max``, and for an integer
        without them the implied one of a count (``0..=2^32-1``, a u32 in the
        core), so no integer can overflow the core or the results store."""
        if self.element_type != "int":
            return (self.min, self.max)
        return (0 if self.min is None else self.min, U32_MAX if self.max is None else self.max)

    @property
    def is_list(self) -> bool:
        return self.type.startswith("list[")

    @property
    def element_type(self) -> str:
        return self.type[5:-1] if self.is_list else self.type


#: A cross-key check of one resolved section: returns ``(key, message)`` when
#: the combination is impossible, else None. It sees the section's resolved
#: values (defaults filled in) and the whole point config.
Check = Callable[[dict, dict], Optional[tuple[str, str]]]


@dataclass(frozen=True)
class Section:
    """A ``[table]`` of the scenario.

    With ``variants``, the section is discriminated by its ``kind`` key: the
    allowed keys are ``keys`` plus ``variants[kind]``.
    """

    name: str
    doc: str
    keys: tuple[Key, ...] = ()
    variants: dict[str, tuple[Key, ...]] = field(default_factory=dict)
    variant_docs: dict[str, str] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    #: Checks of settings that are valid but likely a mistake, with the
    #: signature of ``checks``: the scenario keeps what they return as
    #: warnings (logged once when it is loaded, and kept in the results manifest).
    warns: tuple[Check, ...] = ()
    #: The section may be written several times as an array of tables
    #: (``[[traffic]]``); the point config then holds a list with one dict per
    #: table (also for a single ``[traffic]``), and the swept keys of table
    #: ``i`` (from 0) are named ``traffic[i].key``.
    repeated: bool = False

    def keys_for(self, variant: Optional[str]) -> dict[str, Key]:
        keys = {k.name: k for k in self.keys}
        if variant is not None:
            keys.update({k.name: k for k in self.variants[variant]})
        return keys

    @property
    def kinds(self) -> list[str]:
        return list(self.variants)


# --------------------------------------------------------------------------- registry
_SECTIONS: dict[str, Section] = {}


def register_section(sec: Section) -> Section:
    """Adds a section to the schema; a name can be registered once."""
    if sec.name in _SECTIONS:
        raise ValueError(f"scenario section [{sec.name}] is already registered")
    if sec.name in {k.name for k in TOP_LEVEL}:
        raise ValueError(f"scenario section [{sec.name}] clashes with a top-level key")
    _SECTIONS[sec.name] = sec
    return sec


def section(name: str) -> Section:
    return _SECTIONS[name]


def sections() -> dict[str, Section]:
    """Every registered section, by name, in registration order."""
    return dict(_SECTIONS)


# --------------------------------------------------------------------------- top level
def _point_kind_names() -> list[str]:
    from ibnetsim.experiment import kinds

    return kinds.names()


TOP_LEVEL: tuple[Key, ...] = (
    Key(
        "kind",
        "str",
        "What each point runs: a registered point kind (see below).",
        choices=_point_kind_names,
        sweep=False,
        allowed_doc="a point kind",
    ),
    Key("name", "str", "A label for the sweep, shown in reports and plot titles.", default="", sweep=False),
    Key("description", "str", "Free text kept in the results manifest.", default="", sweep=False),
    Key(
        "seed",
        "int",
        "Seed of the point. A list of seeds is the usual sweep axis; generators and "
        "routing take it unless their own `seed` is given.",
        default=1,
        min=0,
        max=2**63 - 1,
    ),
    Key(
        "plugins",
        "list[str]",
        "Python modules imported before the sweep (and on every worker) that register "
        "extra point kinds or sections with `ibnetsim.experiment.kinds.register`. "
        "Importing runs their code, also for `--dry-run`: a scenario with plugins is a program.",
        default=[],
        sweep=False,
    ),
)


# --------------------------------------------------------------------------- [fabric]
#: The link widths and speeds the core's fabric model knows.
_LINK_WIDTHS, _LINK_SPEEDS = (tuple(c) for c in _core.link_choices())


def _link_keys() -> tuple[Key, ...]:
    return (
        Key("link_width", "str", "Width of every link.", default="1x", choices=_LINK_WIDTHS),
        Key(
            "link_speed",
            "str",
            "Speed of every link (signalling rate per lane: SDR 2.5 … NDR 106.25 Gbaud).",
            default="SDR",
            choices=_LINK_SPEEDS,
        ),
        Key("cable_length_m", "float", "Cable length in metres; propagation is 5 ns/m.", default=1.0, min=0.0),
    )


def _hosts(default: Any = 1) -> Key:
    return Key("hosts_per_switch", "int", "Hosts (one-port HCAs) on every switch.", default=default, min=0, max=254)


def _check_irregular(s: dict, _cfg: dict) -> Optional[tuple[str, str]]:
    given = [k for k in ("links_per_switch", "total_links", "independent_cycles") if s.get(k) is not None]
    if len(given) != 1:
        return (
            "links_per_switch",
            "give exactly one of links_per_switch, total_links, independent_cycles"
            + (f" (got {', '.join(given)})" if given else ""),
        )
    n, ports, hosts = s["switches"], s["switch_ports"], s["hosts_per_switch"]
    links = s.get("links_per_switch")
    if links is not None:
        if links + hosts > ports:
            return (
                "links_per_switch",
                f"links_per_switch ({links}) + hosts_per_switch ({hosts}) exceeds switch_ports ({ports})",
            )
        if links > n - 1:
            return ("links_per_switch", f"{links} links per switch need at least {links + 1} switches (got {n}), as two switches share at most one link")
        if (n * links) % 2:
            return ("links_per_switch", f"switches × links_per_switch = {n} × {links} is odd, but every link has two ends")
    total = s.get("total_links")
    if total is None and s.get("independent_cycles") is not None:
        total = n - 1 + s["independent_cycles"]
    if total is not None:
        key = "total_links" if s.get("total_links") is not None else "independent_cycles"
        if total < n - 1:
            return (key, f"{total} switch-to-switch links cannot connect {n} switches (need at least {n - 1})")
        if total > n * (n - 1) // 2:
            return (key, f"{total} switch-to-switch links exceed the {n * (n - 1) // 2} pairs of {n} switches")
        if 2 * total > n * (ports - hosts):
            return (key, f"{total} links need {2 * total} switch ports but {n} switches have only {n * (ports - hosts)} free")
    return None


def _check_file(s: dict, _cfg: dict) -> Optional[tuple[str, str]]:
    return None


def _check_mesh(s: dict, _cfg: dict) -> Optional[tuple[str, str]]:
    dims = s.get("dims")
    if dims is not None:
        if not dims:
            return ("dims", "give at least one dimension")
        if any(d < 1 for d in dims):
            return ("dims", f"every dimension size must be at least 1 (got {dims})")
    return None


def _check_fabric(s: dict, cfg: dict) -> Optional[tuple[str, str]]:
    kind = s["kind"]
    if kind == "irregular":
        return _check_irregular(s, cfg)
    if kind in ("mesh",):
        return _check_mesh(s, cfg)
    return None


FABRIC = register_section(
    Section(
        "fabric",
        "The fabric each point runs on: generated (seeded, deterministic) or read from a file.",
        keys=(
            Key(
                "kind",
                "str",
                "Generator name, or `file` to read a topology file.",
                choices=("irregular", "mesh", "hypercube", "fat_tree", "ring", "single_switch", "file"),
                sweep=False,
            ),
        ),
        variants={
            "irregular": (
                Key("switches", "int", "Number of switches.", min=2),
                Key("switch_ports", "int", "Ports per switch.", min=1, max=254),
                _hosts(REQUIRED),
                Key("links_per_switch", "int", "Switch-to-switch links on every switch (papers 002/003: 4 or 6).", default=None, min=1),
                Key("total_links", "int", "Total switch-to-switch links, instead of `links_per_switch`.", default=None, min=1),
                Key("independent_cycles", "int", "Independent cycles (links − switches + 1), instead of `links_per_switch`.", default=None, min=0),
                Key("seed", "int", "Topology seed.", default=FROM_SEED, min=0, max=2**63 - 1),
            )
            + _link_keys(),
            "mesh": (
                Key("dims", "list[int]", "Switches per dimension, e.g. `[4, 4]`; a list of lists sweeps shapes."),
                Key("torus", "bool", "Wrap every dimension around.", default=False),
                _hosts(),
            )
            + _link_keys(),
            "hypercube": (
                Key("dimension", "int", "d: the cube has 2^d switches.", min=1, max=12),
                _hosts(),
            )
            + _link_keys(),
            "fat_tree": (
                Key("k", "int", "Arity: switches have 2k ports.", min=1, max=127),
                Key("n", "int", "Levels: the tree has k^n hosts.", min=1, max=8),
            )
            + _link_keys(),
            "ring": (Key("switches", "int", "Switches in the ring.", min=2), _hosts()) + _link_keys(),
            "single_switch": (Key("hosts", "int", "Hosts on the switch.", min=1, max=254),) + _link_keys(),
            "file": (
                Key("path", "path", "Topology file (ibnetdiscover/ibsim net, IBDM .topo or OpenSM subnet.lst), relative to the scenario."),
                Key("ibnl_dirs", "list[path]", "Extra folders of .ibnl system files for .topo files.", default=[]),
                Key(
                    "link_width",
                    "str",
                    "Width of the cables whose file gives none; unset = the format's (1x in a net file, 4x in an IBDM file).",
                    default=None,
                    choices=_LINK_WIDTHS,
                ),
                Key("link_speed", "str", "Speed of the cables whose file gives none; unset = SDR.", default=None, choices=_LINK_SPEEDS),
                Key("cable_length_m", "float", "Length of every cable in metres (no format carries one); unset = 1 m.", default=None, min=0.0),
                Key(
                    "cable_lengths",
                    "path",
                    "A file of `NODE PORT LENGTH_M` lines giving some cables their own length (docs/formats.md); "
                    "relative to the scenario.",
                    default=None,
                ),
            ),
        },
        variant_docs={
            "irregular": "Random irregular fabric as in papers 000–003: every switch has the same number of "
            "switch-to-switch links, two switches share at most one link, always connected.",
            "mesh": "n-dimensional mesh (or torus with `torus = true`); dimension d uses ports 2d+1 and 2d+2.",
            "hypercube": "2^d switches; dimension i on port i+1.",
            "fat_tree": "k-ary n-tree.",
            "ring": "A ring of switches.",
            "single_switch": "One switch with hosts.",
            "file": "A fabric read from a topology file. The results key hashes the file's content, so moving it keeps finished points.",
        },
        checks=(_check_fabric,),
    )
)


# --------------------------------------------------------------------------- [routing]
def _engine_names() -> list[str]:
    import ibnetsim

    return [name for name, _ in ibnetsim.routing_engines()]


def _chain(engine: str) -> list[str]:
    """The engines of ``engine``: one name, or a comma-separated chain (``dfsssp,updn``)."""
    return [m.strip() for m in engine.split(",")]


def _check_routing(s: dict, _cfg: dict) -> Optional[tuple[str, str]]:
    members = _chain(s["engine"])
    known = _engine_names()
    for m in members:
        # Engine names match without regard to case, as in OpenSM.
        if m.lower() not in {k.lower() for k in known}:
            what = f' in the chain "{s["engine"]}"' if len(members) > 1 else ""
            return ("engine", f'unknown value "{m}"{what}; expected one of: {", ".join(known)}, or a comma-separated chain of them')
    if "file" in members and s.get("lfts_file") is None:
        return ("lfts_file", "engine 'file' needs lfts_file (the tables to load)")
    if "file" not in members and s.get("lfts_file") is not None:
        return ("lfts_file", f"lfts_file is only read by engine 'file', not '{s['engine']}'")
    if s.get("fdbs_key") is not None and s.get("lfts_file") is None:
        return ("fdbs_key", "fdbs_key is the key of an .fdbs lfts_file; give lfts_file too")
    return None


ROUTING = register_section(
    Section(
        "routing",
        "The subnet manager: LID assignment and the routing engine that fills the forwarding tables.",
        keys=(
            Key(
                "engine",
                "str",
                "Routing engine (`ibnetsim route --list`), or a comma-separated chain such as `\"dfsssp,updn\"`: "
                "the first engine that routes the fabric is used (OpenSM's `routing_engine a,b`).",
                default="minhop",
                allowed_doc=", ".join(f"`{n}`" for n, _ in _core.routing_engines()) + ", or a chain of them",
            ),
            Key("lmc", "int", "LID mask control: 2^lmc LIDs per CA port.", default=0, min=0, max=7),
            Key("root", "list[str]", "up*/down* root switch(es), by name or GUID; empty lets the engine choose.", default=[]),
            Key("lfts_file", "path", "Forwarding tables for engine `file` (OpenSM dump or .fdbs).", default=None),
            Key("fdbs_key", "path", "The .fdbs.ini key of an ib_flit_sim .fdbs `lfts_file`.", default=None),
            Key("seed", "int", "Seed of engines that break ties randomly.", default=FROM_SEED, min=0, max=2**63 - 1),
            Key(
                "max_vls",
                "int",
                "Virtual layers (VLs) `dfsssp` or `lash` may spread their paths over, or `nue` splits its destinations over, each path then on its layer's SL; unset = 15 (`nue`: 1).",
                default=None,
                min=1,
                max=15,
            ),
            Key(
                "lash_start_vl",
                "int",
                "First VL (SL) of `lash`'s layers (OpenSM's `lash_start_vl`), below `max_vls`; unset = 0.",
                default=None,
                min=0,
                max=14,
            ),
            Key(
                "torus_config",
                "path",
                "The `torus-2QoS.conf` of engine `torus-2QoS` (OpenSM's `torus_config`): radices, seed links, datelines.",
                default=None,
            ),
            Key(
                "lid_order",
                "str",
                "How ports are numbered: `ibnetsim` (CA ports first, then the switches) or `opensm` (as OpenSM numbers a "
                "fresh subnet, the fabric's first node as the SM; tables then compare with OpenSM's dumps as they are).",
                default="ibnetsim",
                choices=tuple(_core.lid_orders()),
            ),
        ),
        checks=(_check_routing,),
    )
)


# --------------------------------------------------------------------------- [check]
CHECK = register_section(
    Section(
        "check",
        "Options of the routing check (`ibnetsim check`): SL-to-VL mapping for the credit-loop analysis "
        "and how uniform traffic is spread for the channel load.",
        keys=(
            Key("data_vls", "int", "Data VLs of the default SL2VL mapping (SL i → VL i mod data_vls).", default=1, min=1, max=15),
            Key("qos_file", "path", "opensm.conf-style QoS options (qos_sl2vl, qos_max_vls, …) instead of data_vls.", default=None),
            Key("spread_lmc", "bool", "Spread uniform traffic over every LID of a port (LMC > 0).", default=False),
        ),
    )
)


# --------------------------------------------------------------------------- [tframe]
TFRAME = register_section(
    Section(
        "tframe",
        "The VL arbitration frame of paper 001 §4: the time to send every slot of a full "
        "arbitration table (entries × max_weight slots of unit_bytes).",
        keys=(
            Key("link_width", "str", "Link width.", default="1x", choices=_LINK_WIDTHS),
            Key("link_speed", "str", "Link speed.", default="SDR", choices=_LINK_SPEEDS),
            Key(
                "rate_basis",
                "str",
                "`signalling` divides by baud × lanes (paper 001 quotes 2.5 Gb/s for 1x); "
                "`data` by the rate after 8b/10b or 64b/66b encoding (2 Gb/s for 1x SDR).",
                default="signalling",
                choices=("signalling", "data"),
            ),
            Key("entries", "int", "Table entries (IBA: at most 64 per table).", default=64, min=1, max=64),
            Key("max_weight", "int", "Weight of every entry (IBA: at most 255).", default=255, min=1, max=255),
            Key("unit_bytes", "int", "Bytes per weight unit (IBA: 64).", default=64, min=1),
        ),
    )
)


# --------------------------------------------------------------------------- reference page
_INTRO = """\
# Scenario files

A scenario is a TOML file that describes one run or a whole sweep. `ibnetsim sweep FILE -o DIR`
validates it, expands it into points and runs them (see the README for executors and the
results directory).

```toml
kind = "routing_stats"        # what each point runs
name = "updn vs minhop"
seed = [1, 2, 3, 4, 5]        # a list is a sweep axis

[fabric]
kind = "irregular"
switches = [8, 16, 32, 64]    # sweep axis
switch_ports = 8
links_per_switch = 4
hosts_per_switch = 4

[routing]
engine = ["updn", "minhop"]   # sweep axis
```

This file expands to 5 × 4 × 2 = 40 points.

## Rules

- **Sweeps.** Any key marked *sweep* may hold a list of values instead of one value; the scenario
  then expands to the Cartesian product of all lists (as CAMINOS does), in the order the keys appear
  in the file. A key whose type is itself a list (`list[int]`, …) sweeps with a list of lists:
  `dims = [[4, 4], [8, 8]]`. A list may not be empty or repeat a value.
- **Seeds** are an ordinary axis: `seed = [1, 2, 3]`. Keys whose default is "the point's `seed`"
  (the topology seed, the routing seed) follow it unless given.
- **Validation happens before anything runs**, for every point of the sweep. An unknown key, a
  wrong type, a value out of range or an impossible combination is an error that names the file,
  the line and the key, e.g. `grid.toml:7: fabric.links_per_switch: links_per_switch (6) +
  hosts_per_switch (4) exceeds switch_ports (8) (in the point with fabric.switches = 8)`.
- **Numbers** must be finite (`nan` and `inf` are errors). An integer key without a maximum below is
  a count and must fit 32 bits (at most 4294967295); a time may not exceed the core's picosecond
  clock (about 4.6 × 10¹² µs).
- **Warnings** name settings that are valid but likely a mistake: an offered `traffic.load` above 1
  and a `simulation.warmup_us` longer than half the run. Each key warns once when the scenario is
  loaded, with its file and line, and the results manifest keeps the warnings in its run entry.
- **Sections** are TOML tables. Each point kind reads some of them; a section the kind does not
  read is an unknown key. Sections with a `kind` key take different keys for each kind.
- **Paths** are relative to the scenario file. A point's results key hashes the *content* of the
  files it reads, not their path.
- Each point is keyed by a hash of its resolved configuration (every key, defaults filled in, but
  not `name`, `description` or `plugins`). Re-running a sweep skips points already in the results
  directory.
- **A scenario with `plugins` is code**, as a Makefile is: loading it imports those modules, and
  `sweep`, `run` and even `--dry-run` load it. Run only scenarios you trust. Results directories
  are data: `ibnetsim plot DIR` and `ibnetsim report DIR` do not import the plugins their manifest
  names unless you pass `--plugins` (without it, a plugin kind's own figures are left out, with a
  warning that says so).

This page is generated from the schema (`python -m ibnetsim.experiment.schema docs/scenario.md`)
and a test fails when they differ.
"""


def _fmt_default(k: Key) -> str:
    d = k.default
    if d is REQUIRED:
        return "required"
    if d is FROM_SEED:
        return "the point's `seed`"
    if d is None:
        return "not set"
    if isinstance(d, bool):
        return f"`{str(d).lower()}`"
    if isinstance(d, str):
        return f'`"{d}"`' if d else '`""`'
    if isinstance(d, list):
        return f"`{d}`"
    return f"`{d}`"


def _fmt_allowed(k: Key) -> str:
    if k.allowed_doc:
        return k.allowed_doc
    parts = []
    allowed = k.allowed()
    if allowed is not None:
        parts.append(", ".join(f"`{a}`" for a in allowed))
    # An integer's limits are shown exactly (4294967295, not 4.29497e+09).
    show = str if k.element_type == "int" else (lambda x: f"{x:g}")
    if k.min is not None and k.max is not None:
        parts.append(f"{show(k.min)} … {show(k.max)}" if k.max < 1e12 else f"≥ {show(k.min)}")
    elif k.min is not None:
        parts.append(f"≥ {show(k.min)}")
    elif k.max is not None:
        parts.append(f"≤ {show(k.max)}")
    return "; ".join(parts)


def _key_table(keys: Sequence[Key], prefix: str) -> list[str]:
    out = [
        "| key | type | default | allowed | sweep | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for k in keys:
        out.append(
            f"| `{prefix}{k.name}` | {k.type} | {_fmt_default(k)} | {_fmt_allowed(k)} | "
            f"{'yes' if k.sweep else 'no'} | {k.doc} |"
        )
    return out


def render_reference() -> str:
    """The scenario reference page (``docs/scenario.md``), from the schema and the registries."""
    from ibnetsim.experiment import kinds

    # Only what ships with ibnetsim: kinds and sections registered by plugins at
    # run time are not part of the reference.
    # Kinds in the order ibnetsim loads them, sections in the order the kinds read
    # them: the page must not depend on which module a caller happened to import first.
    order = {name: i for i, name in enumerate(kinds.BUILTIN_MODULES)}
    builtin = sorted(
        (pk for pk in kinds.all_kinds() if pk.run.__module__.startswith("ibnetsim.")),
        key=lambda pk: (order.get(pk.run.__module__, len(order)), pk.name),
    )
    used = {s for pk in builtin for s in pk.sections}
    section_order = list(dict.fromkeys(s for pk in builtin for s in pk.sections))
    lines = [_INTRO, "## Top-level keys", ""]
    lines += _key_table(TOP_LEVEL, "")
    lines += ["", "## Point kinds", ""]
    for pk in builtin:
        lines.append(f"### `kind = \"{pk.name}\"`")
        lines.append("")
        lines.append(pk.summary)
        lines.append("")
        lines.append("Sections: " + ", ".join(f"`[{s}]`" for s in pk.sections) + ".")
        lines.append("")
        if pk.columns:
            lines += ["| result column | meaning |", "|---|---|"]
            lines += [f"| `{c}` | {d} |" for c, d in pk.columns.items()]
            lines.append("")
        if pk.table_columns:
            shown = ", ".join(f"`{c}`" for c in pk.table_columns)
            lines += [f"`ibnetsim results` shows the swept keys, `status` and {shown} (`--wide`: every column).", ""]
    lines += ["## Sections", ""]
    for sec in sorted(_SECTIONS.values(), key=lambda sec: section_order.index(sec.name) if sec.name in used else -1):
        if sec.name not in used:
            continue
        lines += [f"### `[{sec.name}]`", "", sec.doc, ""]
        if sec.repeated:
            lines += [
                f"Write `[[{sec.name}]]` once per entry to give several; the keys of entry `i` "
                f"(from 0) are then named `{sec.name}[i].key` in sweeps, results and errors. "
                f"A single `[{sec.name}]` (or one `[[{sec.name}]]`) is one entry, with keys named `{sec.name}.key`.",
                "",
            ]
        lines += _key_table(sec.keys, f"{sec.name}.")
        lines.append("")
        for variant, keys in sec.variants.items():
            lines += [f"#### `{sec.name}.kind = \"{variant}\"`", ""]
            if variant in sec.variant_docs:
                lines += [sec.variant_docs[variant], ""]
            lines += _key_table(keys, f"{sec.name}.")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    # Run as a script this file is a second copy of the module; sections registered by
    # kinds outside it (``[simulation]``, ``[traffic]``) live in the imported one.
    from ibnetsim.experiment.schema import render_reference as _render

    text = _render()
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
