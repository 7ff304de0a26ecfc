"""The catch-all's one line: an unexpected exception (a bug in toolc, never bad input) turned
into one located line at the boundary (the CLI, and each job of a batch compile).

Bad input is refused on purpose, with a :class:`~toolc.errors.ToolcError` that names its file,
tool and JSON pointer. Anything else that escapes (a RecursionError, a MemoryError, a
UnicodeError, a dependency's exception) is a bug: :func:`bug_line` says so, names the file,
the tool and the JSON pointer that were being compiled (read from the frames the exception
passed through), and asks for a report. The fuzzers treat reaching it as a failure
(:data:`MARKER` is in every such line).
"""

from __future__ import annotations

import traceback

MARKER = "this is a bug in toolc"
_POINTER_NAMES = ("ptr", "pointer", "sub_ptr")
_FILE_NAMES = ("source", "artifact", "tools_path", "format_file", "path")


def one_line(text: str) -> str:
    """``text`` on one line: control characters (a newline in a path) escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def where(exc: BaseException) -> dict:
    """The innermost file, tool and JSON pointer among the frames ``exc`` passed through."""
    found: dict = {}
    for frame, _ in reversed(list(traceback.walk_tb(exc.__traceback__))):
        local = frame.f_locals
        if "pointer" not in found:
            for name in _POINTER_NAMES:
                if isinstance(local.get(name), str):
                    found["pointer"] = local[name] or "/"
                    break
        if "file" not in found:
            for name in _FILE_NAMES:
                if isinstance(local.get(name), str) and local[name]:
                    found["file"] = local[name]
                    break
        if "tool" not in found:
            for v in local.values():
                name = getattr(v, "name", None)
                if type(v).__name__ == "Tool" and isinstance(name, str):
                    found["tool"] = name
                    break
    return found


def bug_line(exc: BaseException, file: str | None = None) -> str:
    """One line for an unexpected exception: where, what, and that it is a bug to report."""
    at = where(exc)
    file = file or at.get("file")
    parts = [file] if file else []
    if "tool" in at:
        parts.append(f"tool {at['tool']!r}")
    if "pointer" in at:
        parts.append(f"at {at['pointer']}")
    head = ", ".join(parts) or "toolc"
    what = str(exc)[:300]
    return one_line(f"{head}: internal error ({type(exc).__name__}"
                    f"{': ' + what if what else ''}); {MARKER}, please report it with the "
                    "input that caused it")
