"""docker-compose.yaml, checked with no Docker engine: Debian's docker-compose v1 ``config -q`` plus structure.

There is no engine on CI machines, so nothing is built or started here; ``config`` resolves interpolation,
anchors, profiles and the compose schema, which is where a deployment file usually breaks.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yaml"
ENV_EXAMPLE = REPO / ".env.example"

AIRFLOW_SERVICES = {"airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer"}
CELERY_SERVICES = {"redis", "airflow-worker"}
# ${NAME:?message} is required; $${NAME} is escaped (the container's shell expands it), so not a reference.
REQUIRED = re.compile(r"(?<!\$)\$\{(\w+):\?[^}]*\}")
REFERENCE = re.compile(r"(?<!\$)\$\{(\w+)(?:[:?-][^}]*)?\}")
SECRET_NAME = re.compile(r"(PASSWORD|SECRET|SECRET_KEY|FERNET_KEY|TOKEN|WEBHOOK_URL)$")
URL_PASSWORD = re.compile(r"://[^/:@]*:([^/@]+)@")


def _compose_text() -> str:
    """The compose file without its comments (they quote ``${NAME:?...}`` as documentation)."""
    return "\n".join(line for line in COMPOSE.read_text().splitlines() if not line.lstrip().startswith("#"))


def _compose() -> dict:
    return yaml.safe_load(_compose_text())


def _example() -> dict[str, str]:
    pairs = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value.strip()
    return pairs


def _docker_compose() -> str:
    binary = shutil.which("docker-compose")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("docker-compose is not installed in CI; .ci/run installs Debian's docker-compose")
        pytest.skip("Debian's docker-compose (v1) is not installed; `apt-get install docker-compose`")
    return binary


def _env_file(tmp_path: Path, **overrides: str) -> Path:
    """``.env.example`` with every empty value filled by a random URL-safe secret, then ``overrides``."""
    values = {k: (v or secrets.token_hex(12)) for k, v in _example().items()}
    values.update(overrides)
    path = tmp_path / "test.env"
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return path


def _config(env_file: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # The compose variables are dropped from the environment, where they would win over the env file.
    names = set(_example()) | set(REFERENCE.findall(_compose_text()))
    env = {k: v for k, v in os.environ.items() if k not in names and not k.startswith("COMPOSE_")}
    return subprocess.run(
        [_docker_compose(), "--env-file", str(env_file), "-f", str(COMPOSE), *args],
        capture_output=True, text=True, env=env, timeout=60, cwd=REPO,
    )


# -- docker-compose config ---------------------------------------------------------------------------


@pytest.mark.parametrize("executor, profiles", [("LocalExecutor", ""), ("CeleryExecutor", "celery")])
def test_docker_compose_config_accepts_the_file(tmp_path, executor, profiles):
    result = _config(_env_file(tmp_path, AIRFLOW_EXECUTOR=executor, COMPOSE_PROFILES=profiles), "config", "-q")
    assert result.returncode == 0, result.stderr


def test_docker_compose_config_renders_the_secrets_from_the_env_file(tmp_path):
    env_file = _env_file(tmp_path, WAREHOUSE_DB_PASSWORD="w4rehouse", WAREHOUSE_DB_HOST="db.example.internal")
    result = _config(env_file, "config")
    assert result.returncode == 0, result.stderr
    rendered = yaml.safe_load(result.stdout)
    env = rendered["services"]["airflow-scheduler"]["environment"]
    assert env["EVALOPS_WAREHOUSE_URL"] == "postgresql+psycopg://evalops:w4rehouse@db.example.internal:5432/evalops"
    assert env["AIRFLOW__CORE__LOAD_EXAMPLES"] == "false"


@pytest.mark.parametrize("secret", sorted(set(REQUIRED.findall(_compose_text()))))
def test_a_missing_secret_stops_docker_compose(tmp_path, secret):
    result = _config(_env_file(tmp_path, **{secret: ""}), "config", "-q")
    assert result.returncode != 0, f"docker-compose accepted an empty {secret}"
    assert secret in result.stderr


# -- structure -------------------------------------------------------------------------------------


def test_services_are_the_airflow_components_postgres_and_the_init_job():
    services = _compose()["services"]
    assert set(services) == AIRFLOW_SERVICES | CELERY_SERVICES | {"postgres", "airflow-init"}
    for name in AIRFLOW_SERVICES | {"airflow-init", "airflow-worker"}:
        assert services[name]["image"] == services["airflow-init"]["image"], f"{name} uses another image"
        assert services[name]["build"] == ".", f"{name} must build the project's Dockerfile"


def test_every_long_running_service_has_a_healthcheck_and_waits_for_the_init_job():
    services = _compose()["services"]
    for name, service in services.items():
        if name == "airflow-init":
            assert service["restart"] == "no" and "healthcheck" not in service
            continue
        check = service.get("healthcheck", {})
        assert check.get("test") and check.get("interval"), f"{name} has no healthcheck"
    for name in AIRFLOW_SERVICES | {"airflow-worker"}:
        depends = services[name]["depends_on"]
        assert depends["airflow-init"] == {"condition": "service_completed_successfully"}, name
        assert depends["postgres"] == {"condition": "service_healthy"}, name
    assert services["airflow-worker"]["depends_on"]["redis"] == {"condition": "service_healthy"}


def test_the_celery_profile_holds_exactly_the_broker_and_the_worker():
    services = _compose()["services"]
    profiled = {name for name, s in services.items() if s.get("profiles")}
    assert profiled == CELERY_SERVICES
    assert all(services[name]["profiles"] == ["celery"] for name in CELERY_SERVICES)
    env = services["airflow-scheduler"]["environment"]
    assert env["AIRFLOW__CORE__EXECUTOR"] == "${AIRFLOW_EXECUTOR:-LocalExecutor}"
    assert env["AIRFLOW__CELERY__BROKER_URL"].endswith("@redis:6379/0")


def test_airflow_runs_the_project_dags_and_include_with_examples_off():
    services = _compose()["services"]
    for name in AIRFLOW_SERVICES | {"airflow-init", "airflow-worker"}:
        service = services[name]
        env = service["environment"]
        assert env["AIRFLOW__CORE__LOAD_EXAMPLES"] == "false", name
        assert env["AIRFLOW__CORE__DAGS_FOLDER"] == "/opt/evalops/dags", name
        assert env["EVALOPS_HOME"] == "/opt/evalops", name
        assert "./dags:/opt/evalops/dags:ro" in service["volumes"], name
        assert "./include:/opt/evalops/include:ro" in service["volumes"], name
        # Mapped score shards hand their results to compare through this folder: one volume for all.
        assert f"evalops-work:{env['EVALOPS_WORK_DIR']}" in service["volumes"], name
    command = services["airflow-init"]["command"]
    assert command == ["bash", "/opt/evalops/deploy/airflow-init.sh"]
    init_script = (REPO / "deploy" / "airflow-init.sh").read_text()
    for step in ("airflow db migrate", "evalops db upgrade", "AIRFLOW_ADMIN_PASSWORD"):
        assert step in init_script


def test_metadata_and_warehouse_are_separate_databases():
    services = _compose()["services"]
    env = services["airflow-scheduler"]["environment"]
    metadata = env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    warehouse = env["EVALOPS_WAREHOUSE_URL"]
    assert metadata.startswith("postgresql+psycopg://")
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"].startswith("postgresql+psycopg_async://")
    assert metadata.rsplit("/", 1)[1] == "${AIRFLOW_DB_NAME:-airflow}"
    assert warehouse.rsplit("/", 1)[1] == "${WAREHOUSE_DB_NAME:-evalops}"
    assert "./deploy/postgres:/docker-entrypoint-initdb.d:ro" in services["postgres"]["volumes"]


def _environments(compose: dict):
    for name, service in compose["services"].items():
        for key, value in (service.get("environment") or {}).items():
            yield name, key, str(value)


def test_no_secret_is_written_inline():
    required = set(REQUIRED.findall(_compose_text()))
    for service, key, value in _environments(_compose()):
        where = f"{service}: {key}={value}"
        if SECRET_NAME.search(key):
            assert re.fullmatch(r"\$\{\w+:[?-][^}]*\}", value), f"secret not taken from the environment: {where}"
        # Each ${VAR...} becomes <VAR>, so a URL's password is either one required variable or inline text.
        masked = REFERENCE.sub(lambda m: f"<{m.group(1)}>", value)
        for password in URL_PASSWORD.findall(masked):
            match = re.fullmatch(r"<(\w+)>", password)
            assert match and match.group(1) in required, f"inline or optional password in a URL: {where}"
    # The healthchecks and commands reference secrets only through the container's environment.
    assert not re.search(r"requirepass\s+[^\s\"$]", _compose_text())


def test_env_example_lists_every_variable_and_commits_no_secret():
    example = _example()
    referenced = set(REFERENCE.findall(_compose_text()))
    assert referenced - set(example) == set(), "variables the compose file reads but .env.example omits"
    assert set(example) - referenced - {"COMPOSE_PROFILES"} == set(), ".env.example lists unused variables"
    committed = {k: v for k, v in example.items() if SECRET_NAME.search(k) and v}
    assert committed == {}, "secrets must be blank in .env.example"
    assert ".env" in (REPO / ".gitignore").read_text().splitlines()
