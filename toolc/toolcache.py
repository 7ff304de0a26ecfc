"""A cache for compiles whose tool lists change per request: :class:`ToolCache`.

``toolc.compile_tools(tools, tok, cache=ToolCache())`` keeps three kinds of entries, each keyed
by everything that can change it (a sha256 of it, or an entry's JSON text), so that a hit is
the same value a cold compile makes (the tests compare the bytes):

* **Whole artifacts**, keyed by the header fields known before the automaton is built
  (toolc version, tokenizer fingerprint, the tools' canonical JSON in order, the format and
  its spec, the options): the fields ``toolc compile --check`` compares. A request that
  repeats a tool set gets the compiled :class:`~toolc.runtime.Artifact` back (shared and
  read-only; each request takes its own ``matcher()``). Loaded artifacts are bounded in
  bytes (their sections and expanded mask rows: some 13 MB for Qwen3), least recently used
  first out; what leaves is kept packed (:func:`pack`: its header and sections, deflated
  fast, tens to hundreds of KB) under a bound of its own and loaded again, checked as a
  file's sections are, when asked for. The packing (some 4 ms of zlib for a 12-tool Qwen3
  set) runs on a background thread, not in the request that pushes the artifact out: until it
  is packed, the artifact stays loaded and is returned as it is if asked for (at most
  :data:`MAX_PENDING` wait; past that, the evicting request packs). Optionally backed
  by the on-disk content-addressed store of :mod:`toolc.cache` (``disk=True``), whose
  entries are artifact files, checked the same way.
* **Parsed tools-list entries**, by their JSON text: a tool seen before is not checked again
  (:func:`toolc.tools.parse_tools`; about 0.3 ms a tool, mostly its schema's
  meta-validation).
* **Per-tool argument parts**: one tool's schema prepared and compiled to its argument
  ``Expr``, with its notices and dropped keywords, keyed by the tool's canonical JSON and the
  schema options. A new combination of known tools skips the schema compile of every tool
  it has already seen (in any order or position: the parts are stored without their place in
  the list, and located again per compile). In memory only, bounded by an entry count.

Beside these, every compile (cached or not) reuses what never depends on the tools: the
free-text automaton of the format (``toolc.formats.base.no_reasoning_head``) and its
vocabulary walk (:mod:`toolc.assemble`). The rest (the DFA, the walk of the call part, the
encoding) is made per tool set; ``docs/performance.md`` says what that costs and what a
per-tool share of those stages would need.

Thread-safe: one lock around the maps; a compile itself runs outside it. A forked child
starts with a fresh lock and no packing thread (:func:`os.register_at_fork`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import weakref
import zlib
from collections import OrderedDict

import msgpack

from . import __version__

#: default bounds: 256 MiB of artifacts, 4,096 tools' argument parts
DEFAULT_MAX_BYTES = 256 << 20
DEFAULT_MAX_TOOLS = 4096
#: evicted artifacts that may wait, loaded, for the background packer; the request that would
#: push one more packs it itself, so memory stays bounded whatever the packer's pace
MAX_PENDING = 4

#: caches that may hold a packing thread, reset in a forked child (the thread does not follow)
_CACHES: weakref.WeakSet = weakref.WeakSet()


def _sha(value) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ToolCache:
    """Compiled artifacts and per-tool argument parts, reused across compiles.

    ``max_bytes`` bounds the artifacts held loaded, ``max_packed_bytes`` those held packed,
    ``max_tools`` the per-tool parts (and, apart, the parsed tools-list entries and the
    stitched DFAs' blocks and framings, :mod:`toolc.stitch`, which ``max_bytes // 2`` also
    bounds);
    ``disk=True`` also reads and writes artifacts in the on-disk cache (``$TOOLC_CACHE_DIR``,
    see :mod:`toolc.cache`; off when that is ``off``). ``background=False`` packs an evicted
    artifact in the request that evicts it instead of on a background thread. ``stats()``
    counts hits and misses; ``flush()`` finishes the packing under way.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, max_tools: int = DEFAULT_MAX_TOOLS,
                 disk: bool = False, max_packed_bytes: int = DEFAULT_MAX_BYTES,
                 background: bool = True):
        if min(max_bytes, max_tools, max_packed_bytes) < 0:
            raise ValueError(f"Invalid ToolCache bounds: expected sizes >= 0, got max_bytes="
                             f"{max_bytes}, max_tools={max_tools}, "
                             f"max_packed_bytes={max_packed_bytes}")
        self.max_bytes, self.max_tools, self.disk = max_bytes, max_tools, disk
        self.max_packed_bytes, self.background = max_packed_bytes, background
        self._arts: OrderedDict[str, tuple] = OrderedDict()     # key -> (artifact, nbytes)
        self._packed: OrderedDict[str, bytes] = OrderedDict()   # key -> pack() bytes
        self._pending: OrderedDict[str, object] = OrderedDict()  # evicted, not yet packed
        self._claimed: set[str] = set()                          # pending keys being packed
        self._packer: threading.Thread | None = None
        self._tools: OrderedDict[str, object] = OrderedDict()
        self._blocks: OrderedDict[tuple, tuple] = OrderedDict()    # key -> (part, nbytes)
        self._block_bytes = 0
        self._inputs: OrderedDict[str, str] = OrderedDict()     # input key -> artifact key
        self._parsed: OrderedDict[str, tuple] = OrderedDict()   # entry JSON -> (tool, value)
        self._bytes = self._packed_bytes = 0
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        _CACHES.add(self)
        self._stats = dict.fromkeys(("artifact_hits", "artifact_misses", "packed_hits",
                                     "disk_hits", "tool_hits", "tool_misses",
                                     "block_hits", "block_misses", "framing_hits",
                                     "framing_misses"), 0)

    # -- keys --------------------------------------------------------------------------------

    @staticmethod
    def artifact_key(header: dict, tools, counted) -> str:
        """The key of a tool set's artifact: a sha256 of its header's pre-build fields
        (:func:`toolc.compiler.make_header` without the built automaton), of where each
        tool sat in the input (the header's notices name those pointers) and of whether
        lengths are counted (``toolc.schema.strings.expanded_lengths`` is the other way)."""
        return _sha(["artifact", header, [[t.pointer, t.schema_key] for t in tools], counted])

    @staticmethod
    def input_key(tools, options, vocab, counted) -> str | None:
        """A cheaper key for a repeated request: the tools value as given (before it is read
        and checked), every option and the vocabulary's identity; None where that cannot
        stand for the artifact (a tools file, whose contents may change; a custom format)."""
        if isinstance(tools, (str, os.PathLike)) or not isinstance(options.format, str):
            return None
        try:
            text = json.dumps(tools, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError):
            return None
        return _sha(["input", __version__, text, repr(options), vocab.name, vocab.fingerprint,
                     vocab.vocab_size, vocab.logits_size, list(vocab.eos_ids), counted])

    def key_for_input(self, input_key: str | None) -> str | None:
        if input_key is None:
            return None
        with self._lock:
            return self._inputs.get(input_key)

    def note_input(self, input_key: str | None, key: str) -> None:
        if input_key is None:
            return
        with self._lock:
            self._inputs[input_key] = key
            self._inputs.move_to_end(input_key)
            while len(self._inputs) > 4 * self.max_tools + 64:
                self._inputs.popitem(last=False)

    @staticmethod
    def tool_key(tool, schema_options, counted) -> str:
        """The key of one tool's argument part: its schema and the schema options (the name,
        description and place in the list do not change the argument automaton)."""
        return _sha(["tool", __version__, tool.schema_key, tool.parameters,
                     repr(schema_options), counted])

    # -- artifacts ---------------------------------------------------------------------------

    def get_artifact(self, key: str):
        with self._lock:
            hit = self._arts.get(key)
            if hit is not None:
                self._arts.move_to_end(key)
                self._stats["artifact_hits"] += 1
                return hit[0]
            waiting = self._pending.pop(key, None)     # evicted, still loaded: taken back
            if waiting is not None:
                self._stats["artifact_hits"] += 1
            data = None if waiting is not None else self._packed.pop(key, None)
            if data is not None:
                self._packed_bytes -= len(data)
        if waiting is not None:
            self._put_memory(key, waiting)
            return waiting
        art, kind = None, "packed_hits"
        if data is not None:
            art = unpack(data, "cached artifact")
        if art is None and self.disk:
            art, kind = self._read_disk(key), "disk_hits"
        with self._lock:
            if art is None:
                self._stats["artifact_misses"] += 1
                return None
            self._stats[kind] += 1
        self._put_memory(key, art)
        return art

    def put_artifact(self, key: str, art) -> None:
        self._put_memory(key, art)
        if self.disk:
            self._write_disk(key, art)

    def _put_memory(self, key: str, art) -> None:
        """Hold ``art`` loaded; what that pushes out of ``max_bytes`` is kept packed
        (:func:`pack`, some 100 times smaller than a loaded Qwen3 artifact) within
        ``max_packed_bytes``, and loaded again (checked as a file's sections are) when asked
        for."""
        size = sum(len(v) for v in art.sections.values()) + art.mask_rows.nbytes
        out, start = [], None
        with self._lock:
            old = self._arts.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._pending.pop(key, None)
            self._arts[key] = (art, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                k, (a, n) = self._arts.popitem(last=False)
                self._bytes -= n
                if self.background and len(self._pending) < MAX_PENDING:
                    self._pending[k] = a
                else:
                    out.append((k, a))
            if self._pending and self._packer is None:
                start = self._packer = threading.Thread(target=self._drain, daemon=True,
                                                        name="toolc-toolcache-pack")
        if start is not None:
            start.start()
        for k, a in out:
            self._put_packed(k, pack(a))

    # -- packing -----------------------------------------------------------------------------

    def _drain(self) -> None:
        """The packing thread: packs what waits, then ends (the next eviction starts another)."""
        while self._pack_one(wait=False, packer=True):
            pass

    def _pack_one(self, wait: bool, packer: bool = False) -> bool:
        """Pack the oldest waiting artifact that no other thread is packing; False when none
        is left (with ``wait``, once the ones other threads are packing are done too)."""
        with self._cond:
            while True:
                key = next((k for k in self._pending if k not in self._claimed), None)
                if key is not None:
                    break
                if not (wait and self._pending):
                    if packer:
                        self._packer = None
                    return False
                self._cond.wait()
            art = self._pending[key]
            self._claimed.add(key)
        data = None
        try:
            data = pack(art)
        finally:
            with self._cond:
                self._claimed.discard(key)
                if self._pending.get(key) is art:   # not taken back while it was packed
                    del self._pending[key]
                    if data is not None:
                        self._put_packed_locked(key, data)
                self._cond.notify_all()
        return True

    def flush(self) -> None:
        """Finish packing what has left memory (in this thread, beside the packing thread)."""
        while self._pack_one(wait=True):
            pass

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._packer = None
        self._claimed.clear()

    def _put_packed(self, key: str, data: bytes) -> None:
        with self._lock:
            self._put_packed_locked(key, data)

    def _put_packed_locked(self, key: str, data: bytes) -> None:
        if key in self._arts or len(data) > self.max_packed_bytes:
            return
        old = self._packed.pop(key, None)
        if old is not None:
            self._packed_bytes -= len(old)
        self._packed[key] = data
        self._packed_bytes += len(data)
        while self._packed_bytes > self.max_packed_bytes:
            _, d = self._packed.popitem(last=False)
            self._packed_bytes -= len(d)

    def _read_disk(self, key: str):
        from . import cache
        path = cache.entry_path(key, "artifact")
        if path is None or not os.path.isfile(path):
            return None
        try:
            with open(path, "rb") as fh:
                return _from_bytes(fh.read(), path)
        except OSError:
            return None

    def _write_disk(self, key: str, art) -> None:
        from . import cache
        from .runtime.fileformat import write_atomic
        path = cache.entry_path(key, "artifact")
        if path is None:
            return
        try:
            write_atomic(path, art.to_bytes())
        except OSError:
            pass

    # -- per-tool parts ----------------------------------------------------------------------

    def get_tool(self, key: str):
        with self._lock:
            part = self._tools.get(key)
            if part is None:
                self._stats["tool_misses"] += 1
                return None
            self._tools.move_to_end(key)
            self._stats["tool_hits"] += 1
            return part

    def put_tool(self, key: str, part) -> None:
        with self._lock:
            self._tools[key] = part
            self._tools.move_to_end(key)
            while len(self._tools) > self.max_tools:
                self._tools.popitem(last=False)

    def get_block(self, key: tuple):
        """A part of a stitched DFA (:mod:`toolc.stitch`): a tool's block (``key[0]`` is
        "block"), by the format and the argument Expr's value, or a set's framing
        ("framing"), by what shapes it; None when not held."""
        with self._lock:
            held = self._blocks.get(key)
            self._stats[key[0] + ("_misses" if held is None else "_hits")] += 1
            if held is None:
                return None
            self._blocks.move_to_end(key)
            return held[0]

    def put_block(self, key: tuple, block, nbytes: int) -> None:
        """Keep a part of a stitched DFA of about ``nbytes`` (the parts are bounded by
        ``max_tools`` in number and by ``max_bytes // 2`` in size, the least recently used
        going first)."""
        with self._lock:
            old = self._blocks.pop(key, None)
            if old is not None:
                self._block_bytes -= old[1]
            self._blocks[key] = (block, nbytes)
            self._block_bytes += nbytes
            while len(self._blocks) > self.max_tools or \
                    (self._block_bytes > self.max_bytes // 2 and len(self._blocks) > 1):
                self._block_bytes -= self._blocks.popitem(last=False)[1][1]

    # -- parsed entries ----------------------------------------------------------------------

    def get_parsed(self, text: str):
        """A tools-list entry parsed before, by its JSON text (see
        :func:`toolc.tools.parse_tools`): (tool, value), or None."""
        with self._lock:
            hit = self._parsed.get(text)
            if hit is not None:
                self._parsed.move_to_end(text)
            return hit

    def put_parsed(self, text: str, parsed) -> None:
        with self._lock:
            self._parsed[text] = parsed
            self._parsed.move_to_end(text)
            while len(self._parsed) > self.max_tools:
                self._parsed.popitem(last=False)

    # -- figures -----------------------------------------------------------------------------

    def stats(self) -> dict:
        """Hits and misses so far, and what is held (once the packing under way is done)."""
        self.flush()
        with self._lock:
            return {**self._stats, "artifacts": len(self._arts), "artifact_bytes": self._bytes,
                    "packed": len(self._packed), "packed_bytes": self._packed_bytes,
                    "tools": len(self._tools), "parsed": len(self._parsed),
                    "blocks": len(self._blocks), "block_bytes": self._block_bytes}

    def clear(self) -> None:
        with self._lock:
            self._arts.clear()
            self._packed.clear()
            self._pending.clear()
            self._tools.clear()
            self._blocks.clear()
            self._block_bytes = 0
            self._inputs.clear()
            self._parsed.clear()
            self._bytes = self._packed_bytes = 0


def pack(art) -> bytes:
    """An artifact held packed in memory: its header and sections, deflated at zlib level 1.
    Not the file's bytes (``to_bytes`` deflates at level 6 and hashes the body): an artifact
    leaves memory in the request that pushes it out, and on a 12-tool Qwen3 set level 6 took
    22 ms of that request against 4 ms here, for 112 KB against 96 KB (+16%)."""
    raw = msgpack.packb([art.header, art.sections], use_bin_type=True)
    return zlib.compress(raw, 1)


def unpack(data: bytes, source: str):
    """An artifact from :func:`pack`'s bytes, its sections checked as a file's are
    (:meth:`~toolc.runtime.Artifact.from_parts`); None when they are damaged."""
    from .runtime import Artifact
    try:
        header, sections = msgpack.unpackb(zlib.decompress(data), raw=False)
        return Artifact.from_parts(header, sections, source=source)
    except Exception:   # a damaged entry is a miss, never an error
        return None


def _from_bytes(data: bytes, source: str):
    """An artifact from stored bytes, checked as a file is; None when they are damaged."""
    from .runtime import Artifact
    try:
        return Artifact.from_bytes(data, source=source)
    except Exception:   # a damaged entry is a miss, never an error
        return None


def _reset_after_fork() -> None:
    for cache in list(_CACHES):
        cache._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
