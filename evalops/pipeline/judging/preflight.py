"""The configured judge, and its preflight: one tiny request before any work, so that a judge that
cannot answer fails the step at once with a one-line cause."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalops.errors import ConfigError
from evalops.judges import LexicalJudge, OpenAIJudge, OpenAISettings

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config, JudgeSettings
    from evalops.judges.base import Judge

log = logging.getLogger("evalops.pipeline.judging")


def build_judge(settings: JudgeSettings) -> Judge:
    """The configured judge (the lexical judge, or the OpenAI-compatible adapter)."""
    if settings.kind == "lexical":
        return LexicalJudge()
    if settings.kind == "openai":
        fields = set(OpenAISettings.__dataclass_fields__)
        return OpenAIJudge(OpenAISettings(**{k: v for k, v in settings.model_dump().items() if k in fields}))
    raise ConfigError(f"judge.kind is {settings.kind!r}: there is no judge to build")

@dataclass(frozen=True)
class JudgePreflight:
    """The outcome of the judge's preflight: ``cause`` is None when it answered (or needs no check)."""

    cause: str | None = None
    judge: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.cause is None

def _check(judge: Any) -> JudgePreflight:
    check = getattr(judge, "preflight", None)
    cause = check() if check is not None else None
    if cause is None and check is not None:
        log.info("judge preflight: %s answered", judge.fingerprint.describe())
    return JudgePreflight(cause, judge.fingerprint.to_dict())

def preflight_judge(cfg: Config) -> JudgePreflight:
    """Check the configured judge before any work: one tiny request to an OpenAI-compatible endpoint (see
    :meth:`evalops.judges.OpenAIJudge.preflight`); nothing to check for the lexical judge or when it is off."""
    if cfg.judge.kind != "openai":
        return JudgePreflight()
    judge = build_judge(cfg.judge)
    try:
        return _check(judge)
    finally:
        judge.close()
