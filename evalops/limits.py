"""The warehouse's size limits on ids, in one place: the models declare their columns with them, and the
data contracts check inputs against them, so a too-long id is refused before anything is written."""

from __future__ import annotations

__all__ = ["QUERY_ID_MAX_LENGTH"]

QUERY_ID_MAX_LENGTH = 500  # query_scores.query_id
