"""Where ``toolc compile`` writes, checked before anything is compiled so that no data is
lost: never over an input, a device, a FIFO or a directory, never under a file, never two
artifacts to one path; and how ``toolc parse`` writes its result.
"""

from __future__ import annotations

import os

import click

from .crash import one_line


def output_paths(tools, output: str | None) -> list[str]:
    """Where each tools file's artifact goes, refused (a usage error) where writing would lose
    data: an output that is an input, that exists but is not a regular file, that lies under
    a file, or that two inputs share; several inputs need ``-o`` to be an existing directory
    or to end with ``/`` (a usage error, exit 2; the others exit 1)."""
    def refuse(message):
        raise click.ClickException(one_line(message))

    if len(tools) > 1 and output is not None and not (
            os.path.isdir(output) or output.endswith(("/", os.sep))):
        raise click.UsageError(one_line(f"{output}: with several tools files, -o must be an "
                                        "existing directory or end with /"))
    outputs = []
    for t in tools:
        stem = os.path.splitext(os.path.basename(t))[0]
        if output is None:
            outputs.append(os.path.join("artifacts", f"{stem}.toolc"))
        elif len(tools) > 1 or os.path.isdir(output) or output.endswith(("/", os.sep)):
            outputs.append(os.path.join(output, f"{stem}.toolc"))
        else:
            outputs.append(output)
    inputs = {os.path.realpath(t) for t in tools}
    seen = set()
    for out in outputs:
        real = os.path.realpath(out)
        if real in inputs:
            refuse(f"{out} is an input file; writing the artifact there would replace it")
        if real in seen:
            refuse(f"{out} is the output of two tools files; give them different names")
        seen.add(real)
        if os.path.lexists(out) and not os.path.isfile(out):
            refuse(f"{out} exists and is not a regular file; name a file or a new path")
        parent = os.path.dirname(os.path.abspath(out))
        while parent and not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if parent and not os.path.isdir(parent):
            refuse(f"{out}: {parent} is not a directory")
    return outputs


def write_parse_result(out: dict, fh) -> None:
    """``out`` as JSON: the top level indented by two, each tool call compact on a line of its
    own (C-encoded one call at a time: no second copy of the result, and the pure-Python
    encoder that ``indent`` would take is never used)."""
    from .parse_result import dumps as encode
    fh.write("{")
    for i, (key, value) in enumerate(out.items()):
        fh.write(("," if i else "") + "\n  " + encode(key) + ": ")
        if key == "tool_calls" and value:
            for j, call in enumerate(value):
                fh.write(("," if j else "[") + "\n    " + encode(call))
            fh.write("\n  ]")
        else:
            fh.write(encode(value))
    fh.write("\n}\n")
