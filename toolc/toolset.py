"""Per-request tool lists: :class:`ToolsetCompiler`, built once per model and format.

    from toolc.toolset import ToolsetCompiler
    toolsets = ToolsetCompiler("qwen", format="hermes")        # once, at server start
    art = toolsets.artifact_for(request["tools"])               # per request: compiled or fetched
    m = art.matcher()

Every compile goes through one :class:`~toolc.toolcache.ToolCache` (pass your own to bound it
or to share it); a request may override options (``artifact_for(tools, tool_choice=...)``).
The engine adapters take one: ``ToolcLogitsProcessor.from_tools``,
``ToolcLlamaLogitsProcessor.from_tools`` and, for vLLM, the ``toolc_tools`` request key with
``ToolcVllmLogitsProcessor.toolset`` set. This module needs the compiler (``toolc[compile]``).
"""

from __future__ import annotations

from .options import DEFAULT_TOKENIZER, CompileOptions
from .toolcache import ToolCache


class ToolsetCompiler:
    """A request's tools to their artifact, through a shared cache.

    ``tokenizer``: an alias, a tokenizer file or folder, or a ``Vocabulary`` (read once, here).
    ``options`` / keyword arguments: the compile options every request starts from.
    ``cache``: a :class:`ToolCache` (default: a new one with its default bounds).
    """

    def __init__(self, tokenizer=DEFAULT_TOKENIZER, *, cache: ToolCache | None = None,
                 options: CompileOptions | None = None, **kwargs):
        from .tokenizer import load_vocabulary
        self.vocab = load_vocabulary(tokenizer)
        self.options = CompileOptions.from_kwargs(options, **kwargs)
        self.cache = ToolCache() if cache is None else cache

    @property
    def fingerprint(self) -> str:
        return self.vocab.fingerprint

    def artifact_for(self, tools, **overrides):
        """The artifact of ``tools`` (an OpenAI tools list, function objects, or
        ``{"tools": [...]}``), compiled or fetched; ``overrides`` name option fields."""
        from .compiler import compile_tools
        opts = CompileOptions.from_kwargs(self.options, **overrides) if overrides \
            else self.options
        return compile_tools(tools, self.vocab, options=opts, cache=self.cache,
                             source="request tools")

    def matcher_for(self, tools, **overrides):
        """A fresh matcher at the start of ``tools``' artifact."""
        return self.artifact_for(tools, **overrides).matcher()
