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

:class:`BoundedLoader` is a ``yaml.SafeLoader`` with that check; subclass it to add constructors.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

from evalops.errors import ConfigError

__all__ = ["MAX_ALIAS_EXPANSION", "MAX_BYTES", "BoundedLoader", "compose_and_load", "read_settings_text"]

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


def compose_and_load(text: str, name: str, loader: type[BoundedLoader] = BoundedLoader) -> tuple[Any, Any]:
    """``(node, data)``: the composed document (for line numbers) and its Python value, from one parse.
    ``yaml.YAMLError`` propagates (the caller names the line its own way); a bomb is a ``ConfigError``."""
    instance = loader(text)
    instance.name = name
    try:
        node = instance.get_single_node()
        return node, (instance.construct_document(node) if node is not None else None)
    finally:
        instance.dispose()
