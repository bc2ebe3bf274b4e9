"""Exceptions raised by ibnetsim.

Every error of the Rust core arrives as one of these; all derive from
:class:`IbnetsimError` (itself a :class:`ValueError`), so ``except
ibnetsim.IbnetsimError`` catches them all. Missing or unreadable files raise
Python's own :class:`FileNotFoundError` / :class:`PermissionError`.
"""

from ibnetsim._core import (
    ConfigError,
    DeadlockError,
    IbnetsimError,
    RoutingError,
    StarvationError,
    TopologyError,
)

__all__ = ["IbnetsimError", "TopologyError", "RoutingError", "ConfigError", "DeadlockError", "StarvationError"]
