#!/usr/bin/env bash
# One-shot initialisation for docker-compose (the airflow-init service); safe to run again.
#   1. migrate the Airflow metadata database;
#   2. create the admin: SimpleAuthManager takes its users from AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS
#      and their passwords from the file named by AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE, which
#      is written here from AIRFLOW_ADMIN_PASSWORD (never echoed);
#   3. migrate the evalops warehouse (EVALOPS_WAREHOUSE_URL).
set -euo pipefail

: "${AIRFLOW_ADMIN_PASSWORD:?set AIRFLOW_ADMIN_PASSWORD in .env}"
: "${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE:?the compose file sets the passwords file}"
: "${EVALOPS_WAREHOUSE_URL:?the compose file sets EVALOPS_WAREHOUSE_URL}"

echo "airflow-init: migrating the Airflow metadata database"
airflow db migrate

echo "airflow-init: writing the admin password for ${AIRFLOW_ADMIN_USER:-admin}"
python - <<'PY'
import json, os
from pathlib import Path

path = Path(os.environ["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"])
path.parent.mkdir(parents=True, exist_ok=True)
passwords = json.loads(path.read_text() or "{}") if path.exists() else {}
passwords[os.environ.get("AIRFLOW_ADMIN_USER", "admin")] = os.environ["AIRFLOW_ADMIN_PASSWORD"]
tmp = path.with_suffix(".tmp")
tmp.write_text(json.dumps(passwords) + "\n")
tmp.chmod(0o600)
tmp.replace(path)
PY

echo "airflow-init: migrating the evalops warehouse"
evalops db upgrade

echo "airflow-init: done"
