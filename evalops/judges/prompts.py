"""Judge prompts as versioned data: one YAML file per task in ``evalops/judges/prompts/``.

A prompt file holds ``name``, ``version`` (an integer, bumped whenever the wording or the schema changes),
``label`` (the kind of answer: ``binary``, ``graded`` with its ``levels``, ``fraction`` with the
``list_key`` / ``flag_key`` of its claim list, or ``draft``), the ``system`` and ``user`` messages (the user
message is a ``str.format`` template over ``query``, ``context``, ``contexts``, ``reference``, ``answer``)
and the JSON ``schema`` of the answer, sent to servers that support structured output.

``Prompt.ref`` (``name@version``) goes into every judge fingerprint and every cache key, so changing a
prompt can never reuse labels made with the old one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from evalops.errors import ConfigError

__all__ = ["Prompt", "TASKS", "load_prompt", "prompt_for"]

TASKS: tuple[str, ...] = (
    "context_relevance",
    "context_relevance_graded",
    "context_relevance_reference",
    "context_recall",
    "faithfulness",
    "answer_relevance",
    "generate_qa",
)
LABEL_KINDS = ("binary", "graded", "fraction", "draft")


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int
    label: str
    system: str
    user: str
    schema: dict[str, Any] = field(hash=False, compare=False)
    levels: tuple[int, ...] = ()
    list_key: str = ""
    flag_key: str = ""
    description: str = ""

    @property
    def ref(self) -> str:
        """``name@version``: the prompt's identity in fingerprints and cache keys."""
        return f"{self.name}@{self.version}"

    @property
    def digest(self) -> str:
        """SHA-256 of the messages and the schema: a guard that a version bump was not forgotten."""
        body = json.dumps([self.system, self.user, self.schema], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(body.encode()).hexdigest()

    def messages(self, **fields: str) -> list[dict[str, str]]:
        """The chat messages for one item; untrusted text is inserted verbatim between ``<<< >>>`` fences."""
        values = {key: fields.get(key, "") for key in ("query", "context", "contexts", "reference", "answer")}
        return [{"role": "system", "content": self.system.strip()},
                {"role": "user", "content": self.user.format(**values).strip()}]


def _build(data: Any, source: str) -> Prompt:
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a prompt file must be a mapping")
    for key in ("name", "version", "label", "system", "user", "schema"):
        if key not in data:
            raise ConfigError(f"{source}: missing key {key!r}")
    if not isinstance(data["version"], int) or isinstance(data["version"], bool) or data["version"] < 1:
        raise ConfigError(f"{source}: version must be a positive integer, got {data['version']!r}")
    if data["label"] not in LABEL_KINDS:
        raise ConfigError(f"{source}: label must be one of {', '.join(LABEL_KINDS)}, got {data['label']!r}")
    levels = tuple(int(v) for v in data.get("levels", ()))
    if data["label"] == "graded" and not levels:
        raise ConfigError(f"{source}: a graded prompt needs its levels")
    if data["label"] == "fraction" and not (data.get("list_key") and data.get("flag_key")):
        raise ConfigError(f"{source}: a fraction prompt needs list_key and flag_key")
    return Prompt(
        name=str(data["name"]), version=data["version"], label=data["label"], system=str(data["system"]),
        user=str(data["user"]), schema=dict(data["schema"]), levels=levels,
        list_key=str(data.get("list_key", "")), flag_key=str(data.get("flag_key", "")),
        description=str(data.get("description", "")),
    )


@cache
def load_prompt(task: str) -> Prompt:
    """The packaged prompt of ``task`` (one of :data:`TASKS`)."""
    from evalops.util.yamlfile import load_text

    if task not in TASKS:
        raise ConfigError(f"unknown judge task {task!r}; valid tasks: {', '.join(TASKS)}")
    path = resources.files("evalops.judges") / "prompts" / f"{task}.yaml"
    name = f"evalops/judges/prompts/{task}.yaml"
    return _build(load_text(path.read_text(encoding="utf-8"), name), name)


def prompt_for(task: str | Prompt) -> Prompt:
    return task if isinstance(task, Prompt) else load_prompt(task)
