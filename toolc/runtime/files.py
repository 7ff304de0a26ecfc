"""Reading a file bounded in size (and so in time) before anything is read, and naming a path
in a one-line message. Standard library and :mod:`toolc.errors` only, so that
:mod:`toolc.inputs` (the CLI's tools and spec files) reads through it without numpy.
"""

from __future__ import annotations

import os
import stat

from ..errors import ArtifactError


def shown(path: str) -> str:
    """``path`` as a message names it: as it is, or escaped (``ascii``) when it holds a
    newline or another unprintable character, so that the message stays one line."""
    return path if path.isprintable() else ascii(path)


def read_bounded(path: str, max_bytes: int, what: str, error=None) -> bytes:
    """The bytes of the regular file ``path``, refused before anything is read when it is
    not a regular file (a FIFO would block, ``/dev/zero`` never ends) or is larger than
    ``max_bytes``; at most ``max_bytes + 1`` bytes are ever read. ``error(reason)`` makes
    the exception (default: an ArtifactError naming the path)."""
    if error is None:
        def error(reason):
            return ArtifactError(f"{shown(path)}: {reason}")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as e:      # ValueError: a NUL in the path
        raise error(f"cannot read the {what}: {getattr(e, 'strerror', None) or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise error(f"cannot read the {what}: {kind}")
        if st.st_size > max_bytes:
            raise error(f"{st.st_size:,} bytes is larger than any {what} (at most "
                        f"{max_bytes:,})")
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as e:
        raise error(f"cannot read the {what}: {e.strerror}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise error(f"larger than any {what} (at most {max_bytes:,} bytes)")
    return data
