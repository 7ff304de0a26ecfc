"""Which toolc formats are proved against which vendor's tool-call parser
(tests/test_vendor_parsers.py runs them; docs/formats.md reports them). Plain data, so the claims
in toolc/pairing.py can be checked against it without the vendors' packages."""

#: case -> (toolc format, the artifact's tokenizer, extra compile options). The tokenizer is a
#: built-in alias where a registry ships the family's own; None: Qwen3's with the family's
#: atomic markers added (tests/tag_helpers.py).
FORMS = {
    "hermes": ("hermes", "qwen", {}),
    "qwen3-coder": ("qwen3-coder", "qwen", {}),
    "mimo": ("mimo", None, {}),
    "seed-oss": ("seed-oss", None, {}),
    "glm-4.5": ("glm-4.5", None, {}),
    "glm-4.7": ("glm-4.7", None, {}),
    "minimax-m2": ("minimax-m2", None, {}),
    "deepseek-v3": ("deepseek-v3", "deepseek", {}),
    "deepseek-v3.1": ("deepseek-v3.1", "deepseek", {}),
    "deepseek-v3.2": ("deepseek-v3.2", "deepseek", {}),
    "deepseek-v4": ("deepseek-v4", "deepseek", {}),
    "kimi-k2": ("kimi-k2", None, {"max_calls": 3}),
    "granite": ("granite", None, {}),
    "gemma4": ("gemma4", None, {}),
    "llama3-json": ("llama3-json", "llama3", {}),
    "pythonic": ("pythonic", "llama4", {}),
    "mistral": ("mistral", "mistral", {}),
    "mistral/v11": ("mistral", "mistral+[ARGS]", {}),
    "mistral/v3": ("mistral", "mistral-v3", {}),
    "functools": ("functools", "qwen", {}),
    "harmony": ("harmony", "gpt-oss", {"reasoning": True}),
    "harmony/after-analysis": ("harmony", "gpt-oss", {"reasoning": True}),
    "kimi-k3": ("kimi-k3", None, {"max_calls": 3}),
    "kimi-k3/thinking": ("kimi-k3", None, {"max_calls": 3, "reasoning": "open"}),
    "cohere": ("cohere", None, {"max_calls": 3}),
    "cohere/thinking": ("cohere", None, {"max_calls": 3, "reasoning": True}),
    "minimax-m3": ("minimax-m3", None, {}),
    "kimi-k3/parallel": ("kimi-k3", None, {"max_calls": 3}),
    "cohere/parallel": ("cohere", None, {"max_calls": 3}),
}

def _k3_second_call(name: str, key: str) -> str:
    return ('<|open|>response<|sep|>On it: <|close|>response<|sep|><|open|>tools<|sep|>'
            f'<|open|>call tool="{name}" index="1"<|sep|><|open|>argument key="{key}" '
            'type="string"<|sep|>Paris "<b>" \\n<|close|>argument<|sep|><|close|>call<|sep|>'
            '<|open|>call tool="')


def _cohere_second_call(name: str, key: str) -> str:
    return ('<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "' + name +
            '", "parameters": {"' + key + '": "Paris \\"<b>\\""}},\n    '
            '{"tool_call_id": "1", "tool_name": "')


#: case -> the text every walk starts with (the rest is sampled), or a text per tool set;
#: the "/parallel" cases start with one whole call and the next one opened
PREFIX = {"harmony/after-analysis": "<|channel|>analysis<|message|>Need a tool.<|end|>"
                                    "<|start|>assistant<|channel|>commentary to=functions.",
          "kimi-k3/parallel": {"weather": _k3_second_call("get_current_weather", "city"),
                               "assistant": _k3_second_call("search_web", "query")},
          "cohere/parallel": {"weather": _cohere_second_call("get_current_weather", "city"),
                              "assistant": _cohere_second_call("search_web", "query")}}
#: case -> {tool set: the one it is run with instead}: minimax-m3 refuses object and array
#: properties (schemas/assistant.json has them), so its required run takes the weather tools
INSTEAD = {"minimax-m3": {"assistant": "weather"}}
#: case -> vLLM 0.33.0 parser names (--tool-call-parser)
VLLM = {"hermes": ["hermes"], "qwen3-coder": ["qwen3_coder"], "mimo": ["mimo"],
        "seed-oss": ["seed_oss"], "glm-4.5": ["glm45"], "glm-4.7": ["glm47"],
        "minimax-m2": ["minimax_m2"], "deepseek-v3": ["deepseek_v3"],
        "deepseek-v3.1": ["deepseek_v31"], "deepseek-v3.2": ["deepseek_v32"],
        "deepseek-v4": ["deepseek_v4"], "kimi-k2": ["kimi_k2"], "granite": ["granite"],
        "gemma4": ["gemma4"], "llama3-json": ["llama3_json"],
        "pythonic": ["pythonic", "llama4_pythonic"], "mistral": ["mistral"],
        "mistral/v11": ["mistral"], "mistral/v3": ["mistral"], "functools": ["phi4_mini_json"],
        "harmony": ["openai"], "harmony/after-analysis": ["openai"],
        "kimi-k3": ["kimi_k3"], "kimi-k3/thinking": ["kimi_k3"],
        "cohere": ["cohere_command4"], "cohere/thinking": ["cohere_command4"],
        "kimi-k3/parallel": ["kimi_k3"], "cohere/parallel": ["cohere_command4"],
        "minimax-m3": ["minimax_m3"]}
#: case -> SGLang 0.5.23 parser names (--tool-call-parser)
SGLANG = {"hermes": ["hermes"], "qwen3-coder": ["qwen3_coder"], "mimo": ["mimo"],
          "glm-4.5": ["glm45"], "glm-4.7": ["glm47"], "minimax-m2": ["minimax-m2"],
          "deepseek-v3": ["deepseekv3"], "deepseek-v3.1": ["deepseekv31"],
          "deepseek-v3.2": ["deepseekv32"], "deepseek-v4": ["deepseekv4"],
          "kimi-k2": ["kimi_k2"], "gemma4": ["gemma4"], "llama3-json": ["llama3"],
          "pythonic": ["pythonic"], "mistral/v11": ["mistral"], "mistral/v3": ["mistral"],
          "harmony/after-analysis": ["gpt-oss"], "kimi-k3": ["kimi_k3"],
          "kimi-k3/thinking": ["kimi_k3"], "cohere": ["cohere_command4"],
          "cohere/thinking": ["cohere_command4"], "kimi-k3/parallel": ["kimi_k3"],
          "cohere/parallel": ["cohere_command4"], "minimax-m3": ["minimax-m3"]}


