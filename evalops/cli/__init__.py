"""The ``evalops`` command line. The only package that imports click and rich.

Each sub-command lives in its own module here and is loaded only when it is used, so ``evalops --help``
and ``evalops evaluate`` stay fast (no Airflow, Great Expectations or SQLAlchemy at start-up).
"""

from __future__ import annotations

import importlib
import importlib.util

import click

from evalops.cli import _common

# command name -> "module:attribute" inside evalops.cli
COMMANDS: dict[str, str] = {
    "evaluate": "evaluate:evaluate",
    "compare": "compare:compare",
    "power": "compare:power",
    "db": "db:db",
    "history": "db:history",
    "promote": "db:promote",
    "validate": "validate:validate",
    "snapshot": "validate:snapshot",
    "sample-logs": "validate:sample_logs",
    "retrieve": "retrieve:retrieve",
    "retrievers": "retrieve:retrievers",
    "init": "init:init",
    "run": "pipeline:run",
    "gate": "gate:gate",
    "demo": "pipeline:demo",
    "report": "pipeline:report",
    "alerts": "alerts:alerts",
    "dashboard": "dashboard:dashboard",
    "generate-queries": "generate:generate_queries",
    "gold": "gold:gold",
}


def _module_exists(spec: str) -> bool:
    module = spec.split(":", 1)[0]
    return importlib.util.find_spec(f"evalops.cli.{module}") is not None


class _LazyGroup(click.Group):
    def main(self, args=None, *rest, **kwargs):  # type: ignore[no-untyped-def, override]
        if args is None:  # the command line's own arguments: this process is the command's
            _common.OWNS_PROCESS = True
        return super().main(args, *rest, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name, spec in COMMANDS.items() if _module_exists(spec))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name)
        if spec is None or not _module_exists(spec):
            return None
        module_name, attr = spec.split(":", 1)
        module = importlib.import_module(f"evalops.cli.{module_name}")
        return getattr(module, attr)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="evalops-rag")  # the distribution (evalops on PyPI is another project)
def main() -> None:
    """evalops: continuous evaluation of RAG retrievers, with numbers that match trec_eval."""
