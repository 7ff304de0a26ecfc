"""The tag-per-parameter formats as data: where each family puts its tags and newlines.

One :class:`TagStyle` per format. The framing (:mod:`toolc.formats.tagged`) and the parser
(:mod:`toolc.parse_tags`) both read these values, so they cannot disagree on a byte. Standard
library only.

A call block is ``block_open CALL (call_sep CALL)* block_close``; a call is
``call_open NAME name_end PARAM* call_close``; a parameter is
``param_open KEY key_end [ATTR] value_open VALUE value_close``. A value whose schema admits only
strings is written raw (no quotes, no escapes); every other value is JSON (``json.dumps``,
non-ASCII raw). ``attr`` names a per-value attribute written between the key and the value:
``string`` (DSML: ``string="true"`` before a raw string, ``"false"`` before JSON) or ``type``
(the JSON type of the value).

Bytes are quoted from docs/formats-2026 (the facts sheet) and, for Seed-OSS, its chat template.
"""

from __future__ import annotations

from dataclasses import dataclass

#: characters a tool name or a property key may not hold in these formats: each delimits a tag
#: or a quoted attribute, and a parser could not tell where the name ends
FORBIDDEN_IN_NAMES = '<>"'


@dataclass(frozen=True)
class TagStyle:
    name: str
    call_open: str
    name_end: str
    param_open: str
    key_end: str
    value_close: str
    call_close: str
    call_sep: str = ""
    block_open: str = ""
    block_close: str = ""
    value_open: str = ""
    attr: str | None = None          # None | "string" | "type"
    think: tuple[str, str] = ("<think>", "</think>")
    #: what a value never spells, when not the tags themselves (Kimi K3: its three markers,
    #: which begin every tag)
    avoid: tuple[str, ...] = ()
    #: the number of the first call, where ``{index}`` in ``name_end`` counts the calls
    index_base: int = 0
    #: values are JSON scalars or strings only (MiniMax-M3 writes objects and arrays as nested
    #: elements, which are not built: such a property is refused)
    scalars_only: bool = False

    def close_of(self, key: str) -> str:
        """``value_close`` for parameter ``key`` (``{key}``: a closing tag named after it)."""
        return self.value_close.replace("{key}", key)

    @property
    def counted(self) -> bool:
        return "{index}" in self.name_end

    def at(self, s: str, index: int) -> str:
        """``s`` with ``{index}`` standing for call ``index`` (0, 1, ...) of the block."""
        return s.replace("{index}", str(index + self.index_base))

    @property
    def trigger(self) -> str:
        """The first tag of a call block: free text never spells it."""
        return _tags(self.block_open or self.call_open)[0]

    def closers(self) -> tuple[str, ...]:
        """Tags a value never spells: the parser (and the vendors' parsers, which search for
        them) would end the value there."""
        if self.avoid:
            return self.avoid
        tags = (self.value_close, self.param_open, self.call_close, self.block_close)
        return tuple(dict.fromkeys(t for s in tags for t in _tags(s)))

    def attr_text(self, raw: bool, json_type: str | None = None) -> str:
        if self.attr == "string":
            return f' string="{"true" if raw else "false"}"'
        if self.attr == "type":
            return f' type="{json_type}"'
        return ""


def _tags(s: str) -> list[str]:
    """The tags in ``s``, whitespace stripped: '</function>\\n</tool_call>' is two tags, and so
    is '<tool_call><function='."""
    return [p.strip() for p in s.replace("><", ">\n<").split("\n") if p.strip()]


_DSML = "<｜DSML｜"
#: MiniMax-M3's namespace: every tag of its calls starts with it
MINIMAX_NS = "]<]minimax[>["
#: Kimi K3's atomic markers: every tag of its XTML is one of them, a word, and another
KIMI_K3_MARKERS = ("<|open|>", "<|close|>", "<|sep|>")

STYLES: dict[str, TagStyle] = {s.name: s for s in (
    # Qwen3-Coder / Qwen3.5 / Qwen3.6 (template): '<tool_call>\n<function=N>\n<parameter=K>\nV\n
    # </parameter>\n</function>\n</tool_call>', calls joined by '\n'
    TagStyle("qwen3-coder", call_open="<tool_call>\n<function=", name_end=">\n",
             param_open="<parameter=", key_end=">\n", value_close="\n</parameter>\n",
             call_close="</function>\n</tool_call>", call_sep="\n"),
    # MiMo-V2.6: the same tags without newlines, calls concatenated
    TagStyle("mimo", call_open="<tool_call><function=", name_end=">",
             param_open="<parameter=", key_end=">", value_close="</parameter>",
             call_close="</function></tool_call>"),
    # Seed-OSS (its chat template): '\n<seed:tool_call>\n<function=N>\n<parameter=K>V
    # </parameter>\n</function>\n</seed:tool_call>' per call
    TagStyle("seed-oss", call_open="<seed:tool_call>\n<function=", name_end=">\n",
             param_open="<parameter=", key_end=">", value_close="</parameter>\n",
             call_close="</function>\n</seed:tool_call>", call_sep="\n",
             think=("<seed:think>", "</seed:think>")),
    # GLM-4.5 / 4.6: '<tool_call>N\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>'
    TagStyle("glm-4.5", call_open="<tool_call>", name_end="\n", param_open="<arg_key>",
             key_end="</arg_key>\n", value_open="<arg_value>", value_close="</arg_value>\n",
             call_close="</tool_call>", call_sep="\n"),
    # GLM-4.7 / 5 / 5.3: the same tags, no newlines, calls concatenated
    TagStyle("glm-4.7", call_open="<tool_call>", name_end="", param_open="<arg_key>",
             key_end="</arg_key>", value_open="<arg_value>", value_close="</arg_value>",
             call_close="</tool_call>"),
    # MiniMax-M2.x: one <minimax:tool_call> block of invokes joined by '\n'
    TagStyle("minimax-m2", block_open="<minimax:tool_call>\n", call_open='<invoke name="',
             name_end='">\n', param_open='<parameter name="', key_end='">',
             value_close="</parameter>\n", call_close="</invoke>", call_sep="\n",
             block_close="\n</minimax:tool_call>"),
    # MiniMax-M3 (the facts sheet, from vLLM's docstring): each parameter an element named
    # after its key, every tag prefixed with the namespace; invokes end with '\n'
    TagStyle("minimax-m3", block_open=f"{MINIMAX_NS}<tool_call>\n",
             call_open=f'{MINIMAX_NS}<invoke name="', name_end='">', param_open=f"{MINIMAX_NS}<",
             key_end=">", value_close=f"{MINIMAX_NS}</{{key}}>",
             call_close=f"{MINIMAX_NS}</invoke>\n", block_close=f"{MINIMAX_NS}</tool_call>",
             think=("<mm:think>", "</mm:think>"), avoid=(MINIMAX_NS,), scalars_only=True),
    # DeepSeek V3.2 (the official encoder): DSML, a string="true|false" attribute per value
    TagStyle("deepseek-v3.2", block_open=f"{_DSML}function_calls>\n",
             call_open=f'{_DSML}invoke name="', name_end='">\n',
             param_open=f'{_DSML}parameter name="', key_end='"', value_open=">",
             value_close="</｜DSML｜parameter>\n", call_close="</｜DSML｜invoke>",
             call_sep="\n", block_close="\n</｜DSML｜function_calls>", attr="string"),
    # DeepSeek V4: V3.2 with 'tool_calls' for 'function_calls'
    TagStyle("deepseek-v4", block_open=f"{_DSML}tool_calls>\n",
             call_open=f'{_DSML}invoke name="', name_end='">\n',
             param_open=f'{_DSML}parameter name="', key_end='"', value_open=">",
             value_close="</｜DSML｜parameter>\n", call_close="</｜DSML｜invoke>",
             call_sep="\n", block_close="\n</｜DSML｜tool_calls>", attr="string"),
    # Kimi K3 (XTML; the facts sheet's example, from xgrammar's docstring): one argument tag
    # per parameter with a type="..." attribute, calls numbered from 1, concatenated; the
    # response text and the message end around the block are kimi_k3.py's
    TagStyle("kimi-k3", block_open="<|open|>tools<|sep|>", call_open='<|open|>call tool="',
             name_end='" index="{index}"<|sep|>', param_open='<|open|>argument key="',
             key_end='"', value_open="<|sep|>", value_close="<|close|>argument<|sep|>",
             call_close="<|close|>call<|sep|>", block_close="<|close|>tools<|sep|>",
             attr="type", think=("<|open|>think<|sep|>", "<|close|>think<|sep|>"),
             avoid=KIMI_K3_MARKERS, index_base=1),
)}
