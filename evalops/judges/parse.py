"""Strict parsing of judge answers: an answer is a label, or a missing label with its reason.

Nothing here ever invents a score. Rules, for every prompt:

* The message content must be one JSON object. Surrounding whitespace and a single Markdown code fence
  around the whole object (```` ```json ... ``` ````) are tolerated; any other text before or after it
  is not ("prose around the JSON").
* The object must hold the prompt's keys with the schema's types: ``true``/``false`` for a binary label
  (not ``1``, not ``"yes"``), an integer among the prompt's ``levels`` for a graded label (``2.0`` and
  ``"2"`` are refused), a non-empty list of ``{text, flag}`` items for a fraction (an empty list is
  missing: 0/0 is not a score).
* Extra keys are refused: a model that answers a different question must not be read as answering ours.

A :class:`Parsed` carries ``label`` (float) or ``missing`` (the reason) and ``detail`` (the claims).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from evalops.judges.prompts import Prompt

__all__ = ["Parsed", "parse_answer"]

_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n?(.*?)\n?```$", re.S)


@dataclass(frozen=True)
class Parsed:
    label: float | None = None
    missing: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


def _missing(reason: str) -> Parsed:
    return Parsed(None, reason)


def _load_object(content: str) -> tuple[dict[str, Any] | None, str | None]:
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        return None, "empty answer"
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as exc:
        if text.lstrip().startswith("{"):
            return None, f"answer is not valid JSON ({exc.msg} at character {exc.pos})"
        return None, "answer is not JSON (prose instead of a JSON object)"
    if text[end:].strip():
        return None, "prose around the JSON (text after the object)"
    if not isinstance(value, dict):
        return None, f"answer is JSON {type(value).__name__}, not an object"
    return value, None


def _extra(obj: dict[str, Any], allowed: set[str]) -> str | None:
    extra = sorted(set(obj) - allowed)
    return f"unexpected keys {extra}" if extra else None


def parse_answer(prompt: Prompt, content: str | None) -> Parsed:
    """The label in ``content`` for ``prompt``, or a missing label naming what is wrong."""
    if content is None:
        return _missing("no message content")
    obj, problem = _load_object(content)
    if problem:
        return _missing(problem)
    if obj is None:  # unreachable: _load_object returns an object or a problem
        return _missing("no JSON object")
    if prompt.label == "binary":
        if (p := _extra(obj, {"relevant"})) or "relevant" not in obj:
            return _missing(p or "key 'relevant' is missing")
        if not isinstance(obj["relevant"], bool):
            return _missing(f"'relevant' must be true or false, got {json.dumps(obj['relevant'])}")
        return Parsed(1.0 if obj["relevant"] else 0.0)
    if prompt.label == "graded":
        key = next(iter(prompt.schema.get("required", ["grade"])))
        if (p := _extra(obj, {key})) or key not in obj:
            return _missing(p or f"key {key!r} is missing")
        value = obj[key]
        if isinstance(value, bool) or not isinstance(value, int):
            return _missing(f"{key!r} must be an integer, got {json.dumps(value)}")
        if value not in prompt.levels:
            return _missing(f"{key!r} {value} is outside the scale {list(prompt.levels)}")
        return Parsed(float(value))
    if prompt.label == "fraction":
        lk, fk = prompt.list_key, prompt.flag_key
        if (p := _extra(obj, {lk})) or lk not in obj:
            return _missing(p or f"key {lk!r} is missing")
        items = obj[lk]
        if not isinstance(items, list):
            return _missing(f"{lk!r} must be a list, got {type(items).__name__}")
        if not items:
            return _missing(f"{lk!r} is empty: no {lk} to score")
        text_key = lk[:-1] if lk.endswith("s") else "text"
        flags = []
        for i, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get(fk), bool) or set(item) - {text_key, fk}:
                return _missing(f"{lk}[{i}] must be {{{text_key!r}: text, {fk!r}: true/false}}")
            flags.append(item[fk])
        return Parsed(sum(flags) / len(flags), detail={lk: items})
    if prompt.label == "draft":
        if (p := _extra(obj, {"question", "answer"})) or not all(isinstance(obj.get(k), str) and obj[k].strip()
                                                                   for k in ("question", "answer")):
            return _missing(p or "'question' and 'answer' must be non-empty strings")
        return Parsed(None, None, {"question": obj["question"].strip(), "answer": obj["answer"].strip()})
    return _missing(f"prompt {prompt.ref} has an unknown label kind {prompt.label!r}")
