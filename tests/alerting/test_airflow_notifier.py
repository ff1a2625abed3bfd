"""EvalopsNotifier: an Airflow callback context becomes one evalops alert, stored then sent; with the
warehouse refusing or never answering, it is sent straight away and says so."""

from __future__ import annotations

import datetime as dt
import threading
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.airflow  # imports airflow.sdk (BaseNotifier)

DAY = dt.datetime(2024, 6, 2, tzinfo=dt.timezone.utc)


@pytest.fixture(autouse=True, scope="module")
def _airflow_home(tmp_path_factory):
    """Airflow reads its home at first import: never the user's ~/airflow."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AIRFLOW_HOME", str(tmp_path_factory.mktemp("airflow_home")))
        yield


class Recorder:
    name = "recorder"

    def __init__(self):
        self.sent = []

    def send(self, alert):
        self.sent.append(alert)


def _context(**ti):
    dag_run = SimpleNamespace(dag_id="retrieval_eval", run_id="scheduled__2024-06-02", logical_date=DAY)
    task = SimpleNamespace(task_id="score", map_index=3, try_number=3, max_tries=2,
                           log_url="http://airflow.example/dags/retrieval_eval/runs/x/tasks/score?try_number=3")
    for k, v in ti.items():
        setattr(task, k, v)
    return {"dag_run": dag_run, "ti": task, "reason": "task_failure"}


@pytest.fixture
def project(tmp_path, monkeypatch):
    for key in [k for k in __import__("os").environ if k.startswith("EVALOPS_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("EVALOPS_WAREHOUSE_URL", f"sqlite:///{tmp_path / 'wh.db'}")
    from evalops.config import load_config
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import upgrade

    upgrade(engine_for(load_config(tmp_path)))
    return tmp_path


def test_the_alert_names_the_task_try_and_log_url():
    from evalops.airflow.notifier import alert_from_context

    alert = alert_from_context(_context())
    assert alert.message.splitlines()[0] == ("retrieval_eval run scheduled__2024-06-02: task score[3] failed "
                                             "(try 3 of 3)")
    assert "log: http://airflow.example/dags/retrieval_eval/runs/x/tasks/score?try_number=3" in alert.message
    assert "reason: task_failure" in alert.message
    assert alert.day == "2024-06-02" and alert.kind == "airflow_failure"


def test_stored_then_sent_once_and_a_second_callback_for_the_same_task_is_not_resent(project):
    from evalops.airflow.notifier import EvalopsNotifier
    from evalops.config import load_config
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import list_alerts

    recorder = Recorder()
    notifier = EvalopsNotifier(project=project, notifiers=[recorder])
    notifier.notify(_context())
    notifier.notify(_context())  # the same failure reported twice (a re-run callback)
    assert len(recorder.sent) == 1
    assert "unreachable" not in recorder.sent[0].message
    stored = list_alerts(engine_for(load_config(project)))
    assert list(stored["kind"]) == ["airflow_failure"] and list(stored["delivery_status"]) == ["delivered"]


def test_a_warehouse_that_refuses_goes_straight_to_the_notifiers(tmp_path, monkeypatch):
    from evalops.airflow.notifier import EvalopsNotifier

    monkeypatch.setenv("EVALOPS_WAREHOUSE_URL", "postgresql+psycopg://nobody@127.0.0.1:9/none?connect_timeout=2")
    recorder = Recorder()
    EvalopsNotifier(project=tmp_path, notifiers=[recorder], store_timeout=60).notify(_context())
    assert len(recorder.sent) == 1
    assert "The evalops warehouse was unreachable (WarehouseError" in recorder.sent[0].message
    assert "Connection refused" in recorder.sent[0].message


def test_a_warehouse_that_never_answers_is_given_up_on_and_a_late_store_is_marked_delivered(project, monkeypatch):
    from evalops.airflow import notifier as airflow_notifier
    from evalops.airflow.notifier import EvalopsNotifier
    from evalops.config import load_config
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import list_alerts

    release = threading.Event()
    real = airflow_notifier._warehouse_store

    def stuck_store(cfg):
        release.wait(120)  # a warehouse that accepts the connection and does not answer
        return real(cfg)

    monkeypatch.setattr(airflow_notifier, "_warehouse_store", stuck_store)
    recorder = Recorder()
    EvalopsNotifier(project=project, notifiers=[recorder], store_timeout=0.5).notify(_context())
    assert len(recorder.sent) == 1
    assert "The evalops warehouse was unreachable (no answer within 0.5 s)" in recorder.sent[0].message
    release.set()  # the warehouse answers after all: the late row must not be sent again later
    engine = engine_for(load_config(project))
    for _ in range(600):
        stored = list_alerts(engine)
        if len(stored) and stored["delivery_status"].iloc[0] == "delivered":
            break
        threading.Event().wait(0.1)
    assert list(stored["delivery_status"]) == ["delivered"]


def test_title_and_message_are_templates_even_with_a_dag_that_has_no_template_environment(project):
    from evalops.airflow.notifier import EvalopsNotifier

    recorder = Recorder()
    context = {**_context(), "dag": SimpleNamespace(dag_id="retrieval_eval", render_template_as_native_obj=False)}
    EvalopsNotifier("{{ dag_run.run_id }} broke", "see {{ ti.task_id }}", project=project, notifiers=[recorder],
                    store=False)(context)
    assert [a.title for a in recorder.sent] == ["scheduled__2024-06-02 broke"]
    assert recorder.sent[0].message.endswith("see score")


def test_the_slack_provider_gets_the_escaped_unlinked_text():
    from evalops.airflow.notifier import _SlackNotifier
    from evalops.alerting import Alert, Severity

    sent = []

    class FakeSlackWebhookNotifier:  # the provider's class: (conn id, text), then notify(context)
        def __init__(self, slack_webhook_conn_id, text):
            self.text = text

        def notify(self, context):
            sent.append(self.text)

    notifier = _SlackNotifier.__new__(_SlackNotifier)
    notifier._cls, notifier._conn_id, notifier._context = FakeSlackWebhookNotifier, "slack", {}
    notifier.send(Alert(kind="airflow_failure", severity=Severity.CRITICAL, day="2024-06-02", title="t",
                        message="<!channel> see evil.example/login", retriever="r", fingerprint="fp"))
    assert sent == ["&lt;!channel&gt; see evil.\u2060example/\u2060login"]
