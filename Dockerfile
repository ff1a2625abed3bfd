# evalops on Airflow 3.3: one image for every service of docker-compose.yaml (and for Kubernetes pods).
#
# The install is the one `make venv` does: uv syncs the hash-checked requirements.lock (the tested set of the
# airflow, gx, postgres, retrievers, wordllama and reports extras) into a virtualenv with its bytecode compiled, then installs
# evalops itself (the evalops-rag distribution) without dependencies. deploy/requirements-celery.lock adds the Celery
# executor (hash-checked, resolved against requirements.lock, so no shared package moves).
#
#   docker compose build            # or: docker build -t evalops-airflow:local .

ARG PYTHON_VERSION=3.11
FROM python:${PYTHON_VERSION}-slim-bookworm

ARG UV_VERSION=0.13.8
ARG AIRFLOW_UID=50000

ENV PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/evalops/.venv \
    PATH=/opt/evalops/.venv/bin:$PATH \
    AIRFLOW_HOME=/opt/airflow \
    EVALOPS_HOME=/opt/evalops

# Group 0 owns the writable folders, so the image also runs under another uid (AIRFLOW_UID, OpenShift).
RUN useradd --uid "${AIRFLOW_UID}" --gid 0 --home-dir /opt/airflow --create-home --shell /bin/bash airflow \
 && mkdir -p /opt/airflow/logs /opt/airflow/auth /opt/evalops/reports /opt/evalops/work /opt/evalops/.evalops \
 && chown -R "${AIRFLOW_UID}:0" /opt/airflow /opt/evalops \
 && chmod -R g+rwX /opt/airflow /opt/evalops

WORKDIR /opt/evalops

# Dependencies first: this layer is rebuilt only when a lock file changes.
COPY requirements.lock ./
COPY deploy/requirements-celery.lock ./deploy/
RUN python -m venv "${VIRTUAL_ENV}" \
 && "${VIRTUAL_ENV}/bin/pip" install --no-cache-dir "uv==${UV_VERSION}" \
 && "${VIRTUAL_ENV}/bin/uv" pip sync --no-cache --require-hashes --compile-bytecode --python "${VIRTUAL_ENV}/bin/python" \
      requirements.lock deploy/requirements-celery.lock

COPY pyproject.toml README.md LICENSE ./
COPY evalops ./evalops
RUN "${VIRTUAL_ENV}/bin/uv" pip install --no-cache --no-deps --python "${VIRTUAL_ENV}/bin/python" . \
 && rm -rf build evalops.egg-info

# Baked in for Kubernetes; docker-compose mounts the working copies over them.
COPY evalops.yaml ./
COPY dags ./dags
COPY include ./include
COPY deploy/airflow-init.sh ./deploy/

USER ${AIRFLOW_UID}:0
CMD ["airflow", "version"]
