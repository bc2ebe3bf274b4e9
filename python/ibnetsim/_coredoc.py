"""The JSON document the keys of a run cross into the core as.

The core lays the document over the preset's config (or its defaults) and
names a wrong type or an unknown key by its key path
(``SimConfig::with_overrides``), so only the caller's keys cross. JSON cannot
carry NaN or infinities at all, so :func:`encode` refuses them up front,
naming the key.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ibnetsim.errors import ConfigError

__all__ = ["encode"]


def _check_finite(v: Any, path: str, label: str) -> None:
    if isinstance(v, dict):
        for k, x in v.items():
            _check_finite(x, f"{path}.{k}" if path else str(k), label)
    elif isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            _check_finite(x, f"{path}[{i}]", label)
    elif isinstance(v, float) and not math.isfinite(v):
        raise ConfigError(f"{label}: {path}: expected a finite number, got {v}")


def encode(doc: Any, label: str) -> str:
    """``doc`` as compact JSON; a NaN or infinity anywhere is a
    :class:`ConfigError` that names ``label`` and the key path."""
    _check_finite(doc, "", label)
    return json.dumps(doc, separators=(",", ":"))
