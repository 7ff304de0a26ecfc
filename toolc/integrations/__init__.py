"""Engine adapters, one module per engine, each imported only when used.

* :mod:`toolc.integrations.torch`: ``apply_token_bitmask_inplace`` for CPU and CUDA tensors.
* :mod:`toolc.integrations.transformers`: a Hugging Face ``LogitsProcessor``.
* :mod:`toolc.integrations.vllm`: a logits processor for vLLM's v1 plugin interface.
* :mod:`toolc.integrations.llama_cpp`: a llama-cpp-python ``LogitsProcessor``.

This package imports nothing itself; ``import toolc`` never loads an engine.
The shared row bookkeeping (:mod:`toolc.integrations.rows`) needs numpy only.
"""
