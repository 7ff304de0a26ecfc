"""Mistral's tekken tokenizer files, read into a :class:`~toolc.tokenizer.Vocabulary`.

A tekken file is not a `tokenizers` file: {"config": {...}, "vocab": [{"rank", "token_bytes"
(base64)}, ...], "special_tokens": [...]?}. Ids 0..num_special-1 are the special tokens; the
ordinary vocabulary follows, rank r at id num_special + r. Files of version v7 and older carry
no special-token list: mistral-common then uses a fixed one, padded with <SPECIAL_i>.
Encoding text follows mistral-common: tiktoken over the file's ranks and ``pattern``.
"""

from __future__ import annotations

import gzip
import json
from importlib import resources
from pathlib import Path

from .errors import TokenizerError

# Mistral's tekken tokenizer (Mistral NeMo): the built-in alias `mistral`.
TEKKEN_BUILTIN = {"mistral": {"folder": "mistral", "file": "tekken_240911.json.gz"}}

# The fixed special-token list of tekken files without one (mistral-common 1.13.1).
_TEKKEN_DEFAULT_SPECIALS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)


def is_tekken_file(path: Path) -> bool:
    """A ``.json`` file whose first bytes show a tekken layout (a ``config`` object first)."""
    if path.suffix != ".json":
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return is_tekken_text(head.decode("utf-8", errors="ignore"))


def is_tekken_text(head: str) -> bool:
    return '"default_num_special_tokens"' in head[:4096] or \
        ('"config"' in head[:64] and '"num_vocab_tokens"' in head[:4096])


def vocabulary_from_tekken(text: str, *, name: str, logits_size: int | None = None,
                           source: str = ""):
    """Build a :class:`Vocabulary` from the text of a tekken tokenizer file.

    Special tokens are added tokens (atomic, never matched by their spelling); ``</s>`` is EOS.
    """
    import base64
    where = source or name
    try:
        spec = json.loads(text)
        config = spec["config"]
        n_special = int(config["default_num_special_tokens"])
        size = int(config["default_vocab_size"])
        ranks = spec["vocab"]
    except (ValueError, KeyError, TypeError) as e:
        raise TokenizerError(f"{where}: not a tekken tokenizer file ({e})") from None
    listed = spec.get("special_tokens")
    if listed:
        specials = {int(t["rank"]): t["token_str"] for t in listed}
    else:
        specials = dict(enumerate(_TEKKEN_DEFAULT_SPECIALS))
    if len(specials) > n_special or any(r >= n_special for r in specials):
        raise TokenizerError(f"{where}: more special tokens than 'default_num_special_tokens' "
                             f"({n_special})")
    inner = size - n_special
    if inner > len(ranks):
        raise TokenizerError(f"{where}: 'default_vocab_size' {size} needs {inner} ranks, the "
                             f"file has {len(ranks)}")
    token_bytes: list[bytes] = [b""] * size
    added: dict[str, int] = {}
    for r in range(n_special):
        spelling = specials.get(r, f"<SPECIAL_{r}>")
        token_bytes[r] = spelling.encode("utf-8")
        added[spelling] = r
    for entry in ranks:
        r = int(entry["rank"])
        if r < inner:
            token_bytes[n_special + r] = base64.b64decode(entry["token_bytes"])
    if "</s>" not in added:
        raise TokenizerError(f"{where}: no '</s>' special token to end generation")
    if logits_size is None:
        logits_size = size
    if logits_size < size:
        raise TokenizerError(f"{where}: logits size {logits_size} is smaller than the "
                             f"vocabulary ({size} entries)")
    return _tekken_encoding(_vocabulary_class()(
        name=name, token_bytes=tuple(token_bytes), added=added,
        special_ids=frozenset(added.values()), eos_ids=(added["</s>"],),
        logits_size=int(logits_size), source=text, kind="tekken"))


def _tekken_encoding(vocab):
    """``vocab`` (tekken) able to encode text, as mistral-common does: tiktoken over the
    file's ranks and ``pattern``; special tokens spelled in the text are encoded as
    themselves."""
    def make():
        from .rankfile import tiktoken_encoder
        config = json.loads(vocab.tokenizer_json)["config"]
        first, size = int(config["default_num_special_tokens"]), vocab.vocab_size
        tb = vocab.token_bytes
        ranks = {tb[i]: i for i in range(first, size) if tb[i]}
        return tiktoken_encoder(vocab.name, config["pattern"], ranks, dict(vocab.added))

    return vocab.with_changes(encoder=make, kind="tekken")


def load_builtin_tekken(alias: str, logits_size: int | None = None):
    """A built-in tekken tokenizer (alias ``mistral``), read from its compressed file."""
    from .tokenizer import _DATA, _through_cache
    info = TEKKEN_BUILTIN[alias]
    packed = resources.files(_DATA).joinpath(info["folder"]).joinpath(info["file"]).read_bytes()

    def build(text: str):
        return vocabulary_from_tekken(text, name=alias, logits_size=logits_size,
                                      source=f"built-in tokenizer {alias!r}")

    if logits_size is not None:     # checked against the file: build it
        return build(gzip.decompress(packed).decode("utf-8"))
    return _through_cache(alias, packed, build, finish=_tekken_encoding)


def _vocabulary_class():
    from .tokenizer import Vocabulary
    return Vocabulary
