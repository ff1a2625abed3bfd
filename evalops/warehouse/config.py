"""Where the warehouse lives, and engines that behave the same on SQLite and PostgreSQL.

The URL is resolved in this order (the first that applies wins; ``resolve_url`` says which one did):

1. the setting ``warehouse_url`` as the process gives it (``EVALOPS_WAREHOUSE_URL``, or its file in the
   secrets directory; any SQLAlchemy URL; ``postgresql://`` means the psycopg 3 driver);
2. the Airflow connection ``evalops_warehouse``, looked up through Airflow (so secrets backends and
   ``AIRFLOW_CONN_EVALOPS_WAREHOUSE`` both work), by evalops' one connection reader
   (:func:`evalops.util.secrets.read_connection`): only inside an Airflow process (``airflow`` already
   imported) or when ``AIRFLOW_CONN_EVALOPS_WAREHOUSE`` is set, and only when Airflow is installed;
3. SQLite at ``.evalops/warehouse.db`` under the current directory (the folder is created).

Timeouts, so that a warehouse that accepts connections and never answers cannot block a run (each is a
setting of :mod:`evalops.config` read from the environment, in seconds; a value already in the URL's
query string wins):

================================  ======================================  =======
what                              variable                                default
================================  ======================================  =======
connect (PostgreSQL)              ``EVALOPS_WAREHOUSE_CONNECT_TIMEOUT``   10
one statement (PostgreSQL)        ``EVALOPS_WAREHOUSE_STATEMENT_TIMEOUT`` 600
idle in a transaction (PostgreSQL) ``EVALOPS_WAREHOUSE_IDLE_TIMEOUT``     600
waiting for a lock (SQLite busy   ``EVALOPS_WAREHOUSE_BUSY_TIMEOUT``      60
timeout; PostgreSQL lock_timeout)
================================  ======================================  =======

Those are the server's timeouts; a PostgreSQL server that stops answering (or a proxy in between that
keeps the connection open) never sends their error. So on PostgreSQL the client bounds every wait too
(:mod:`evalops.warehouse._deadline`: the statement timeout + 5 s, then the connection is closed and the
write fails with a ``WarehouseError`` naming the server), and the connections use TCP keepalives
(``keepalives_idle`` 30 s, ``keepalives_interval`` 10 s, ``keepalives_count`` 3) and ``tcp_user_timeout``
(the client deadline), so a peer that vanished is noticed on an idle pooled connection too.

Supported backends: PostgreSQL (psycopg 3) and SQLite. Both support ``ON CONFLICT`` upserts and partial
unique indexes, which idempotent writes and the one-current-baseline rule depend on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalops.config import process_number  # the import-light part: no settings object (nor pydantic) to make an engine
from evalops.config.env import DEFAULT_SQLITE_PATH
from evalops.errors import ConfigError
from evalops.util.extras import require
from evalops.util.secrets import ConnectionFields, mask_url, resolve_secret
from evalops.util.storage import make_folder
from evalops.warehouse._deadline import client_deadline, install_deadline
from evalops.warehouse._url import URLError, URLParts, parse_url

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

__all__ = [
    "AIRFLOW_CONN_ID",
    "DEFAULT_SQLITE_PATH",
    "WarehouseURL",
    "create_warehouse_engine",
    "normalise_url",
    "resolve_url",
    "url_for",
]

AIRFLOW_CONN_ID = "evalops_warehouse"


def warehouse_timeout(name: str) -> float:
    """The warehouse timeout ``name`` (``connect``, ``statement``, ``idle`` or ``busy``), in seconds: the
    setting ``warehouse_<name>_timeout`` as the process's environment gives it (see :mod:`evalops.config`)."""
    return process_number(f"warehouse_{name}_timeout")


# TCP keepalives of a warehouse connection (libpq parameters; a value in the URL wins): an idle connection
# whose peer vanished is found dead within about idle + interval x count seconds.
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}


def _postgres_connect_args(parsed: Any, given: dict[str, Any]) -> dict[str, Any]:
    """libpq's connect_timeout, TCP keepalives and tcp_user_timeout (the client deadline), and the
    server-side statement, idle-in-transaction and lock timeouts."""
    args = dict(given)
    query = parsed.query
    if "connect_timeout" not in query and "connect_timeout" not in args:
        args["connect_timeout"] = max(1, round(warehouse_timeout("connect")))
    options = [args.get("options") or query.get("options") or ""]
    for setting, name in (("statement_timeout", "statement"), ("idle_in_transaction_session_timeout", "idle"),
                          ("lock_timeout", "busy")):
        if setting not in options[0]:
            options.append(f"-c {setting}={int(warehouse_timeout(name) * 1000)}")
    args["options"] = " ".join(o for o in options if o)
    deadline = _client_deadline(args["options"])
    extra = {**KEEPALIVES, **({"tcp_user_timeout": int(deadline * 1000)} if deadline is not None else {})}
    for name, value in extra.items():
        if name not in query and name not in args:
            args[name] = value
    return args


def _client_deadline(options: str) -> float | None:
    return client_deadline(options, warehouse_timeout("statement"))


def postgres_connect_args(parsed: Any, given: dict[str, Any]) -> tuple[dict[str, Any], float | None, str]:
    """The connect arguments of a PostgreSQL warehouse (``parsed``: its URL's parts; ``given``: the caller's
    own), the client deadline of every wait in seconds (None: none), and where its statement timeout came
    from (for the deadline's message): what an engine and a driver-only reader both connect with."""
    args = _postgres_connect_args(parsed, given)
    in_url = "statement_timeout" in f"{parsed.query.get('options') or ''} {given.get('options') or ''}"
    source = ("the statement timeout in the URL's options" if in_url
              else "the statement timeout from EVALOPS_WAREHOUSE_STATEMENT_TIMEOUT")
    return args, _client_deadline(args["options"]), source


@dataclass(frozen=True)
class WarehouseURL:
    url: str
    source: Literal["env", "airflow", "default"]

    def masked(self) -> str:
        """The URL with any password hidden, for logs and ``evalops db current``."""
        return parse_url(self.url).render(hide_password=True)

    def parts(self) -> URLParts:
        """The URL's parts (user, password, host, port, database, query)."""
        return parse_url(self.url)


def normalise_url(url: str) -> str:
    """Pin the PostgreSQL driver to psycopg 3 and refuse backends the warehouse does not support (the URL
    parsed and written as SQLAlchemy does, :mod:`evalops.warehouse._url`, without importing it)."""
    if not isinstance(url, str):  # a SQLAlchemy URL object, as make_url took it
        url = url.render_as_string(hide_password=False)
    try:
        parsed = parse_url(url)
    except URLError as exc:
        raise ConfigError(f"warehouse URL {mask_url(url)!r} is not a valid SQLAlchemy URL: {exc}") from None
    except ValueError:  # SQLAlchemy reads the port as an int
        raise ConfigError(f"warehouse URL {mask_url(url)!r}: the port is not a number; write it like "
                          "postgresql+psycopg://user@host:5432/database") from None
    backend = parsed.backend()
    if backend in ("postgresql", "postgres"):
        parsed = parsed.with_driver("postgresql+psycopg")
    elif backend != "sqlite":
        raise ConfigError(
            f"warehouse URL {parsed.render(hide_password=True)!r}: backend {backend!r} is not "
            "supported; use postgresql+psycopg://... or sqlite:///path"
        )
    return parsed.render(hide_password=False)


def _airflow_connection_url() -> str | None:
    return resolve_secret("the warehouse", conn_id=AIRFLOW_CONN_ID, named=False, from_connection=connection_url).value


def connection_url(conn: ConnectionFields) -> str:
    """The warehouse URL an Airflow connection describes (``evalops_warehouse``, ``postgres`` or ``sqlite``)."""
    from sqlalchemy.engine import URL

    conn_type = conn.conn_type
    if conn_type == "evalops_warehouse":  # the provider's type: a whole URL in its form field, else PostgreSQL
        extra = conn.extra
        given = extra.get("url") or extra.get("extra__evalops_warehouse__url")
        if given:
            return str(given)
    if conn_type in ("postgres", "postgresql", "evalops_warehouse"):
        url = URL.create(
            "postgresql+psycopg",
            username=conn.login or None,
            password=conn.password or None,
            host=conn.host or None,
            port=conn.port or None,
            database=conn.schema or None,
        )
        return url.render_as_string(hide_password=False)
    if conn_type == "sqlite":
        # A JSON/UI connection keeps the file path in ``host``; a ``sqlite:////path`` URI leaves it in ``schema``.
        path = conn.host or conn.schema
        if not path:
            raise ConfigError(f"Airflow connection {AIRFLOW_CONN_ID!r} is a sqlite connection without a file path")
        return f"sqlite:///{path}"
    raise ConfigError(
        f"Airflow connection {AIRFLOW_CONN_ID!r} has type {conn.conn_type!r}; the warehouse needs a "
        "postgres or sqlite connection (or the evalops provider's evalops_warehouse type)"
    )


def resolve_url(url: str | None = None) -> WarehouseURL:
    """The warehouse URL and where it came from (an explicit ``url`` argument counts as ``env``)."""
    if url:  # the settings object (pydantic) is imported only to read the setting
        return WarehouseURL(normalise_url(url), "env")
    from evalops.config import process_setting

    explicit = process_setting("warehouse_url")
    if explicit:
        return WarehouseURL(normalise_url(explicit), "env")
    from_airflow = _airflow_connection_url()
    if from_airflow:
        return WarehouseURL(normalise_url(from_airflow), "airflow")
    path = Path.cwd() / DEFAULT_SQLITE_PATH
    return WarehouseURL(f"sqlite:///{path}", "default")


def url_for(cfg: Any) -> str:
    """The warehouse URL of a project's settings (:class:`evalops.config.Config`): its ``warehouse_url``,
    else the Airflow connection, else SQLite in the project's ``.evalops/`` folder."""
    if cfg.warehouse_url:
        return resolve_url(cfg.warehouse_url).url
    resolved = resolve_url()
    if resolved.source == "default":
        return f"sqlite:///{cfg.home / DEFAULT_SQLITE_PATH}"
    return resolved.url


def create_warehouse_engine(url: str | WarehouseURL | None = None, *, must_exist: bool = False,
                            **kwargs: Any) -> Engine:
    """An Engine for the warehouse.

    ``must_exist``: a reader's engine (the dashboard): a SQLite file that does not exist is a
    :class:`ConfigError` naming it, and neither the file nor its folder is created.

    On PostgreSQL: a connect timeout, statement, idle-in-transaction and lock timeouts, TCP keepalives and a
    client deadline on every wait for the server (module docstring).
    On SQLite: foreign keys on, WAL journal, a busy timeout, and every transaction opened with
    ``BEGIN IMMEDIATE`` so that concurrent writers queue for the write lock instead of failing halfway
    (the sqlite3 driver's own deferred BEGIN is switched off); a read-only transaction opens with a deferred
    ``BEGIN`` (the execution option ``evalops_read_only``, set by ``transaction(read_only=True)``). The folder of a file database is created.
    """
    from sqlalchemy import create_engine, event
    from sqlalchemy.engine import make_url

    if isinstance(url, WarehouseURL):
        resolved = url.url
    else:
        resolved = normalise_url(url) if url else resolve_url().url
    parsed = make_url(resolved)
    if parsed.get_backend_name() != "sqlite":
        require("psycopg", "postgres", "use a PostgreSQL warehouse")
        connect_args, deadline, source = postgres_connect_args(parsed, kwargs.pop("connect_args", {}))
        kwargs.setdefault("pool_timeout", warehouse_timeout("connect"))
        engine = create_engine(parsed, pool_pre_ping=True, connect_args=connect_args, **kwargs)
        install_deadline(engine, deadline, source,
                         ping_seconds=float(connect_args.get("connect_timeout") or parsed.query.get("connect_timeout")
                                            or warehouse_timeout("connect")))
        return engine

    database = parsed.database
    in_memory = database in (None, "", ":memory:") or (database or "").startswith("file::memory:")
    if not in_memory:
        path = Path(database).expanduser()
        if must_exist and not path.is_file():
            raise ConfigError(f"the warehouse {path} does not exist; run the retrieval_eval DAG or "
                              "`evalops run` first, or point EVALOPS_HOME / EVALOPS_WAREHOUSE_URL at the project's")
        if not must_exist:
            make_folder(path.parent, f"the folder of the SQLite warehouse {path}")
    busy = warehouse_timeout("busy")
    connect_args = {"timeout": busy, **kwargs.pop("connect_args", {})}
    engine = create_engine(parsed, connect_args=connect_args, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself (below)
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy * 1000)}")
        if not in_memory:
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # a reader's transaction (evalops.warehouse._db.transaction(read_only=True)) takes no write lock
        deferred = connection.get_execution_options().get("evalops_read_only", False)
        connection.exec_driver_sql("BEGIN" if deferred else "BEGIN IMMEDIATE")

    return engine
