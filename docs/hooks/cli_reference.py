"""MkDocs hook: ``<!-- cli-reference -->`` in a page becomes the ``--help`` of every ``evalops`` command,
generated from the click commands at build time, so the reference cannot drift from the code."""

from __future__ import annotations

MARKER = "<!-- cli-reference -->"
WIDTH = 110


def _sections(command, path: list[str], parent) -> list[str]:
    import click

    ctx = click.Context(command, info_name=path[-1], parent=parent, terminal_width=WIDTH, max_content_width=WIDTH)
    title = " ".join(path)
    out = [f"{'#' * min(len(path) + 1, 4)} `{title}`", "", "```text", command.get_help(ctx).rstrip(), "```", ""]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            out += _sections(command.get_command(ctx, name), [*path, name], ctx)
    return out


def reference() -> str:
    from evalops.cli import main

    return "\n".join(_sections(main, ["evalops"], None))


def on_page_markdown(markdown: str, **_: object) -> str:
    return markdown.replace(MARKER, reference()) if MARKER in markdown else markdown
