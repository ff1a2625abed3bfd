"""The one reader of settings YAML (``evalops.yaml``, ``retrievers.yaml``), bounded in size and expansion.

Settings files are small and written by people, so anything else is refused with a ``ConfigError`` naming
the file before it can hang or exhaust a run:

* a path that is not a regular file (``EVALOPS_CONFIG=/dev/zero`` read forever; a FIFO blocks);
* a file over :data:`MAX_BYTES` (only that much plus one byte is ever read);
* aliases that expand the document by more than :data:`MAX_ALIAS_EXPANSION` nodes. A "billion laughs"
  file is a few hundred bytes whose aliases PyYAML composes cheaply as shared nodes, but every consumer
  that walks the values (pydantic, masking, a JSON request body) expands them, for minutes and then a
  ``MemoryError``. The expanded size is counted on the composed node graph (linear in the file), and a
  recursive alias is refused too.

:class:`BoundedLoader` is a ``yaml.SafeLoader`` with that check. :func:`load_marked` reads a settings file
into :class:`Marked` mappings that know the line of each key, so that an error names the line; it is the one
reader whose errors point into the file (the settings and the retriever registry). :func:`load_text` reads
text whose lines nobody names (a DAG's parse, the packaged judge prompts).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

from evalops.errors import ConfigError

__all__ = ["MAX_ALIAS_EXPANSION", "MAX_BYTES", "BoundedLoader", "Marked", "load_marked", "load_text",
           "read_settings_text"]

MAX_BYTES = 10 * 1024 * 1024
MAX_ALIAS_EXPANSION = 100_000  # nodes the aliases may add to the document once expanded


def read_settings_text(path: str | os.PathLike[str]) -> str:
    """The text of the settings file ``path``: a regular file of at most :data:`MAX_BYTES` UTF-8 bytes."""
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise ConfigError(f"{p}: file not found") from None
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read it ({exc.strerror})") from None
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a device, pipe or socket"
        raise ConfigError(f"{p}: is {kind}, not a regular file; settings are read from a YAML file on disk")
    try:
        with open(p, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read it ({exc.strerror})") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{p}: larger than {MAX_BYTES // (1024 * 1024)} MB, far more than a settings file "
                          "holds; check that this is the right file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None


def _expanded_size(root: yaml.Node, name: str) -> tuple[int, int]:
    """(nodes once every alias is expanded, distinct nodes) of a composed document."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    # Iterative post-order walk: a deeply nested file must not hit Python's recursion limit.
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            if size[key] > MAX_ALIAS_EXPANSION + len(size):
                raise ConfigError(f"{name}:{node.start_mark.line + 1}: YAML aliases here expand to more than "
                                  f"{MAX_ALIAS_EXPANSION:,} extra values (an alias bomb?); write the values out "
                                  "or use fewer aliases")
            continue
        if key in size:
            continue
        if key in on_path:
            raise ConfigError(f"{name}:{node.start_mark.line + 1}: a YAML alias refers to the node that holds it "
                              "(a recursive alias); settings cannot be infinite")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)
    return size[id(root)], len(size)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a document whose aliases expand it by more than
    :data:`MAX_ALIAS_EXPANSION` nodes, or that refers to itself, before anything is constructed."""

    def compose_document(self) -> Any:
        node = super().compose_document()
        if node is not None:
            _expanded_size(node, getattr(self, "name", "<settings>"))
        return node


def load_text(text: str, name: str) -> Any:
    """The Python value of the YAML ``text`` (``name`` is the file in messages). ``yaml.YAMLError``
    propagates (the caller names the line its own way); a bomb is a ``ConfigError``."""
    loader = BoundedLoader(text)
    loader.name = name
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


class Marked(dict):
    """A mapping from YAML that knows its own line and the line of each key (1-based)."""

    line: int = 0
    key_lines: dict[Any, int]

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class _MarkedLoader(BoundedLoader):
    pass


def _construct_mapping(loader: _MarkedLoader, node: yaml.MappingNode) -> Marked:
    loader.flatten_mapping(node)
    out = Marked()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if key in out.key_lines:  # YAML would keep the last silently
            raise ConfigError(f"{loader.name}:{line}: key {key!r} is repeated (first on line {out.key_lines[key]}); "
                              "keep one")
        out.key_lines[key] = line
        out[key] = loader.construct_object(value_node, deep=True)
    return out


_MarkedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_marked(path: str | os.PathLike[str]) -> Any:
    """The YAML file ``path`` (read by :func:`read_settings_text`), its mappings :class:`Marked`; a YAML
    syntax error, a repeated key or an alias bomb is a ``ConfigError`` naming the file and line."""
    p = Path(path)
    loader = _MarkedLoader(read_settings_text(p))
    loader.name = str(p)
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{p}{line}: not valid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{p}: not valid YAML: {exc}") from None
    finally:
        loader.dispose()
