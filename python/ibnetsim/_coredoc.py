"""The JSON document a configuration crosses into the core as, with key paths kept.

The core parses the document (``serde``) and reports a wrong type or an
out-of-range integer at a *column* of it: a position in text the user never
saw. :func:`encode` writes the document and remembers where each key and value
starts, so :func:`core_error` can name the key path instead
(``traffic.classes[0].payload_sizes[1]``). JSON cannot carry NaN or
infinities at all, so :func:`encode` refuses them up front, naming the key.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from typing import Any

from ibnetsim.errors import ConfigError

__all__ = ["encode", "core_error"]

# serde_json ends every message with the position it stopped at.
_AT = re.compile(r"^(?P<what>.*?): (?P<msg>.*) at line 1 column (?P<col>\d+)$", re.S)


class Encoded:
    """The document's text and, in text order, the offset where each key or
    value starts with its key path."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.starts: list[int] = []
        self.paths: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def _put(self, s: str) -> None:
        self.parts.append(s)
        self.size += len(s)

    def _mark(self, path: str) -> None:
        self.starts.append(self.size)
        self.paths.append(path)

    def value(self, v: Any, path: str, label: str) -> None:
        self._mark(path)
        if isinstance(v, dict):
            self._put("{")
            for i, (k, x) in enumerate(v.items()):
                if i:
                    self._put(",")
                sub = f"{path}.{k}" if path else str(k)
                self._mark(sub)
                self._put(json.dumps(str(k)) + ":")
                self.value(x, sub, label)
            self._put("}")
        elif isinstance(v, (list, tuple)):
            self._put("[")
            for i, x in enumerate(v):
                if i:
                    self._put(",")
                self.value(x, f"{path}[{i}]", label)
            self._put("]")
        else:
            if isinstance(v, float) and not math.isfinite(v):
                raise ConfigError(f"{label}: {path}: expected a finite number, got {v}")
            self._put(json.dumps(v))

    def path_at(self, column: int) -> str:
        """The key path of the innermost key or value that starts before the
        1-based ``column`` (serde reports the column where it stopped, at or
        after the start of the offending token)."""
        i = bisect.bisect_left(self.starts, column) - 1
        return self.paths[i] if i >= 0 else ""


def encode(doc: Any, label: str) -> Encoded:
    """Writes ``doc`` as compact JSON; a NaN or infinity anywhere is a
    :class:`ConfigError` that names ``label`` and the key path."""
    enc = Encoded()
    enc.value(doc, "", label)
    return enc


def core_error(e: ConfigError, enc: Encoded) -> ConfigError:
    """``e`` from the core, with a ``line 1 column N`` position of the document
    replaced by the key path there; other errors are returned unchanged."""
    m = _AT.match(str(e))
    if m is None:
        return e
    path = enc.path_at(int(m["col"]))
    return ConfigError(f"{m['what']}: {path}: {m['msg']}" if path else f"{m['what']}: {m['msg']}")
