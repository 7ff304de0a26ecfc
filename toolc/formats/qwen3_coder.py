"""Qwen3-Coder's XML-style calls, as its chat template writes them:

    <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n...</function>\n</tool_call>

Parallel calls are joined by ``\n``; the tags are special symbols when the tokenizer has them.
The argument engine (raw strings, JSON for the rest, refused names) is
:mod:`toolc.formats.tagged`'s, with the bytes of ``STYLES["qwen3-coder"]``.
"""

from __future__ import annotations

from .tagged import Tagged
from .tagstyle import STYLES


class Qwen3Coder(Tagged):
    name = "qwen3-coder"
    style = STYLES["qwen3-coder"]
