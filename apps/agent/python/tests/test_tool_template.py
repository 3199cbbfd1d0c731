"""The local-model policy's chat template and tool-call parsing (tool_template.py): the transcript is
rendered with the tools, a well-formed call (Qwen `<tool_call>` or Llama-3 JSON) parses, a malformed
one is refused with why, prose is no call. Each refusal beside an accepted control."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from agentlab_trainer.common import UserError
from agentlab_trainer.tool_template import parse_tool_call, render, use_template

# The shape of core EPISODE_TOOL_SCHEMAS (two of the five tools are enough here).
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read lines of a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    },
    {
        "type": "function",
        "function": {"name": "submit", "description": "Submit.", "parameters": {"type": "object", "properties": {}}},
    },
]

# core teacherMessages: the system prompt, the first message, a call with JSON-text arguments, its result.
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You repair a Python program."},
    {"role": "user", "content": "f should return x + 1."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_0", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_0", "content": "1| def f(x):"},
]


@pytest.fixture()
def tok(tokenizer):
    t = copy.deepcopy(tokenizer)  # the session's tokenizer keeps its own template
    use_template(t, "minimal_qwen", TOOLS)
    return t


def test_minimal_template_renders_tools_calls_and_results(tok):
    text = render(tok, MESSAGES, TOOLS)
    assert text.startswith("<|im_start|>system\nYou repair a Python program.\n\n# Tools")
    section = text.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0]
    assert section.split("\n") == [json.dumps(tool, ensure_ascii=False) for tool in TOOLS]
    # the call's JSON-text arguments rendered as an object, not as a quoted string
    assert '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call><|im_end|>' in text
    assert "<|im_start|>user\n<tool_response>\n1| def f(x):\n</tool_response><|im_end|>" in text
    assert text.endswith("<|im_start|>assistant\n")
    # control: without tools there is no tool section
    assert "<tools>" not in render(tok, MESSAGES[:2], None)


def test_a_template_that_ignores_tools_is_refused(tokenizer):
    t = copy.deepcopy(tokenizer)
    with pytest.raises(UserError, match="does not render `tools`"):
        use_template(t, "model", TOOLS)  # the tiny model's ChatML template has no tool support
    use_template(t, "minimal_qwen", TOOLS)  # control: the minimal template is accepted ...
    use_template(t, "model", TOOLS)  # ... and, now the tokenizer's own, passes the check


def test_qwen_and_llama_calls_parse():
    call, why = parse_tool_call('<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>')
    assert (call, why) == ({"name": "read_file", "arguments": '{"path": "a.py"}'}, None)
    # prose before the call is allowed; arguments sent as JSON text are read as the object
    call, why = parse_tool_call('Let me look.\n<tool_call>{"name": "submit", "arguments": "{}"}</tool_call>')
    assert (call, why) == ({"name": "submit", "arguments": "{}"}, None)
    # Llama-3.1: the whole completion is the JSON object, `parameters` for the arguments
    call, why = parse_tool_call('<|python_tag|>{"name": "read_file", "parameters": {"path": "b.py"}}')
    assert (call, why) == ({"name": "read_file", "arguments": '{"path": "b.py"}'}, None)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}', "not closed"),
        ('<tool_call>{"name": "read_file", "arguments": {"path": }}</tool_call>', "not JSON"),
        ('<tool_call>{"arguments": {}}</tool_call>', "names no function"),
        ('<tool_call>{"name": "submit", "arguments": [1]}</tool_call>', "not an object"),
        ('{"name": "read_file", "parameters": "{oops"}', "arguments are not JSON"),
    ],
)
def test_a_malformed_call_is_refused(text, why):
    call, malformed = parse_tool_call(text)
    assert call is None
    assert malformed is not None and why in malformed


def test_prose_is_no_call():
    assert parse_tool_call("I think the bug is in f.") == (None, None)
