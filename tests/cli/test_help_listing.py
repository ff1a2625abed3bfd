"""``evalops --help`` lists the commands from the table in ``evalops.cli``, without importing them."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from evalops.cli import COMMANDS, main


@pytest.mark.parametrize("width", [40, 60, 80, 120, 200])
def test_each_summary_is_its_commands_own_short_help(width):
    ctx = click.Context(main)
    limit = width - 6 - max(map(len, COMMANDS))
    for name, (_spec, summary) in COMMANDS.items():
        command = main.get_command(ctx, name)
        assert command is not None, name
        shown = click.Command(name, help=summary).get_short_help_str(limit)
        assert shown == command.get_short_help_str(limit), f"{name}: update its summary in evalops.cli.COMMANDS"


def test_help_lists_every_command_and_imports_none():
    code = (
        "import sys\n"
        "from evalops.cli import main\n"
        "main(['--help'], standalone_mode=False)\n"
        "print(sorted(m for m in sys.modules if m.startswith('evalops.cli.') and m != 'evalops.cli._common'"
        " or m.split('.')[0] in ('sqlalchemy', 'pandas', 'numpy', 'rich')), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip() == "[]"
    listed = done.stdout.split("Commands:")[1]
    for name in COMMANDS:
        assert f"\n  {name} " in listed
