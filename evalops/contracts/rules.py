"""The thresholds of each data contract, as explicit values that travel with the validation report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from evalops.errors import ConfigError
from evalops.goldset import QUERY_TYPES
from evalops.util.utc import as_utc

__all__ = ["GoldSetRules", "KnowledgeBaseRules", "QueryLogRules", "LOG_REQUIRED_COLUMNS"]


# Columns every query-log row must carry (the segment column is added from the rules).
LOG_REQUIRED_COLUMNS: tuple[str, ...] = ("timestamp", "query", "retriever_version")


@dataclass(frozen=True)
class GoldSetRules:
    """What a usable gold set looks like.

    * ``min_queries``: fewer queries cannot detect a realistic regression;
    * ``required_types``: each of these query types must occur at least once (a gold set made only of easy
      keyword lookups says nothing about paraphrases);
    * ``no_answer_share``: inclusive bounds on the share of ``no_answer`` queries;
    * ``allowed_grades``: the grade scale of the judgments: ``"auto"`` (the default) accepts the data's
      own integer range and records it (TREC collections grade 0-4, some use -1); an explicit list is
      enforced, so a team that wants typos refused can say so.

    ``required_types`` and ``no_answer_share`` (and the two checks that tie judgments to a query's type)
    apply only to a typed gold set; on a collection without query types they are reported as not
    applicable.
    """

    __pydantic_config__ = {"extra": "forbid"}  # read by the settings object; no pydantic import here

    min_queries: int = 50
    required_types: tuple[str, ...] = QUERY_TYPES
    no_answer_share: tuple[float, float] = (0.05, 0.30)
    allowed_grades: str | tuple[int, ...] = "auto"

    def __post_init__(self) -> None:
        if self.min_queries < 1:
            raise ConfigError(f"min_queries must be at least 1, got {self.min_queries}")
        unknown = [t for t in self.required_types if t not in QUERY_TYPES]
        if unknown:
            raise ConfigError(f"required_types {unknown} are not query types {list(QUERY_TYPES)}")
        lo, hi = self.no_answer_share
        if not (0.0 <= lo <= hi <= 1.0):
            raise ConfigError(f"no_answer_share must satisfy 0 <= min <= max <= 1, got {self.no_answer_share}")
        grades = self.allowed_grades
        if isinstance(grades, str) and grades.strip() != "auto":  # "0,1,2" or "[0, 1, 2]" (environment)
            try:
                grades = tuple(int(g) for g in grades.strip().strip("[]").split(",") if g.strip())
            except ValueError:
                pass
        if isinstance(grades, str):
            if grades.strip() != "auto":
                raise ConfigError(f"allowed_grades must be 'auto' or a list of integer grades, got {grades!r}")
            object.__setattr__(self, "allowed_grades", "auto")
        else:
            if not grades or any(isinstance(g, bool) or int(g) != g for g in grades):
                raise ConfigError(f"allowed_grades must be 'auto' or a non-empty list of integers, got {grades!r}")
            object.__setattr__(self, "allowed_grades", tuple(int(g) for g in grades))
        object.__setattr__(self, "required_types", tuple(self.required_types))
        object.__setattr__(self, "no_answer_share", tuple(float(v) for v in self.no_answer_share))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class KnowledgeBaseRules:
    """``min_documents``: a snapshot with fewer documents is refused (an empty export is a failure).

    ``max_empty_share``: documents without text (some classic collections have a handful) are a warning
    naming their ids while their share stays at or below this; above it the contract fails.
    """

    __pydantic_config__ = {"extra": "forbid"}

    min_documents: int = 1
    max_empty_share: float = 0.01

    def __post_init__(self) -> None:
        if self.min_documents < 0:
            raise ConfigError(f"min_documents must be >= 0, got {self.min_documents}")
        if not 0.0 <= self.max_empty_share < 1.0:
            raise ConfigError(f"max_empty_share must be a share in [0, 1), got {self.max_empty_share}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class QueryLogRules:
    """The contract of one window of production query logs.

    * ``start``/``end``: the run's data interval ``[start, end)``, timezone-aware;
    * ``known_versions``: retriever versions that may appear (the deployed registry);
    * ``max_malformed_share``: rows that fail any row check (unparseable, missing or mistyped fields, empty
      text, unknown version, timestamp outside the interval) are dropped before sampling as long as their
      share stays at or below this; above it the whole window is refused;
    * ``segment_column``: the second stratification column;
    * ``min_rows``: a window with fewer rows is refused (an empty window usually means a broken export).
    """

    start: datetime
    end: datetime
    known_versions: tuple[str, ...]
    max_malformed_share: float = 0.01
    segment_column: str = "segment"
    min_rows: int = 1
    required_columns: tuple[str, ...] = field(default=LOG_REQUIRED_COLUMNS)

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            as_utc(getattr(self, name), f"the data interval {name}")
        if self.end <= self.start:
            raise ConfigError(f"the data interval is empty: start {self.start} is not before end {self.end}")
        if not self.known_versions:
            raise ConfigError("known_versions must list at least one retriever version")
        if not 0.0 <= self.max_malformed_share < 1.0:
            raise ConfigError(f"max_malformed_share must be in [0, 1), got {self.max_malformed_share}")
        object.__setattr__(self, "known_versions", tuple(str(v) for v in self.known_versions))
        cols = tuple(self.required_columns)
        if self.segment_column not in cols:
            cols = cols + (self.segment_column,)
        object.__setattr__(self, "required_columns", cols)

    @property
    def mostly(self) -> float:
        """The share of rows each row check must pass (Great Expectations' ``mostly``)."""
        return 1.0 - self.max_malformed_share

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["start"] = self.start.isoformat()
        out["end"] = self.end.isoformat()
        return out
