"""How reports and tables print numbers.

A result column holds floats to full precision (``57.14285714285714``), counts
come back from pandas as floats (``256.0``) and a missing value is ``None`` or
NaN; printed as they are they hide the number the reader looks for. Here a
number gets a few significant digits, integers get thousands separators and no
``.0``, differences carry a sign and relative differences are percentages.
"""

from __future__ import annotations

import math
import re
from numbers import Integral, Real
from typing import Any, Optional

__all__ = ["MISSING", "number", "exact", "percent", "significant_digits"]

#: What an absent or NaN value prints as.
MISSING = "—"


def number(x: Any, digits: int = 4, signed: bool = False) -> str:
    """``x`` to ``digits`` significant digits; whole numbers with thousands
    separators. Values of ``10**(digits-1)`` or more print as whole numbers,
    so a count never turns into ``1.235e+04``."""
    if x is None:
        return MISSING
    if isinstance(x, bool) or not isinstance(x, Real):
        return str(x)
    sign = "+" if signed else ""
    if isinstance(x, Integral):
        return "0" if x == 0 else f"{int(x):{sign},d}"
    x = float(x)
    if math.isnan(x):
        return MISSING
    if math.isinf(x):
        return ("+∞" if signed else "∞") if x > 0 else "-∞"
    if x == 0:
        return "0"
    if 10 ** (digits - 1) <= abs(x) < 1e15:
        return f"{round(x):{sign},d}"
    s = f"{x:{sign}.{digits}g}"
    # Rounding can carry into a whole number (999.96 → 1000), which then wants its separator.
    return f"{int(s):{sign},d}" if s.lstrip("+-").isdigit() else s


def exact(x: Any) -> str:
    """A number as given (a paper's value): every digit it was written with, none added."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return number(int(x))
    if isinstance(x, float) and not math.isnan(x):
        return repr(x)
    return number(x)


def percent(fraction: Optional[float]) -> str:
    """A relative difference as a signed percentage: ``-0.1234`` → ``-12.3 %``."""
    if fraction is None or (isinstance(fraction, float) and math.isnan(fraction)):
        return MISSING
    return f"{number(fraction * 100, digits=3, signed=True)} %"


def significant_digits(x: float) -> int:
    """How many significant digits ``x`` was written with (``0.769`` → 3, ``12000`` → 2)."""
    if x == 0 or not math.isfinite(x):
        return 1
    if float(x).is_integer() and abs(x) < 1e15:
        return len(str(abs(int(x))).rstrip("0"))
    mantissa = repr(abs(float(x))).split("e")[0]
    return len(re.sub(r"^0+", "", mantissa.replace(".", ""))) or 1
