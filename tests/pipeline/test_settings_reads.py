"""Only the settings package reads ``EVALOPS_*`` variables, and the settings table names exactly the ones it
reads.

A module names an ``EVALOPS_*`` variable in order to read it (``os.environ.get``, ``in os.environ``, a
prefix scan, a click ``envvar``...), so the check is on names: outside the settings package ``evalops/config`` no code (any
string but a docstring, f-string parts included) may be a variable name or the prefix itself, except a key
of a literal dict, which *sets* a variable for a child process or a settings load. A variable that a user
names in a setting (a retriever's ``auth: {env: VAR}``, ``alerting.webhook_env``) is read where it is used,
by that setting's value, and is not named in the code.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from evalops import config
from evalops.config import Config, load_config, settings_table

NAME = re.compile(r"EVALOPS_[A-Z0-9_]*")
SETTINGS_PACKAGE = Path("evalops/config")
# List-valued contract rules are set in evalops.yaml: a nested environment variable does not decode a list
# into a rules dataclass yet (pydantic-settings decodes JSON for model fields only).
NESTED_LISTS = ("rules.required_types", "rules.no_answer_share", "rules.allowed_grades")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def named_variables(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` of every ``EVALOPS_*`` name (or the bare prefix) the code of ``source`` holds,
    docstrings and keys of literal dicts left out."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            skip.update(id(k) for k in node.keys if isinstance(k, ast.Constant))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            and NAME.fullmatch(node.value)]


def test_the_check_sees_the_ways_a_variable_is_read():
    reads = '''
import os
a = os.environ.get("EVALOPS_A")
b = os.environ["EVALOPS_B"]
c = "EVALOPS_C" in os.environ
d = [k for k in os.environ if k.startswith("EVALOPS_")]
e = f"EVALOPS_{'X'}"
VAR = "EVALOPS_F"
'''
    assert sorted(n for _, n in named_variables(reads)) == ["EVALOPS_", "EVALOPS_", "EVALOPS_A", "EVALOPS_B",
                                                             "EVALOPS_C", "EVALOPS_F"]
    writes = '''
"""Reads EVALOPS_HOME (a docstring)."""
env = {"EVALOPS_HOME": "/p", "OTHER": "EVALOPS docs"}
message = "set EVALOPS_WAREHOUSE_URL to a URL"
'''
    assert named_variables(writes) == []


def test_only_the_settings_package_reads_evalops_variables(repo_root):
    offenders = []
    for path in sorted((repo_root / "evalops").rglob("*.py")):
        relative = path.relative_to(repo_root)
        if relative.parent == SETTINGS_PACKAGE:
            continue
        for line, name in named_variables(path.read_text(encoding="utf-8")):
            offenders.append(f"{relative}:{line}: {name}")
    assert not offenders, ("read EVALOPS_* variables through evalops.config (process_setting, "
                           "parse_time_settings, project_from_environment, ...):\n" + "\n".join(offenders))


def _table_variables() -> set[str]:
    return set(re.findall(r"`(EVALOPS_[A-Z0-9_]+)`", settings_table()))


def _read_by_the_settings_module(repo_root: Path) -> set[str]:
    """Every variable the settings module can read: the names it holds, and one per field and sub-field."""
    named = {n for path in sorted((repo_root / SETTINGS_PACKAGE).glob("*.py"))
             for _, n in named_variables(path.read_text(encoding="utf-8"))}
    named |= {var for _key, var, _default, _doc in config.iter_settings()}
    named.discard("EVALOPS_")
    # the default of alerting.webhook_env names a secret's variable: read where the alert is sent
    named.discard(Config.model_fields["alerting"].default_factory().webhook_env)
    named.discard(Config.model_fields["alerting"].default_factory().pagerduty_key_env)  # likewise
    return named


def test_every_variable_the_code_reads_is_in_the_settings_table(repo_root):
    missing = _read_by_the_settings_module(repo_root) - _table_variables()
    assert not missing, f"not in the settings table: {sorted(missing)}"


def _a_valid_other_value(key: str, default):
    special = {"alert_measures": "nDCG@10", "measures": "nDCG@10,P@5", "gold_sets": '{"extra": {"path": "g"}}',
               "regression.margins": '{"P@5": 0.03}', "regression.min_delta": "0.02", "task_timeouts": '{"score": 5}',
               "judge.kind": "lexical", "judge.output_mode": "text", "gold_set.default_type": "keyword",
               "alerting.email_to": "a@example.org", "regression.min_effect": None,
               "gold_set.rules.required_types": '["semantic"]', "gold_set.rules.no_answer_share": "[0.0, 0.5]",
               "gold_set.rules.allowed_grades": "[0, 1]", "knowledge_base.rules.max_empty_share": "0.5",
               "warehouse_url": "sqlite:////tmp/elsewhere.db", "judge.agreement_threshold": "0.5",
               "run_lease_seconds": "100", "judge.max_tokens_per_run": "1000", "judge.max_cost_per_run": "5",
               "memory_budget": "512MB", "context_measures": "Tokens@10", "span_measures": "TokenIoU@10",
               "chunk_measures": "nDCG@10", "max_line_length": "1MB", "knowledge_base.sources.max_share_shift": "0.2",
               "mlflow.tracking_uri": "https://mlflow.example", "knowledge_base.long_document_percentile": "80",
               "max_decompressed_size": "2GB", "judge.base_url": "https://judge.example/v1",
               "regression.max_judged_coverage_drop": "0.2", "gold_set.floors": '{"nDCG@10": 0.3}',
               "gold_set.floor_on": "lower_bound", "gold_set.floor_severity": "warning",
               "alerting.fail_on": "regression,inconclusive", "alerting.webhook_format": "teams",
               "alerting.pagerduty_url": "https://events.eu.pagerduty.com/v2/enqueue"}
    if key in special:
        return special[key]
    if isinstance(default, bool):
        return str(not default).lower()
    if isinstance(default, (int, float)):
        if isinstance(default, int) or default >= 1:
            return str(default + 1)
        return str(default / 2 if default > 0 else 0.5)
    return "a-value"


def test_every_variable_in_the_settings_table_is_read(tmp_path):
    """Each variable of the table, set alone to a valid value, changes its setting in the loaded Config."""
    not_read = []
    for key, var, default, _doc in config.iter_settings():
        value = _a_valid_other_value(key, default)
        if value is None or key.endswith(NESTED_LISTS):
            continue  # a removed setting, refused when given (tested with the policy); see NESTED_LISTS
        # a gold set's sub-keys need the gold set; compare with the same set and no other change
        base = {"EVALOPS_GOLD_SET__PATH": "gold"} if key.startswith("gold_set.") and key != "gold_set.path" else {}
        before = _dig(load_config(tmp_path, environ=base), key)
        if _dig(load_config(tmp_path, environ={**base, var: value}), key) == before:
            not_read.append(var)
    assert not not_read, f"in the settings table but not read: {not_read}"
    # the variables that say where the settings are
    (tmp_path / "other.yaml").write_text("k: 7\n", encoding="utf-8")
    assert load_config(environ={"EVALOPS_HOME": str(tmp_path)}).home == tmp_path.resolve()
    assert load_config(tmp_path, environ={"EVALOPS_CONFIG": "other.yaml"}).k == 7
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "EVALOPS_WAREHOUSE_URL").write_text("sqlite:////tmp/from-secret.db\n", encoding="utf-8")
    assert load_config(tmp_path, environ={"EVALOPS_SECRETS_DIR": str(secrets)}).warehouse_url == \
        "sqlite:////tmp/from-secret.db"
    assert {"EVALOPS_HOME", "EVALOPS_CONFIG", "EVALOPS_SECRETS_DIR"} <= _table_variables()


def _dig(cfg, key: str):
    node = cfg
    for part in key.split("."):
        if node is None:
            return None
        node = getattr(node, part) if not isinstance(node, dict) else node.get(part)
    return node


@pytest.mark.parametrize("env, wins", [
    ({"EVALOPS_WAREHOUSE_URL": "sqlite:////tmp/env.db"}, "sqlite:////tmp/env.db"),
    ({}, "sqlite:////tmp/from-secret.db"),
])
def test_the_environment_wins_over_the_secrets_directory(tmp_path, env, wins):
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "EVALOPS_WAREHOUSE_URL").write_text("sqlite:////tmp/from-secret.db", encoding="utf-8")
    (tmp_path / "evalops.yaml").write_text("warehouse_url: sqlite:////tmp/yaml.db\n", encoding="utf-8")
    environ = {"EVALOPS_SECRETS_DIR": str(secrets), **env}
    assert load_config(tmp_path, environ=environ).warehouse_url == wins
    assert config.process_setting("warehouse_url", environ) == wins


def test_a_missing_secrets_directory_is_named(tmp_path):
    with pytest.raises(config.ConfigError, match="EVALOPS_SECRETS_DIR: .*nowhere is not a folder"):
        load_config(tmp_path, environ={"EVALOPS_SECRETS_DIR": str(tmp_path / "nowhere")})
