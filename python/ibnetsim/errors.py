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

__all__ = ["IbnetsimError", "TopologyError", "RoutingError", "ConfigError", "DeadlockError", "StarvationError", "ResultsError", "ConfigWarning"]


class ConfigWarning(UserWarning):
    """A valid setting that is likely a mistake (an offered load above 1, a
    warm-up longer than half the run): the run goes ahead, and the message
    says what its figures will then show."""


class ResultsError(IbnetsimError):
    """A results directory that cannot be used as it is: its manifest is
    corrupt, or another sweep is writing to it. The message names the path
    and says what to do."""
