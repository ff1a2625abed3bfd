"""YAML loading that remembers where every mapping and key came from, for errors that name the line."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from evalops.yamlfile import BoundedLoader, read_settings_text
from evalops.errors import ConfigError

__all__ = ["Marked", "load_marked"]


class Marked(dict):
    """A mapping from YAML that knows its own line and the line of each key (1-based)."""

    line: int = 0
    key_lines: dict[Any, int]

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class _Loader(BoundedLoader):  # bounded alias expansion: a params.body alias bomb is refused
    pass


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> Marked:
    loader.flatten_mapping(node)
    out = Marked()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if key in out.key_lines:
            raise ConfigError(f"{loader.name}:{line}: key {key!r} is repeated (first on line {out.key_lines[key]})")
        out.key_lines[key] = line
        out[key] = loader.construct_object(value_node, deep=True)
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_marked(path: str | os.PathLike[str]) -> Any:
    """Parse ``path``; a YAML syntax error becomes a ConfigError with the file and line."""
    p = Path(path)
    text = read_settings_text(p)  # a regular file, bounded in size
    loader = _Loader(text)
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
