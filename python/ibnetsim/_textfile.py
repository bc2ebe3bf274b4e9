"""Reading the small text files users hand us (scenarios, request files).

The rules match the core's readers (``ibnetsim_fabric::io::read_text_file``):
only regular files (a FIFO would block, a device never end), of bounded
size. A missing or unreadable file raises Python's own ``OSError``; anything
else raises :class:`TextFileError` with the line at fault, which callers turn
into their own error type.
"""

from __future__ import annotations

import os
import stat
from typing import Optional, Union

#: The largest text file read; the biggest real inputs are tens of megabytes.
MAX_TEXT_BYTES = 1 << 30


class TextFileError(Exception):
    """A file that is not a text file we can read; ``line`` is 1-based or None."""

    def __init__(self, message: str, line: Optional[int] = None):
        super().__init__(message)
        self.message = message
        self.line = line


def read_bytes(path: Union[str, os.PathLike], what: str) -> bytes:
    """The bytes of ``path``, a regular file of at most :data:`MAX_TEXT_BYTES`;
    ``what`` names the kind of file expected ("a scenario file")."""
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TextFileError(f"not a regular file (a directory, device or pipe); give {what}")
        if st.st_size > MAX_TEXT_BYTES:
            raise TextFileError(f"{st.st_size} bytes is larger than {what} can be ({MAX_TEXT_BYTES} at most)")
        return fh.read(MAX_TEXT_BYTES + 1)


def read_text(path: Union[str, os.PathLike], what: str) -> str:
    """The UTF-8 text of :func:`read_bytes`; bytes that are not UTF-8 raise
    :class:`TextFileError` naming the line and column."""
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise TextFileError(f"not UTF-8 text: byte {data[e.start]:#04x} at column {column}", line) from None
