"""Heavy libraries imported on first use.

``import ibnetsim`` and every ``ibnetsim`` command that builds no table
(``--help``, ``route``, ``check``) would otherwise pay for pandas, numpy and
pyarrow at start-up, about 0.3 s here, which is most of a small command's
time. A module is bound as ``from ibnetsim._lazy import pandas as pd`` and
imported when an attribute of it is first read; ``pd.DataFrame`` and
``isinstance(x, pd.DataFrame)`` work as with a plain import.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for the module ``name`` until an attribute of it is read."""

    def __init__(self, name: str):
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{'' if self._module is None else ' (imported)'}>"


pandas = LazyModule("pandas")
numpy = LazyModule("numpy")
pyarrow = LazyModule("pyarrow")
parquet = LazyModule("pyarrow.parquet")
