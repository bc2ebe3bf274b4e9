"""Scenario keys the Rust core declares: the ``[switch]`` and ``[hca]`` sections.

The core exports the JSON schema of its ``SwitchConfig`` and ``HcaConfig``
(``_core.sim_section_schema``): every field with its type, the range of its
integer type, its choices (an enum's values, each with its doc) and its doc
comment. :func:`keys_from_core` turns one into scenario :class:`Key` objects,
so a field added to the Rust struct is a scenario key, documented on
``docs/scenario.md``, without an edit here; the values are checked by the
core itself when the scenario is loaded (``kinds.simulate``). Every key
defaults to unset: the preset's value (or the core's default) applies.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ibnetsim import _core
from ibnetsim.experiment.schema import Key
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


def _key(name: str, node: dict, defs: dict) -> Key:
    node = _resolve(node, defs)
    doc = _text(node.get("description", ""))
    alts = _choices(node)
    if alts is not None:
        variants = " ".join(f"`{a['const']}`: {_text(a['description'])}" for a in alts if "description" in a)
        return Key(name, "str", f"{doc} {variants}".strip(), default=None, choices=tuple(a["const"] for a in alts))
    if node["type"] == "array":
        item = _resolve(node["items"], defs)
        # Unset is an empty list, as a scenario writes it.
        return Key(name, f"list[{_SCALAR[item['type']]}]", doc, default=[], min=item.get("minimum"), max=_INT_MAX.get(item.get("format", "")))
    if node["type"] == "integer":
        return Key(name, "int", doc, default=None, min=node.get("minimum"), max=_INT_MAX.get(node.get("format", "")))
    hi = _unit_max(name)
    # A time is never negative.
    return Key(name, _SCALAR[node["type"]], doc, default=None, min=0.0 if hi is not None else None, max=hi)


def keys_from_core(section: str) -> tuple[Key, ...]:
    """The keys of ``[section]`` (``switch`` or ``hca``) from the core's
    schema, in the order of the struct's fields."""
    schema = json.loads(_core.sim_section_schema(section))
    defs = schema.get("$defs", {})
    props = schema["properties"]
    # The schema's properties are sorted by name; the default config keeps the fields' order.
    order = json.loads(_core.sim_config_json(None))[section]
    return tuple(_key(name, props[name], defs) for name in order)
