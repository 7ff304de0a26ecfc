"""Compiling for CI: staleness checks, several tools files in parallel, a content-addressed
artifact cache.

* :func:`expected_header` says what an up-to-date artifact's header must hold for a tools
  file, a tokenizer and options (toolc version, tokenizer name and fingerprint, logits size,
  EOS ids, tools hash, options), without compiling; :func:`stale_reasons` compares it with an
  existing artifact. ``toolc compile --check`` exits 1 when any reason is found.
* :func:`build_many` compiles several tools files in parallel processes. Each job first asks
  the artifact cache (``toolc.cache``, kind ``artifact``) under a key that hashes everything
  the output depends on (the header fields above and a hash of toolc's own source, so an
  edited compiler never reuses an old entry); a hit is written out without compiling.
"""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from . import cache
from .crash import bug_line, one_line
from .errors import ArtifactError, ToolcError
from .options import CompileOptions
from .runtime import Artifact, load
from .runtime.fileformat import write_atomic

#: header fields that must match for an artifact to be up to date
CHECKED = ("toolc_version", "tokenizer", "fingerprint", "logits_size", "eos_token_ids",
           "tools_hash", "format", "format_spec", "options")


def expected_header(tools: str, tokenizer="qwen", options: CompileOptions | None = None,
                    **kwargs) -> dict:
    """The header fields in :data:`CHECKED` that compiling ``tools`` now would write, from the
    same function the compile writes them with (:func:`toolc.compiler.make_header`)."""
    from .compiler import make_header
    from .formats import get_format
    from .tokenizer import load_vocabulary
    from .tools import load_tools_file

    opts = CompileOptions.from_kwargs(options, **kwargs)
    head = make_header(opts, load_vocabulary(tokenizer), load_tools_file(tools),
                       get_format(opts.format))
    return {k: head[k] for k in CHECKED if k in head}


def stale_reasons(artifact_path: str, expected: dict) -> list[str]:
    """Why the artifact at ``artifact_path`` is not what ``expected`` describes ([] = fresh).

    Reads the file fully and verifies it (a damaged file is stale too).
    """
    if not os.path.exists(artifact_path):
        return ["the artifact does not exist"]
    try:
        art = load(artifact_path)
    except ArtifactError as e:
        return [f"unreadable ({e})"]
    out = []
    for k in CHECKED:
        have = art.header.get(k)
        if have != expected.get(k):
            if k in ("fingerprint", "tools_hash"):
                out.append(f"{k} differs ({str(have)[:12]} in the artifact, "
                           f"{str(expected.get(k))[:12]} now)")
            else:
                out.append(f"{k} differs ({json.dumps(have)} in the artifact, "
                           f"{json.dumps(expected.get(k))} now)")
    return out


_CODE: list[str] = []


def code_hash() -> str:
    """sha256 over the source of every toolc module (sorted by path)."""
    if not _CODE:
        root = os.path.dirname(os.path.abspath(__file__))
        h = hashlib.sha256()
        for dirpath, dirnames, files in os.walk(root):
            dirnames.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    h.update(os.path.relpath(path, root).encode() + b"\0")
                    with open(path, "rb") as fh:
                        h.update(fh.read())
        _CODE.append(h.hexdigest())
    return _CODE[0]


def cache_key(expected: dict) -> str:
    """The content address of an artifact: sha256 of everything its bytes depend on."""
    canon = json.dumps({"header": expected, "code": code_hash()}, sort_keys=True,
                       separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


@dataclass
class BuildResult:
    tools: str
    output: str
    status: str            # "compiled", "cached" (copied from the cache) or "failed"
    error: str | None = None
    summary: str = ""
    messages: list = field(default_factory=list)   # notices and --lenient warnings


def build_one(tools: str, output: str, tokenizer="qwen", use_cache: bool = True,
              progress=None, options: CompileOptions | None = None, **kwargs) -> BuildResult:
    """Compile one tools file to ``output`` (atomically), or copy it from the cache.

    Never raises for bad input: a :class:`ToolcError` or ``ValueError`` becomes ``error``.
    With ``record_time`` the cache is not used (such artifacts differ between runs).
    """
    try:
        opts = CompileOptions.from_kwargs(options, **kwargs)
        record = opts.record_time
        expected = expected_header(tools, tokenizer, opts)
        key = cache_key(expected)
        data = cache.read(key, kind="artifact") if use_cache and not record else None
        if isinstance(data, bytes):
            art = Artifact.from_bytes(data, source=output)    # verify before writing it out
            write_atomic(output, data)
            return BuildResult(tools, output, "cached", summary=_summary(art, data),
                               messages=_messages(tools, art))
        from .compiler import compile_tools
        art = compile_tools(tools, tokenizer, options=opts, progress=progress)
        data = art.to_bytes()
        write_atomic(output, data)
        if use_cache and not record:
            cache.write(key, data, kind="artifact")
        return BuildResult(tools, output, "compiled", summary=_summary(art, data),
                           messages=_messages(tools, art))
    except ToolcError as e:
        return BuildResult(tools, output, "failed", error=one_line(str(e)))
    except OSError as e:
        return BuildResult(tools, output, "failed", error=one_line(
            f"{output}: cannot write the artifact: {e.strerror or e}"))
    except Exception as e:      # a bug: one located line, and the other jobs go on
        return BuildResult(tools, output, "failed", error=bug_line(e, tools))


def _messages(tools: str, art) -> list[str]:
    """The notices (type-name mappings) and --lenient warnings the header records."""
    out = [f"notice: {tools}, tool {n['tool']!r}, at {n['pointer']}: {n['message']}"
           for n in art.header.get("notices", [])]
    out += [f"warning: {tools}, tool {d['tool']!r}, at {d['pointer']}: {d['keyword']!r} "
            f"dropped, not enforced: {d['why']}" for d in art.header.get("not_enforced", [])]
    return out


def _summary(art, data: bytes) -> str:
    return (f"{len(art.tool_names)} tools, {art.num_states:,} states, "
            f"{art.num_mask_rows:,} mask rows, {len(data):,} bytes")


def _job(args):
    tools, output, tokenizer, use_cache, options = args
    return build_one(tools, output, tokenizer, use_cache, options=options)


def build_many(jobs: list[tuple[str, str]], tokenizer="qwen", *, processes: int | None = None,
               use_cache: bool = True, options: CompileOptions | None = None,
               **kwargs) -> list[BuildResult]:
    """Compile ``(tools, output)`` pairs, in parallel processes when there are several.

    Results come back in the order of ``jobs``.
    """
    opts = CompileOptions.from_kwargs(options, **kwargs)
    if processes is None:
        processes = min(len(jobs), os.cpu_count() or 1)
    work = [(t, o, tokenizer, use_cache, opts) for t, o in jobs]
    if processes <= 1 or len(jobs) <= 1:
        return [_job(w) for w in work]
    with ProcessPoolExecutor(max_workers=processes) as pool:
        return list(pool.map(_job, work))
