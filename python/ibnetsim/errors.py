"""Exceptions raised by ibnetsim.

Every error of the Rust core arrives as one of these; all derive from
:class:`IbnetsimError` (itself a :class:`ValueError`), so ``except
ibnetsim.IbnetsimError`` catches them all, and :class:`ResultsError`, raised
by the Python side for a results directory, too. Missing or unreadable files raise
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

__all__ = ["IbnetsimError", "TopologyError", "RoutingError", "ConfigError", "DeadlockError", "StarvationError", "ResultsError"]


class ResultsError(IbnetsimError):
    """A results directory that cannot be used as it is: its manifest is
    corrupt, or another sweep is writing to it. The message names the path
    and says what to do."""
