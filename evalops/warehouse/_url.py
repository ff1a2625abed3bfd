"""A warehouse URL's parts, parsed and rendered as SQLAlchemy does, without importing SQLAlchemy.

:mod:`evalops.warehouse.config` resolves and checks every warehouse URL with these two functions (its
one place), so that a command that reads the warehouse on the driver alone (``evalops history``,
:mod:`evalops.warehouse.direct`) pays for neither SQLAlchemy's import nor a second parser. The grammar and
the rendering are SQLAlchemy's own (``sqlalchemy.engine.url``: ``_parse_url`` and
``URL.render_as_string``); a test holds them to ``make_url`` on a range of URLs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from urllib.parse import parse_qsl, quote, quote_plus, unquote

__all__ = ["URLError", "URLParts", "parse_url"]

_PATTERN = re.compile(
    r"""
        (?P<name>[\w\+]+)://
        (?:
            (?P<username>[^:/]*)
            (?::(?P<password>[^@]*))?
        @)?
        (?:
            (?:
                \[(?P<ipv6host>[^/\?]+)\] |
                (?P<ipv4host>[^/:\?]+)
            )?
            (?::(?P<port>[^/\?]*))?
        )?
        (?:/(?P<database>[^\?]*))?
        (?:\?(?P<query>.*))?
    """,
    re.X,
)


class URLError(ValueError):
    """Not a URL of the form ``driver://user:password@host:port/database?key=value``."""


@dataclass(frozen=True)
class URLParts:
    """The parts of a database URL (SQLAlchemy's ``URL``: a query key given twice holds a tuple)."""

    drivername: str
    username: str | None = None
    password: str | None = None
    host: str | None = None
    port: int | None = None
    database: str | None = None
    query: dict[str, str | tuple[str, ...]] = field(default_factory=dict)

    def backend(self) -> str:
        """``postgresql`` of ``postgresql+psycopg``."""
        return self.drivername.split("+", 1)[0]

    def with_driver(self, drivername: str) -> URLParts:
        return replace(self, drivername=drivername)

    def render(self, hide_password: bool = True) -> str:
        """The URL as SQLAlchemy writes it; the password as ``***`` unless ``hide_password`` is False."""
        s = self.drivername + "://"
        if self.username is not None:
            s += quote(self.username, safe=" +")
            if self.password is not None:
                s += ":" + ("***" if hide_password else quote(str(self.password), safe=" +"))
            s += "@"
        if self.host is not None:
            s += f"[{self.host}]" if ":" in self.host else self.host
        if self.port is not None:
            s += ":" + str(self.port)
        if self.database is not None:
            s += "/" + quote(self.database, safe=" +/")
        if self.query:
            s += "?" + "&".join(f"{quote_plus(k)}={quote_plus(v)}" for k in sorted(self.query)
                                for v in _values(self.query[k]))
        return s


def _values(value: str | tuple[str, ...]) -> tuple[str, ...]:
    return value if isinstance(value, tuple) else (value,)


def parse_url(url: str) -> URLParts:
    """``url``'s parts; :class:`URLError` when it does not have the form, ``ValueError`` when its port is
    not a number (as SQLAlchemy's ``make_url``)."""
    found = _PATTERN.match(url)
    if found is None:
        raise URLError("Could not parse SQLAlchemy URL from given URL string")
    parts = found.groupdict()
    query: dict[str, str | tuple[str, ...]] = {}
    if parts["query"] is not None:
        for key, value in parse_qsl(parts["query"]):
            query[key] = (*_values(query[key]), value) if key in query else value
    username, password, database = (None if parts[k] is None else unquote(parts[k])
                                    for k in ("username", "password", "database"))
    return URLParts(parts["name"], username, password, parts["ipv4host"] or parts["ipv6host"],
                    None if parts["port"] is None else int(parts["port"]), database, query)
