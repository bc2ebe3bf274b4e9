"""ibnetsim: an InfiniBand fabric simulator with its own subnet manager."""

from ibnetsim._core import __version__

__all__ = ["__version__"]
