"""Tool calls through a model's chat template: rendering the transcript with the tools' schemas
(transformers `apply_chat_template(messages, tools=..., add_generation_prompt=True)`), and parsing
the call back out of a completion.

The transcript arrives as OpenAI chat messages (core `teacherMessages`): an assistant turn carries
`tool_calls` whose `arguments` are JSON text, a tool's result is a `role: "tool"` message. Chat
templates (Qwen2.5/3, Llama-3.1) expect the arguments as a mapping and render them with `tojson`,
so they are parsed here first; text that is not a JSON object stays as it was.

MINIMAL_QWEN_TEMPLATE is a minimal Qwen2.5-style tool template (`<tools>` in the system turn,
`<tool_call>{json}</tool_call>` in assistant turns, results as `<tool_response>` user turns) for
models whose own template ignores `tools`: the tiny test models' ChatML template is one. It is a
stand-in for such models, not a copy of Qwen's template; a real Qwen or Llama model uses its own.
"""

from __future__ import annotations

import json
from typing import Any

from .common import UserError
from .data import FIXED_DATE_STRING

MINIMAL_QWEN_TEMPLATE = (
    "{%- if messages[0]['role'] == 'system' -%}{%- set system = messages[0]['content'] -%}"
    "{%- set rest = messages[1:] -%}{%- else -%}{%- set system = '' -%}{%- set rest = messages -%}{%- endif -%}"
    "{%- if tools or system -%}"
    "{{- '<|im_start|>system\\n' + system -}}"
    "{%- if tools -%}"
    "{{- '\\n\\n# Tools\\n\\nYou may call one of these functions. Their signatures are within <tools></tools>:\\n<tools>' -}}"
    "{%- for tool in tools -%}{{- '\\n' + (tool | tojson) -}}{%- endfor -%}"
    "{{- '\\n</tools>\\n\\nFor a function call, return a JSON object with the function name and arguments "
    'within <tool_call></tool_call> tags:\\n<tool_call>\\n{"name": <function-name>, "arguments": '
    "<args-json-object>}\\n</tool_call>' -}}"
    "{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- for message in rest -%}"
    "{%- if message['role'] == 'assistant' -%}"
    "{{- '<|im_start|>assistant\\n' + (message['content'] or '') -}}"
    "{%- for call in (message['tool_calls'] or []) -%}"
    "{%- set fn = call['function'] if call['function'] is defined else call -%}"
    "{%- if message['content'] or not loop.first -%}{{- '\\n' -}}{%- endif -%}"
    "{{- '<tool_call>\\n{\"name\": \"' + fn['name'] + '\", \"arguments\": ' -}}"
    "{%- if fn['arguments'] is string -%}{{- fn['arguments'] -}}{%- else -%}{{- fn['arguments'] | tojson -}}{%- endif -%}"
    "{{- '}\\n</tool_call>' -}}"
    "{%- endfor -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- elif message['role'] == 'tool' -%}"
    "{{- '<|im_start|>user\\n<tool_response>\\n' + message['content'] + '\\n</tool_response><|im_end|>\\n' -}}"
    "{%- else -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)

TEMPLATES = ("model", "minimal_qwen")


def use_template(tokenizer, which: str, tools: list[dict[str, Any]]) -> None:
    """Sets the tokenizer's template (`minimal_qwen`), or checks that its own renders the tools:
    a template that ignores `tools` would ask the model for calls it was never shown."""
    if which not in TEMPLATES:
        raise UserError(f"chat_template must be one of {', '.join(TEMPLATES)}")
    if which == "minimal_qwen":
        tokenizer.chat_template = MINIMAL_QWEN_TEMPLATE
        return
    if not isinstance(getattr(tokenizer, "chat_template", None), str):
        raise UserError("the tokenizer has no chat template; name chat_template minimal_qwen to use the minimal one")
    probe = [{"role": "user", "content": "x"}]
    with_tools = render(tokenizer, probe, tools)
    name = str(tools[0].get("function", {}).get("name", "")) if tools else ""
    if with_tools == render(tokenizer, probe, None) or (name and name not in with_tools):
        raise UserError(
            "the model's chat template does not render `tools`; name chat_template minimal_qwen to use a "
            "minimal Qwen-style tool template instead"
        )


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The transcript as chat templates read it: each call's JSON-text arguments as a mapping."""
    out: list[dict[str, Any]] = []
    for m in messages:
        m = dict(m)
        if m.get("role") == "assistant" and m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                fn = dict(c.get("function") or {})
                fn["arguments"] = _arguments_object(fn.get("arguments"))
                calls.append({**c, "function": fn})
            m["tool_calls"] = calls
        out.append(m)
    return out


def _arguments_object(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return raw
    return parsed if isinstance(parsed, dict) else raw


def render(tokenizer, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """The prompt of the next assistant turn."""
    return tokenizer.apply_chat_template(
        template_messages(messages),
        tools=tools,
        tokenize=False,
        add_generation_prompt=True,
        date_string=FIXED_DATE_STRING,
    )


def parse_tool_call(text: str) -> tuple[dict[str, str] | None, str | None]:
    """(call, malformed): the completion's first tool call as {name, arguments (JSON text)}, or None
    with why when it tried one that does not parse; (None, None) when it made no call at all.

    Qwen style: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` anywhere in the text.
    Llama-3 style: the whole completion is one JSON object `{"name": ..., "parameters": {...}}`,
    possibly after `<|python_tag|>`."""
    open_tag, close_tag = "<tool_call>", "</tool_call>"
    if open_tag in text:
        start = text.index(open_tag) + len(open_tag)
        end = text.find(close_tag, start)
        if end < 0:
            return None, "<tool_call> is not closed"
        return _call_from_json(text[start:end])
    body = text.strip().removeprefix("<|python_tag|>").strip()
    if body.startswith("{"):
        return _call_from_json(body)
    return None, None


def _call_from_json(raw: str) -> tuple[dict[str, str] | None, str | None]:
    try:
        obj = json.loads(raw.strip())
    except ValueError as e:
        return None, f"the call is not JSON ({e})"
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        return None, "the call names no function"
    args = obj["arguments"] if "arguments" in obj else obj.get("parameters", {})
    if isinstance(args, str):  # some models send the arguments as JSON text
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return None, "the call's arguments are not JSON"
    if not isinstance(args, dict):
        return None, "the call's arguments are not an object"
    return {"name": obj["name"], "arguments": json.dumps(args, ensure_ascii=False)}, None
