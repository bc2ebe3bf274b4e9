"""Scenario keys the Rust core declares: the ``[switch]``, ``[hca]`` and
``[traffic]`` sections.

The core exports the JSON schema of its ``SwitchConfig``, ``HcaConfig`` and
``ClassDoc`` (one traffic class; ``_core.sim_section_schema``): every field
with its type, its range, its choices (an enum's values, each with its doc),
its default and its doc comment. :func:`keys_from_core` turns one into
scenario :class:`Key` objects, so a field added to the Rust struct is a
scenario key, documented on ``docs/scenario.md``, without an edit here; the
values are checked by the core itself when the scenario is loaded
(``kinds.simulate``). The keys of ``[switch]`` and ``[hca]`` default to
unset, so that the preset's value (or the core's default) applies; those of
``[traffic]`` take the core's defaults, and the fields the core requires are
required.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ibnetsim import _core
from ibnetsim.experiment.schema import REQUIRED, Key
from ibnetsim.sim import max_time_us

__all__ = ["keys_from_core"]

#: The largest value of each integer format in the schema; a u64 stops at
#: 2^63 - 1, the largest integer the results store holds.
_INT_MAX = {"uint8": 2**8 - 1, "uint16": 2**16 - 1, "uint32": 2**32 - 1, "uint64": 2**63 - 1}
_SCALAR = {"integer": "int", "number": "float", "boolean": "bool", "string": "str"}


def _resolve(node: dict, defs: dict) -> dict:
    ref = node.get("$ref")
    return {**defs[ref.rsplit("/", 1)[1]], **{k: v for k, v in node.items() if k != "$ref"}} if ref else node


def _text(doc: str) -> str:
    return " ".join(doc.split())


def _choices(node: dict) -> Optional[list[dict[str, Any]]]:
    alts = node.get("oneOf")
    if alts and all("const" in a for a in alts):
        return alts
    if "enum" in node:
        return [{"const": v} for v in node["enum"]]
    return None


def _unit_max(name: str) -> Optional[float]:
    """The longest time a key in ns or µs may give: the core's picosecond clock."""
    if name.endswith("_ns"):
        return max_time_us() * 1000
    if name.endswith("_us"):
        return max_time_us()
    return None


def _type(node: dict) -> str:
    """The JSON type of a node; an ``Option`` is its inner type (unset is ``None``)."""
    t = node["type"]
    return next(x for x in t if x != "null") if isinstance(t, list) else t


def _max(node: dict) -> Optional[float]:
    """The smaller of the node's own maximum and its integer format's."""
    bounds = [b for b in (node.get("maximum"), _INT_MAX.get(node.get("format", ""))) if b is not None]
    return min(bounds) if bounds else None


def _key(name: str, node: dict, defs: dict, default: Any) -> Key:
    node = _resolve(node, defs)
    doc = _text(node.get("description", ""))
    alts = _choices(node)
    if alts is not None:
        variants = " ".join(f"`{a['const']}`: {_text(a['description'])}" for a in alts if "description" in a)
        # An enum's variants are names; a number's choices keep its type (`mtu_bytes`).
        kind = "int" if node.get("type") == "integer" else "str"
        return Key(name, kind, f"{doc} {variants}".strip(), default=default, choices=tuple(a["const"] for a in alts))
    kind = _type(node)
    if kind == "array":
        item = _resolve(node["items"], defs)
        # Unset is an empty list, as a scenario writes it.
        return Key(name, f"list[{_SCALAR[_type(item)]}]", doc, default=[], min=item.get("minimum"), max=_max(item))
    if kind == "integer":
        return Key(name, "int", doc, default=default, min=node.get("minimum"), max=_max(node))
    hi = _unit_max(name)
    if hi is not None:
        # A time is never negative, nor longer than the core's clock.
        return Key(name, _SCALAR[kind], doc, default=default, min=0.0, max=hi)
    return Key(name, _SCALAR[kind], doc, default=default, min=node.get("minimum"), max=node.get("maximum"))


def keys_from_core(section: str, core_defaults: bool = False) -> tuple[Key, ...]:
    """The keys of ``[section]`` (``switch``, ``hca`` or ``traffic``) from the
    core's schema, in the order of the struct's fields. They default to unset
    unless ``core_defaults``: then to the core's default, and the keys the
    core requires are required."""
    schema = json.loads(_core.sim_section_schema(section))
    defs = schema.get("$defs", {})
    props = schema["properties"]
    required = set(schema.get("required", ()))
    # The schema's properties are sorted by name; the default document keeps the fields' order.
    defaults = json.loads(_core.sim_section_default(section))

    def default(name: str) -> Any:
        if not core_defaults:
            return None
        return REQUIRED if name in required else defaults[name]

    # `simulation`'s default is the whole config, whose tables its schema leaves out.
    return tuple(_key(name, props[name], defs, default(name)) for name in defaults if name in props)
