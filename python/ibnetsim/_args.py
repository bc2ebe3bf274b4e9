"""Checks of the Python API's arguments, before they reach the core.

The core takes integers of a fixed width (a ``u8`` LMC, a ``u64`` seed) and
finite floats; a Python value outside that (``lmc=-1``, ``seed=nan``,
``lmc=2.7``, ``load="0.1"``) would otherwise surface as a raw
``OverflowError``/``TypeError``, be truncated silently, or fail deep inside a
run. Each check raises :class:`ibnetsim.ConfigError` naming the argument as
the caller wrote it, and returns the value in the type the core wants. The
ranges a value's meaning sets (an SL up to 15, an LMC up to 7) are the core's
to check: it names the key with them, so Python keeps no copy.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional

from ibnetsim.errors import ConfigError, IbnetsimError

__all__ = ["integer", "number", "choice", "closest", "U8_MAX", "U16_MAX", "U32_MAX", "U64_MAX"]

U8_MAX = 2**8 - 1
U16_MAX = 2**16 - 1
U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1


def integer(name: str, value: Any, lo: int, hi: int) -> int:
    """``value`` as an int in ``lo..=hi``; a bool, a float (even 2.0: it is
    likely a computed value that lost its meaning) or a string is refused."""
    # numbers.Integral admits numpy's integer scalars, which users index with.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{name}: expected a whole number in {lo}..={hi}, got {value!r} ({type(value).__name__})")
    v = int(value)
    if not lo <= v <= hi:
        raise ConfigError(f"{name}: {v} is out of range {lo}..={hi}")
    return v


def number(
    name: str,
    value: Any,
    lo: Optional[float] = None,
    hi: Optional[float] = None,
    *,
    above: Optional[float] = None,
    error: type[IbnetsimError] = ConfigError,
) -> float:
    """``value`` as a finite float with ``lo <= value <= hi`` (and ``value >
    above``); a bool or a string is refused, NaN and infinities too. ``error``
    is the class raised (a fabric's parameters raise ``TopologyError``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error(f"{name}: expected a number, got {value!r} ({type(value).__name__})")
    v = float(value)
    if not math.isfinite(v):
        raise error(f"{name}: expected a finite number, got {v}")
    if lo is not None and v < lo:
        raise error(f"{name}: {v:g} is below the minimum {lo:g}")
    if hi is not None and v > hi:
        raise error(f"{name}: {v:g} is above the maximum {hi:g}")
    if above is not None and not v > above:
        raise error(f"{name}: must be above {above:g}, got {v:g}")
    return v


def choice(name: str, value: Any, options: Any) -> str:
    """``value`` if it is one of ``options`` (a registry of the core), else
    :class:`ConfigError` naming the argument, the options and the closest one."""
    options = list(options)
    if isinstance(value, str) and value in options:
        return value
    close = closest(value, options) if isinstance(value, str) else None
    hint = f"did you mean '{close}'? " if close else ""
    raise ConfigError(f"{name}: unknown value {value!r} ({hint}expected one of {', '.join(options)})")


def closest(word: str, options: Any) -> Optional[str]:
    """The option a misspelt ``word`` most resembles, or None (for "did you mean")."""
    import difflib

    close = difflib.get_close_matches(word, list(options), n=1)
    return close[0] if close else None
