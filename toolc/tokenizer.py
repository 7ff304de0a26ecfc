"""Tokenizers: an alias, a ``tokenizer.json``, a directory, or a hub id, turned into a Vocabulary.

The :class:`Vocabulary` is what the compiler needs of a tokenizer: the exact bytes each token
stands for, which ids are added tokens (taken atomically, never matched by their spelling), the
end-of-sequence ids, the model's logits size and a fingerprint. It is built once per model.

This module reads ``tokenizer.json`` files and resolves aliases and paths; the other file
kinds have their own readers: tekken files (:mod:`toolc.tekken`), tiktoken rank files
(:mod:`toolc.rankfile`) and SentencePiece models (:mod:`toolc.sentencepiece`). The Llama
tokenizers are fetched, not shipped (:mod:`toolc.fetch`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from . import cache as vcache
from .errors import TokenizerError
from .options import DEFAULT_TOKENIZER
from .tekken import (TEKKEN_BUILTIN as _TEKKEN_BUILTIN, is_tekken_file,  # noqa: F401
                     is_tekken_text, load_builtin_tekken, vocabulary_from_tekken)
from .runtime.fingerprint import (BYTE_DECODER, fingerprint, parse_spec, piece_mode,  # noqa: F401
                          tokens_from_spec)

_DATA = "toolc.data"

# Built-in aliases: files shipped inside the package, plus facts the files do not hold.
# Qwen3: 151,936 logits (the models' config.json `vocab_size`); generation stops on
# <|im_end|> and <|endoftext|> (the models' generation_config.json `eos_token_id`).
_BUILTIN = {
    "qwen3": {
        "folder": "qwen3",
        "logits_size": 151936,
        "eos_tokens": ("<|im_end|>", "<|endoftext|>"),
    },
}
# DeepSeek V3.x/V4: 129,280 logits (config.json `vocab_size`), EOS <｜end▁of▁sentence｜>.
_BUILTIN["deepseek"] = {"folder": "deepseek", "logits_size": 129280,
                        "eos_tokens": ("<｜end▁of▁sentence｜>",)}
_ALIASES = {"qwen": "qwen3", "qwen3": "qwen3", "deepseek": "deepseek"}
_ALIASES.update({k: k for k in _TEKKEN_BUILTIN})
# tiktoken rank files (toolc/rankfile.py): shipped ("folder", "file") or fetched (toolc/fetch.py)
_RANK_BUILTIN = {"gpt-oss": ("o200k_harmony", ("gpt_oss", "o200k_base.tiktoken.gz")),
                 "qwen3.6": ("qwen3.6", ("qwen3_6", "qwen3_6.tiktoken.gz")),
                 "llama3": ("llama3", None), "llama4": ("llama4", None)}
# SentencePiece models (toolc/sentencepiece.py): Mistral 7B v0.3 / Mixtral 8x22B, 32,768 ids
_SPM_BUILTIN = {"mistral-v3": ("mistral_v3", "mistral_instruct_tokenizer_240323.model.v3.gz")}
_RANK_ALIASES = {"gpt-oss": "gpt-oss", "o200k_harmony": "gpt-oss", "harmony": "gpt-oss",
                 "qwen3.6": "qwen3.6", "qwen3.5": "qwen3.6", "llama3": "llama3",
                 "llama4": "llama4"}

# Names a tokenizer config commonly gives its end-of-sequence tokens, tried when none is stated.
_EOS_GUESSES = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>", "</s>", "<eos>",
                "<|end_of_text|>")


@dataclass(frozen=True)
class Vocabulary:
    """The compiler's view of a tokenizer. Built once per model, shared by every compile.

    ``token_bytes[i]`` is the exact byte string token ``i`` decodes to; for an added token it is
    its spelling, but an added token is never matched by that spelling: ids in ``added_ids`` are
    atomic symbols, allowed only where the grammar places them. Ids from ``vocab_size`` up to
    ``logits_size`` exist only in the model's output layer and are never allowed.
    """

    name: str
    token_bytes: tuple[bytes, ...]
    added: dict[str, int]                 # added-token spelling -> id
    special_ids: frozenset[int]           # added tokens flagged special by the tokenizer
    eos_ids: tuple[int, ...]
    logits_size: int
    chat_template: str | None = field(repr=False, compare=False, default=None)
    # the tokenizer.json text, or a function that reads it (only encode() needs it)
    source: object = field(repr=False, compare=False, default="")
    # a function returning ``text -> ids``, for tokenizers that are not tokenizer.json files
    encoder: object = field(repr=False, compare=False, default=None)
    kind: str = field(repr=False, compare=False, default="")    # see tokenizer_kind()
    _fingerprint: list = field(default_factory=list, repr=False, compare=False)
    _encoder: list = field(default_factory=list, repr=False, compare=False)
    _arrays: list = field(default_factory=list, repr=False, compare=False)
    _added_ids: list = field(default_factory=list, repr=False, compare=False)

    def ordinary_bytes(self):
        """(ids, lengths, flat bytes) of the ordinary tokens: not added, not empty. Cached."""
        if not self._arrays:
            import numpy as np
            lens = np.fromiter(map(len, self.token_bytes), dtype=np.int64,
                               count=len(self.token_bytes))
            flat = np.frombuffer(b"".join(self.token_bytes), dtype=np.uint8)
            keep = lens > 0
            added = list(self.added.values())
            keep[added] = False
            ids = np.flatnonzero(keep)
            sel = np.repeat(keep, lens)
            self._arrays.append((ids, lens[ids], flat[sel]))
        return self._arrays[0]

    @property
    def tokenizer_json(self) -> str:
        return self.source() if callable(self.source) else self.source

    def with_changes(self, **changes) -> "Vocabulary":
        fields = dict(name=self.name, token_bytes=self.token_bytes, added=self.added,
                      special_ids=self.special_ids, eos_ids=self.eos_ids,
                      logits_size=self.logits_size, chat_template=self.chat_template,
                      source=self.source, encoder=self.encoder, kind=self.kind)
        fields.update(changes)
        return Vocabulary(**fields)

    @property
    def vocab_size(self) -> int:
        return len(self.token_bytes)

    @property
    def added_ids(self) -> frozenset[int]:
        if not self._added_ids:
            self._added_ids.append(frozenset(self.added.values()))
        return self._added_ids[0]

    @property
    def fingerprint(self) -> str:
        """sha256 over every token's bytes, the added tokens and the EOS ids (see
        :mod:`toolc.runtime.fingerprint`)."""
        if not self._fingerprint:
            self._fingerprint.append(fingerprint(self.token_bytes, self.added, self.eos_ids))
        return self._fingerprint[0]

    def token_id(self, added_token: str) -> int | None:
        return self.added.get(added_token)

    def encode(self, text: str) -> list[int]:
        """Tokenize ``text`` as the model's tokenizer does (added tokens included)."""
        if not self._encoder and self.encoder is not None:
            self._encoder.append(self.encoder())
        if self._encoder and callable(self._encoder[0]):
            return list(self._encoder[0](text))
        if not self._encoder:
            try:
                from tokenizers import Tokenizer
            except ImportError as e:  # pragma: no cover - a dependency of the compiler
                raise TokenizerError("encoding needs the 'tokenizers' package") from e
            self._encoder.append(Tokenizer.from_str(self.tokenizer_json))
        return self._encoder[0].encode(text, add_special_tokens=False).ids

    def decode_bytes(self, ids) -> bytes:
        return b"".join(self.token_bytes[i] for i in ids)


def vocabulary_from_json(text: str, *, name: str, config: dict | None = None,
                         logits_size: int | None = None,
                         eos_tokens: tuple[str, ...] | None = None,
                         source: str = "") -> Vocabulary:
    """Build a :class:`Vocabulary` from the text of a ``tokenizer.json``."""
    where = source or name
    token_bytes, added, special = tokens_from_spec(parse_spec(text, where), where)
    size = len(token_bytes)

    config = config or {}
    if eos_tokens is None:
        eos_tokens = _eos_from_config(config, added)
    eos_ids = []
    for t in eos_tokens:
        if t not in added:
            raise TokenizerError(f"{source or name}: end-of-sequence token {t!r} is not an "
                                 "added token of this tokenizer")
        eos_ids.append(added[t])
    if not eos_ids:
        raise TokenizerError(f"{source or name}: cannot tell the end-of-sequence token; add "
                             "'eos_token' to tokenizer_config.json beside tokenizer.json")
    if logits_size is None:
        logits_size = size
    if logits_size < size:
        raise TokenizerError(f"{source or name}: logits size {logits_size} is smaller than the "
                             f"vocabulary ({size} entries)")
    return Vocabulary(name=name, token_bytes=tuple(token_bytes), added=added,
                      special_ids=frozenset(special), eos_ids=tuple(eos_ids),
                      logits_size=int(logits_size), source=text,
                      chat_template=config.get("chat_template"))


def _eos_from_config(config: dict, added: dict[str, int]) -> tuple[str, ...]:
    eos = config.get("eos_token")
    if isinstance(eos, dict):
        eos = eos.get("content")
    found = [eos] if isinstance(eos, str) else []
    if not found:
        found = [t for t in _EOS_GUESSES if t in added][:1]
    return tuple(found)


def _read_folder(folder: Path, name: str, logits_size: int | None) -> Vocabulary:
    path = folder / "tokenizer.json"
    if not path.is_file():
        # a checkpoint's own folder (Llama's original/, Mistral's): its tokenizer.model
        other = sorted(folder.glob("tokenizer.model*")) + sorted(folder.glob("*.tiktoken"))
        vocab = _other_file(other[0], logits_size) if other else None
        if vocab is not None:
            return vocab.with_changes(name=name)
        raise TokenizerError(f"{folder}: no tokenizer.json (nor tokenizer.model or *.tiktoken) "
                             "in this directory")
    config = {}
    cfg = folder / "tokenizer_config.json"
    if cfg.is_file():
        config = json.loads(cfg.read_text(encoding="utf-8"))
    if logits_size is None:
        model_cfg = folder / "config.json"
        if model_cfg.is_file():
            logits_size = json.loads(model_cfg.read_text(encoding="utf-8")).get("vocab_size")
    text = path.read_text(encoding="utf-8")
    vocab = vocabulary_from_json(text, name=name, config=config, logits_size=logits_size,
                                 source=str(path))
    gen = folder / "generation_config.json"
    if gen.is_file():
        ids = json.loads(gen.read_text(encoding="utf-8")).get("eos_token_id")
        ids = [ids] if isinstance(ids, int) else list(ids or [])
        extra = tuple(i for i in ids if i not in vocab.eos_ids and i < vocab.vocab_size)
        if extra:
            vocab = vocab.with_changes(eos_ids=vocab.eos_ids + extra)
    return vocab


def builtin_names() -> list[str]:
    return sorted({**_ALIASES, **_RANK_ALIASES, **_SPM_BUILTIN})


def load_builtin_sentencepiece(alias: str, logits_size: int | None = None) -> Vocabulary:
    """A built-in SentencePiece model (32k pieces: read directly, ~0.2 s, no cache)."""
    from .sentencepiece import vocabulary_from_sentencepiece
    folder, name = _SPM_BUILTIN[alias]
    packed = resources.files(_DATA).joinpath(folder).joinpath(name).read_bytes()
    return vocabulary_from_sentencepiece(gzip.decompress(packed), name=alias,
                                         logits_size=logits_size,
                                         source=f"built-in tokenizer {alias!r}")


def load_builtin_ranks(alias: str) -> Vocabulary:
    """A built-in rank-file tokenizer: shipped in toolc/data, or fetched once into the cache
    (``python -m toolc.fetch``; see toolc/fetch.py)."""
    from .rankfile import FAMILIES, vocabulary_from_ranks, with_encoder
    family, shipped = _RANK_BUILTIN[alias]
    if shipped is None:
        from .fetch import fetched_file
        packed = gzip.compress(fetched_file(alias), compresslevel=1, mtime=0)
    else:
        packed = resources.files(_DATA).joinpath(shipped[0]).joinpath(shipped[1]).read_bytes()

    def build(data: str) -> Vocabulary:
        return vocabulary_from_ranks(data.encode("utf-8"), name=alias, family=family,
                                     source=f"built-in tokenizer {alias!r}")

    fam = FAMILIES[family]
    facts = repr((sorted(fam.specials().items()), fam.eos, fam.logits_size))
    return _through_cache(alias, packed, build, facts=facts,
                          finish=lambda v: with_encoder(v, fam.pat_str, 0, fam.ranks))


def load_builtin(canonical: str) -> Vocabulary:
    """A built-in tokenizer, through the on-disk vocabulary cache when it holds it."""
    info = _BUILTIN[canonical]
    base = resources.files(_DATA).joinpath(info["folder"])
    packed = base.joinpath("tokenizer.json.gz").read_bytes()

    def build(text: str) -> Vocabulary:
        config = json.loads(base.joinpath("tokenizer_config.json").read_text(encoding="utf-8"))
        return vocabulary_from_json(text, name=canonical, config=config,
                                    logits_size=info["logits_size"],
                                    eos_tokens=info["eos_tokens"],
                                    source=f"built-in tokenizer {canonical!r}")

    return _through_cache(canonical, packed, build)


def _through_cache(name: str, packed: bytes, build, finish=None, facts: str = "") -> Vocabulary:
    """The vocabulary of a gzipped built-in tokenizer file: read back from the on-disk cache
    (keyed by the file's sha256 and the ``facts`` toolc adds to it) or built by
    ``build(text)`` and stored; ``finish`` completes either (an encoder). The tokenizer text
    is decompressed again only if something asks for it (``encode``)."""

    def read_text() -> str:
        return gzip.decompress(packed).decode("utf-8")

    def done(vocab: Vocabulary, fp: str) -> Vocabulary:
        vocab = finish(vocab) if finish else vocab
        if not vocab._fingerprint:
            vocab._fingerprint.append(fp)
        return vocab

    # keyed by the file, and by the facts toolc adds to it (a rank file's special tokens)
    digest = hashlib.sha256(packed + facts.encode()).hexdigest()
    cached = vcache.read(digest)
    if cached is not None:
        vocab = Vocabulary(name=name, token_bytes=tuple(cached["token_bytes"]),
                           added=dict(cached["added"]), special_ids=frozenset(cached["special"]),
                           eos_ids=tuple(cached["eos"]), logits_size=int(cached["logits_size"]),
                           chat_template=cached["chat_template"], source=read_text)
        if isinstance(cached.get("fingerprint"), str):
            # the entry is sha256-checked as a whole, so its fingerprint is as good as its
            # tokens; recomputing it costs ~25 ms for Qwen3's 151,669 tokens
            vocab._fingerprint.append(cached["fingerprint"])
        else:   # an entry from before fingerprints were stored: complete it
            vcache.write(digest, {**cached, "fingerprint": vocab.fingerprint})
        return done(vocab, vocab.fingerprint)
    vocab = build(read_text())
    vcache.write(digest, {"token_bytes": list(vocab.token_bytes), "added": vocab.added,
                          "special": sorted(vocab.special_ids), "eos": list(vocab.eos_ids),
                          "logits_size": vocab.logits_size,
                          "chat_template": vocab.chat_template,
                          "fingerprint": vocab.fingerprint})
    fp = vocab.fingerprint
    return done(vocab.with_changes(source=read_text), fp)     # only the source changes


_CACHE: dict[tuple, Vocabulary] = {}


def load_vocabulary(spec: str | os.PathLike | Vocabulary = DEFAULT_TOKENIZER, *,
                    logits_size: int | None = None) -> Vocabulary:
    """Resolve ``spec`` to a :class:`Vocabulary`.

    ``spec`` is a built-in alias (``qwen``, ``qwen3``, ``qwen3.6``, ``deepseek``, ``gpt-oss``,
    ``llama3``, ``llama4``, ``mistral``, ``mistral-v3``; see :func:`builtin_names`), a path to a
    ``tokenizer.json``, a tekken file (``tekken*.json``), a tiktoken rank file (``*.tiktoken``
    or Llama 3/4's ``tokenizer.model``), a SentencePiece model (``*.model*``), a
    directory holding one (with ``tokenizer_config.json``, ``config.json`` and
    ``generation_config.json`` read when present), or a hub id (needs network access).
    A bare alias names the built-in tokenizer even when the working directory holds a file or
    folder of that name (write ``./qwen`` or pass a ``Path`` for that). Results are cached per
    process.
    """
    if isinstance(spec, Vocabulary):
        return spec
    s = str(spec)
    alias = isinstance(spec, str)      # a Path is always a path
    key = (s, alias, logits_size)
    if key in _CACHE:
        return _CACHE[key]
    if alias and s.lower() in _SPM_BUILTIN:
        vocab = load_builtin_sentencepiece(s.lower(), logits_size)
    elif alias and s.lower() in _RANK_ALIASES:
        vocab = load_builtin_ranks(_RANK_ALIASES[s.lower()])
        if logits_size is not None:
            vocab = vocab.with_changes(logits_size=logits_size)
    elif alias and s.lower() in _TEKKEN_BUILTIN:
        vocab = load_builtin_tekken(s.lower(), logits_size)
    elif alias and s.lower() in _ALIASES:
        vocab = load_builtin(_ALIASES[s.lower()])
        if logits_size is not None:
            vocab = vocab.with_changes(logits_size=logits_size)
    elif os.path.isdir(s):
        vocab = _read_folder(Path(s), name=os.path.basename(os.path.normpath(s)),
                             logits_size=logits_size)
    elif os.path.isfile(s):
        p = Path(s)
        other = _other_file(p, logits_size)
        if other is not None:
            vocab = other
        elif is_tekken_file(p):
            vocab = vocabulary_from_tekken(p.read_text(encoding="utf-8"), name=p.stem,
                                           logits_size=logits_size, source=str(p))
        elif p.name == "tokenizer.json":
            vocab = _read_folder(p.parent, name=p.parent.name or p.stem, logits_size=logits_size)
        else:
            vocab = vocabulary_from_json(p.read_text(encoding="utf-8"), name=p.stem,
                                         logits_size=logits_size, source=str(p))
    else:
        vocab = _from_hub(s, logits_size)
    _CACHE[key] = vocab
    return vocab


def _other_file(p: Path, logits_size: int | None) -> Vocabulary | None:
    """A tiktoken rank file (``*.tiktoken``, Llama's ``tokenizer.model``) or a SentencePiece
    model (``*.model*``), read by its own module; None for any other file."""
    with open(p, "rb") as fh:
        head = fh.read(256)
    from .rankfile import is_rank_text
    if is_rank_text(head):
        from .rankfile import vocabulary_from_ranks
        return vocabulary_from_ranks(p.read_bytes(), name=p.stem, logits_size=logits_size,
                                     source=str(p))
    if ".model" in p.suffixes and p.suffix != ".json":     # tokenizer.model, *.model.v3
        from .sentencepiece import vocabulary_from_sentencepiece
        return vocabulary_from_sentencepiece(p.read_bytes(), name=p.name.split(".")[0],
                                             logits_size=logits_size, source=str(p))
    return None


def _from_hub(repo_id: str, logits_size: int | None) -> Vocabulary:
    looks_like_path = repo_id.startswith((".", "/", "~")) or repo_id.endswith(".json")
    alternatives = (f"use a built-in alias ({', '.join(builtin_names())}), a path to a "
                    "tokenizer.json, or a directory holding one")
    if looks_like_path:
        raise TokenizerError(f"tokenizer {repo_id!r}: no such file or directory; {alternatives}")
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        # read at each call: the hub client reads it once, when it is first imported
        raise TokenizerError(f"tokenizer {repo_id!r}: not a built-in alias or a local path, and "
                             f"the hub is off (HF_HUB_OFFLINE is set); {alternatives}")
    try:
        from tokenizers import Tokenizer
        tok = Tokenizer.from_pretrained(repo_id)
    except Exception as e:  # the hub client raises many kinds; one clear line is the point
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise TokenizerError(f"tokenizer {repo_id!r}: not a built-in alias or a local path, and "
                             f"loading it from the hub failed ({first[:160]}); "
                             f"{alternatives}") from None
    return vocabulary_from_json(tok.to_str(), name=repo_id, logits_size=logits_size,
                                source=f"hub tokenizer {repo_id!r}")


def tokenizer_kind(vocab: Vocabulary) -> str:
    """``"tekken"``, ``"sentencepiece"`` (▁ pieces) or ``"bytelevel"``: how the tokenizer
    spells text, for formats whose framing differs between them (Mistral's space after
    ``[TOOL_CALLS]``)."""
    if vocab.kind:
        return vocab.kind
    src = vocab.tokenizer_json
    if not src:
        return "bytelevel"
    if is_tekken_text(src[:4096]):
        return "tekken"
    try:
        spec = json.loads(src)
    except ValueError:
        return "bytelevel"
    return piece_mode(spec) if isinstance(spec, dict) else "bytelevel"
