"""The prompt frame: the text a model reads around an item's context, as the length contract counts it.

With `length.counted: prompt` the counted prompt is what the model reads. For a tokenizer without
a chat template that is every message's content (the user message in one piece with the context,
the others counted apart). For a tokenizer with a chat template it is the rendered chat: the
template applied to the messages with the generation prompt added, as `transformers`'
`apply_chat_template` renders it. Under RULER's length rule (`length.reserve: max_new_tokens`) the
answer prefix, which runners send as the start of the reply, counts too: the window holds it.
The context is rendered as a sentinel, so the frame is the rendered text before and after it; the
placement engine counts
`frame.prefix + context + frame.suffix` with its seam arithmetic, so the count is exact, special
tokens included (a Hugging Face tokenizer matches its added tokens such as `<|im_start|>` in text).

Chat templates are model files, not needlec specs: they run in Jinja's immutable sandbox with the
same undefined-variable semantics as `transformers` (templates test optional keys such as
`message.tool_calls`), and their output is bounded.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from needlec.compile.plan import CONTEXT_SENTINEL
from needlec.errors import ContractError, TokenizerError
from needlec.spec.models import Spec
from needlec.tokenizer import ChatTemplate, Tokenizer

MAX_RENDERED_CHARS = 1 << 20
"""Most characters a chat template may add around the messages."""


@dataclass(frozen=True)
class PromptFrame:
    """What the counted prompt holds around the context.

    `prefix` and `suffix` are counted in one piece with the context; `others` are tokens counted
    apart (the other messages' content and the answer prefix when there is no chat template).
    """

    prefix: str
    suffix: str
    others: int


class _TemplateError(Exception):
    """`raise_exception` inside a chat template."""


def _raise(message: str) -> None:
    raise _TemplateError(message)


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=False)


def _strftime_now(fmt: str) -> str:
    # a fixed date keeps compiles byte-identical; templates use it only for a "today is" line
    return datetime(2024, 1, 1).strftime(fmt)


@functools.lru_cache(maxsize=16)
def _compiled(source: str) -> Any:
    from jinja2 import TemplateError
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = _strftime_now
    try:
        return env.from_string(source)
    except TemplateError as exc:
        raise TokenizerError(f"the tokenizer's chat template does not parse: {exc}") from None


def render_chat(template: ChatTemplate, messages: Sequence[dict[str, str]], add_generation_prompt: bool = True) -> str:
    """The chat as the model sees it: `template` applied to `messages` (roles and contents)."""
    from jinja2 import TemplateError

    variables: dict[str, Any] = dict(template.tokens)
    variables.update(
        messages=[dict(m) for m in messages],
        add_generation_prompt=add_generation_prompt,
        tools=None,
        documents=None,
    )
    try:
        text: str = _compiled(template.source).render(**variables)
    except _TemplateError as exc:
        raise ContractError(f"the tokenizer's chat template refused the messages: {exc}") from None
    except (TemplateError, TypeError, ValueError, KeyError, IndexError) as exc:
        raise ContractError(f"the tokenizer's chat template failed on the messages: {exc}") from None
    if len(text) > MAX_RENDERED_CHARS + sum(len(m["content"]) for m in messages):
        raise ContractError(f"the tokenizer's chat template adds more than {MAX_RENDERED_CHARS:,} characters")
    return text


def prompt_frame(messages: Sequence[dict[str, str]], tokenizer: Tokenizer, answer_prefix: str | None) -> PromptFrame:
    """The frame of an item whose last message holds the context sentinel once.

    `answer_prefix` (text a runner sends after the chat, as the start of the reply) is counted
    after the chat when given; the item builder gives it only under RULER's length rule.
    """
    user = messages[-1]["content"]
    before, after = user.split(CONTEXT_SENTINEL)
    answer = answer_prefix or ""
    if tokenizer.chat_template is None:
        others = sum(tokenizer.count_pieces(m["content"]) for m in messages[:-1])
        return PromptFrame(before, after, others + (tokenizer.count_pieces(answer) if answer else 0))
    rendered = render_chat(tokenizer.chat_template, messages)
    if rendered.count(CONTEXT_SENTINEL) != 1:
        raise ContractError(
            "the tokenizer's chat template does not pass the user message through verbatim (its context appears "
            f"{rendered.count(CONTEXT_SENTINEL)} times), so the prompt cannot be counted exactly; set "
            "`chat_template: false` on the tokenizer to count message content only"
        )
    prefix, suffix = rendered.split(CONTEXT_SENTINEL)
    return PromptFrame(prefix, suffix + answer, 0)


def reserved_tokens(spec: Spec, max_new_tokens: int | None) -> int:
    """Tokens the length rule keeps free of the prompt: the item's `max_new_tokens` under
    `length.reserve: max_new_tokens` (RULER's rule: prompt plus reply budget fill the length), else 0."""
    if spec.length.reserve is None:
        return 0
    if max_new_tokens is None:
        raise ContractError(
            "`length.reserve: max_new_tokens` needs a generation budget: set `prompt.max_new_tokens` "
            "(or use a needle kind that sets one)"
        )
    return max_new_tokens


__all__ = ["PromptFrame", "prompt_frame", "render_chat", "reserved_tokens"]
