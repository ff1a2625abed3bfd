#!/usr/bin/env bash
# Creates the two databases of an evalops deployment, each with its own owner role:
#   AIRFLOW_DB_NAME (default airflow)    owned by AIRFLOW_DB_USER (default airflow)   - Airflow metadata
#   WAREHOUSE_DB_NAME (default evalops)  owned by WAREHOUSE_DB_USER (default evalops) - evalops warehouse
# The postgres image runs it once, when its data volume is first initialised (/docker-entrypoint-initdb.d).
# Passwords come from AIRFLOW_DB_PASSWORD and WAREHOUSE_DB_PASSWORD; psql quotes every value itself.
set -euo pipefail

: "${AIRFLOW_DB_PASSWORD:?set AIRFLOW_DB_PASSWORD}"
: "${WAREHOUSE_DB_PASSWORD:?set WAREHOUSE_DB_PASSWORD}"

psql -v ON_ERROR_STOP=1 --no-psqlrc --username "${POSTGRES_USER:-postgres}" --dbname postgres \
  -v airflow_db="${AIRFLOW_DB_NAME:-airflow}" -v airflow_user="${AIRFLOW_DB_USER:-airflow}" \
  -v airflow_password="${AIRFLOW_DB_PASSWORD}" \
  -v warehouse_db="${WAREHOUSE_DB_NAME:-evalops}" -v warehouse_user="${WAREHOUSE_DB_USER:-evalops}" \
  -v warehouse_password="${WAREHOUSE_DB_PASSWORD}" <<'SQL'
CREATE ROLE :"airflow_user" LOGIN PASSWORD :'airflow_password';
CREATE DATABASE :"airflow_db" OWNER :"airflow_user";
CREATE ROLE :"warehouse_user" LOGIN PASSWORD :'warehouse_password';
CREATE DATABASE :"warehouse_db" OWNER :"warehouse_user";
-- Each role reaches its own database only.
REVOKE CONNECT ON DATABASE :"airflow_db" FROM PUBLIC;
REVOKE CONNECT ON DATABASE :"warehouse_db" FROM PUBLIC;
SQL
