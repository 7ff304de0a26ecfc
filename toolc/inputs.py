"""Reading what a user hands the compiler: files bounded in size (and so in time), values
checked for what JSON cannot carry on.

* :func:`read_json_file`: a regular file of at most ``max_bytes`` (a FIFO, a device or
  ``/dev/zero`` is refused before anything is read), as UTF-8 JSON; every failure one
  located line.
* :func:`check_value`: a lone surrogate in any string or key (``"\\ud800"`` is valid JSON but
  not Unicode text: it cannot be hashed, written or tokenized) and an integer of more than
  :data:`MAX_INT_DIGITS` digits are refused with their JSON pointer.
"""

from __future__ import annotations

import json
import os
import re

from .pointer import esc
from .runtime.files import read_bounded

MAX_TOOLS_BYTES = 64 << 20          # a tools file (the largest published sets are < 2 MB)
MAX_SPEC_BYTES = 1 << 20            # a --format-file spec
MAX_INT_DIGITS = 4300               # Python's own limit for str <-> int
_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG_INT = re.compile(rb"-?[0-9]{%d,}" % (MAX_INT_DIGITS + 1))


def read_json_file(path: str | os.PathLike, what: str, max_bytes: int, error):
    """The JSON value in the file ``path``; ``error(reason)`` makes every refusal (the
    caller names the file)."""
    path = os.fspath(path)
    raw = read_bounded(path, max_bytes, what, error)
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise error(f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise error(f"invalid JSON: {e.msg} at line {e.lineno} column "
                    f"{e.colno}") from None
    except RecursionError:
        raise error("JSON nested too deeply to read") from None
    except ValueError as e:     # an integer longer than Python converts
        m = _LONG_INT.search(raw)
        if m is None:
            raise error(f"unreadable JSON ({e})") from None
        line = raw.count(b"\n", 0, m.start()) + 1
        col = m.start() - (raw.rfind(b"\n", 0, m.start()) + 1) + 1
        raise error(f"an integer of {m.end() - m.start():,} characters at line {line} "
                    f"column {col} (at most {MAX_INT_DIGITS:,} digits are read)") from None


def check_value(value, prefix: str = "") -> tuple[str, str] | None:
    """``(pointer, what)`` of the first string with a lone surrogate or integer too long to
    convert in ``value`` (keys included), or None. Iterative: any depth."""
    todo = [(value, prefix)]
    while todo:
        v, ptr = todo.pop()
        if isinstance(v, str):
            m = _SURROGATE.search(v)
            if m:
                return ptr or "/", (f"a lone surrogate {m.group()!r} in a string (not "
                                    "Unicode text; write the character itself, or drop it)")
        elif isinstance(v, bool) or v is None or isinstance(v, float):
            continue
        elif isinstance(v, int):
            if v.bit_length() > MAX_INT_DIGITS * 3.32:
                return ptr or "/", f"an integer of more than {MAX_INT_DIGITS:,} digits"
        elif isinstance(v, dict):
            for k, x in reversed(list(v.items())):
                if isinstance(k, str) and _SURROGATE.search(k):
                    return (f"{ptr}/{esc(k)}", f"a lone surrogate {_SURROGATE.search(k).group()!r}"
                            " in a key (not Unicode text)")
                todo.append((x, f"{ptr}/{esc(k) if isinstance(k, str) else k}"))
        elif isinstance(v, (list, tuple)):
            todo.extend((x, f"{ptr}/{i}") for i, x in reversed(list(enumerate(v))))
    return None
