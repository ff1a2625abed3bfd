"""The report's format-neutral building blocks: sections of our own sentences, bullets and tables of cells
(text every renderer escapes). The report's content (:mod:`evalops.reports.tables`) and its added sections
(:mod:`evalops.reports.breakdowns`) are built from them."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["TONES", "Bullet", "Cell", "Section", "Table"]

TONES = ("regression", "improvement")  # decisions a renderer may colour


@dataclass(frozen=True)
class Cell:
    """One table cell: its text and, for a decision, its ``tone`` (``regression``, ``improvement``)."""

    text: str
    tone: str | None = None


@dataclass
class Table:
    """A table of escaped cells. ``shown``: a wide table's layout on a page, the columns each row shows, in
    that order; every other column goes, in its own order, into a details line under the row (markdown
    keeps every column in its place). None: every column in its place."""

    header: list[str]
    rows: list[list[Cell]]
    shown: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        self.rows = [[c if isinstance(c, Cell) else Cell(c) for c in row] for row in self.rows]

    def columns(self) -> list[int]:
        """The columns a page shows in each row, in order."""
        return list(range(len(self.header))) if self.shown is None else list(self.shown)

    def details(self) -> list[int]:
        """The columns a page shows in the details line under each row, in order (none without ``shown``)."""
        return [i for i in range(len(self.header)) if self.shown is not None and i not in self.shown]


@dataclass(frozen=True)
class Bullet:
    """One line of a list; ``kind`` ``alert`` for an alert (a renderer may mark it)."""

    text: str
    kind: str | None = None


@dataclass
class Section:
    """Format-neutral content: paragraphs are our own sentences (`code` spans allowed), everything else is
    text the renderer escapes."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    bullets: list[Bullet] = field(default_factory=list)
    tables: list[tuple[str, Table]] = field(default_factory=list)  # (caption, table)
    charts: list[str] = field(default_factory=list)  # names of charts rendered here
