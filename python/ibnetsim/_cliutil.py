"""Shared by every ``ibnetsim`` command: error handling (one line on stderr,
exit status 2) and counted nouns for messages."""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable

import click

from ibnetsim.errors import IbnetsimError


def plural(n: int, noun: str) -> str:
    """``1 point``, ``2 points``, ``0 points``: ``noun`` is singular and takes an s."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def friendly_errors(*also: type[BaseException]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Turns library and OS errors (and the exception types in ``also``, e.g. the
    ``KeyError``/``ValueError`` a lookup by a user-given name raises) into an
    ``error: …`` line and exit status 2."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except IbnetsimError as e:
                fail(str(e))
            except OSError as e:
                fail(f"{e.filename}: {e.strerror}" if e.filename else str(e))
            except also as e:  # type: ignore[misc]
                fail(str(e.args[0]) if e.args else str(e))

        return wrapper

    return decorate
