"""The labelling pages: annotators grade the annotation queue, agreement is measured, conflicts adjudicated.

``/label`` lists the queue (``.evalops/annotation/queue.jsonl``) in working order (holes by priority, then
sampled production queries, then generated questions; :mod:`evalops.annotation.queue`) with each item's
state; ``/label/item/<id>`` shows one item: the query, the document's text, the judge's proposed grade, the
grade scale with the gold set's guidelines (``guidelines.md`` or ``guidelines.txt`` in the gold-set folder,
or beside its qrels file), and a form to grade it, skip it or comment on it. Keys: each grade button has
its digit as ``accesskey`` and the skip button ``s`` (the browser's access-key modifier: Alt, or Alt+Shift,
or Ctrl+Option); the pages run no script. ``/label/agreement`` shows Cohen's kappa per annotator pair and
against the judge, Krippendorff's alpha, and the conflicts, each with a form to adjudicate it.

**Who may write.** A label is written only by a request that carries the dashboard's credentials (a token
or basic credentials: ``evalops dashboard``) or Airflow's login (the plugin); a dashboard without either
shows the pages and refuses every post (403). Every form carries a CSRF token bound to the browser's session
and its credentials (:mod:`evalops.dashboard.csrf`); a post without it, or with another, is refused (403)
and changes nothing. Under Airflow the annotator is the logged-in user; on the standalone dashboard, whose
credentials are shared, each annotator names themself once (the name is kept in a cookie and recorded with
every label). All text (queries, documents, comments, names) is escaped by the templates' autoescape.

The static export (``evalops dashboard --export``) has no labelling pages: it cannot take a label.
"""

# No ``from __future__ import annotations``: FastAPI reads the routes' annotations, which name classes imported
# inside ``register_labelling`` (FastAPI is imported when the app is built, not with this module).
import functools
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlencode

from evalops.annotation.agreement import agreement_report
from evalops.annotation.queue import ITEM_STATES, item_states, ordered_items
from evalops.dashboard.csrf import SESSION_COOKIE, form_token, new_session, valid_token
from evalops.errors import InputError
from evalops.judges.generate import QUEUE_SOURCES, queue_path, read_queue
from evalops.warehouse._db import transaction
from evalops.warehouse.labels import (
    MAX_ANNOTATOR_LENGTH,
    load_adjudications,
    load_labels,
    person_name,
    record_adjudication,
    record_label,
)

if TYPE_CHECKING:  # pragma: no cover
    from fastapi import Request

__all__ = ["ANNOTATOR_COOKIE", "DEFAULT_GRADES", "LabellingSettings", "register_labelling"]

ANNOTATOR_COOKIE = "evalops_annotator"
DEFAULT_GRADES = ((0, "not relevant"), (1, "partly relevant"), (2, "relevant"), (3, "highly relevant"))
MAX_FORM_BYTES = 64 * 1024
GUIDELINE_FILES = ("guidelines.md", "guidelines.txt")


@dataclass(frozen=True)
class LabellingSettings:
    """Where the queue and the documents are, the grade scale and guidelines, and how many labels an item
    needs."""

    queue: Path | None = None
    knowledge_base: Path | None = None
    grades: tuple[tuple[int, str], ...] = DEFAULT_GRADES[:3]
    guidelines: str = ""
    labels_per_item: int = 1

    @classmethod
    def from_config(cls, cfg: Any, name: str = "gold") -> "LabellingSettings":
        """The project's queue and knowledge base; the grade scale is the gold set's ``allowed_grades`` when
        it names them, else 0 to 2; the guidelines are read from beside the gold set."""
        spec = cfg.gold_sets.get(name) or next(iter(cfg.gold_sets.values()), None)
        grades = DEFAULT_GRADES[:3]
        guidelines = ""
        if spec is not None and spec.path is not None:
            allowed = spec.rules.allowed_grades
            if allowed != "auto":
                words = dict(DEFAULT_GRADES)
                grades = tuple((int(g), words.get(int(g), "")) for g in sorted(allowed))
            folder = spec.path if spec.path.is_dir() else spec.path.parent
            for file in GUIDELINE_FILES:
                if (folder / file).is_file():
                    guidelines = (folder / file).read_text(encoding="utf-8", errors="replace")
                    break
        kb = cfg.knowledge_base.path
        return cls(queue=queue_path(cfg), knowledge_base=None if kb is None else Path(kb), grades=grades,
                   guidelines=guidelines, labels_per_item=cfg.labels_per_item)


@functools.lru_cache(maxsize=2)
def _documents(path: str, stamp: float) -> dict[str, str]:
    from evalops.knowledge import load_snapshot

    corpus = load_snapshot(path).corpus()
    title = corpus["title"].fillna("").astype(str) if "title" in corpus.columns else None
    text = corpus["text"].fillna("").astype(str)
    if title is not None:
        text = (title + "\n\n").where(title != "", "") + text
    return dict(zip(corpus["doc_id"].astype(str), text))


def _document(settings: LabellingSettings, doc_id: str | None) -> str | None:
    if doc_id is None or settings.knowledge_base is None or not settings.knowledge_base.exists():
        return None
    path = settings.knowledge_base
    return _documents(str(path), os.stat(path).st_mtime).get(doc_id)


def _fmt(value: float | None) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def register_labelling(app: Any, *, get_engine: Callable[[], Any], prefix: str, page: Callable[..., Any],
                       settings: LabellingSettings, writes: bool, identity: Any = None,
                       credential_cookies: Sequence[str] = ()) -> None:
    """Add the labelling routes to the dashboard ``app`` (module docstring). ``writes``: whether every request
    reaching the app carries credentials (a guard is configured); ``identity``: a FastAPI dependency that
    returns the logged-in user's name (Airflow), else annotators name themselves; ``credential_cookies``: the
    cookies that authenticate a request, which the CSRF token is bound to."""
    from fastapi import Request

    async def who(request: Request) -> str | None:
        return None

    user = identity if identity is not None else who
    pages = _Labelling(get_engine, page, settings, writes, credential_cookies, prefix.rstrip("/"))
    _register_queue(app, pages, user)
    _register_items(app, pages, user)
    _register_agreement(app, pages, user)


def _annotator_of(request: "Request", logged_in: str | None) -> str | None:
    """The annotator: the logged-in user, else the name kept in the annotator cookie (None: not named)."""
    return logged_in or (request.cookies.get(ANNOTATOR_COOKIE) or "").strip() or None


def _session_of(request: "Request") -> tuple[str, bool]:
    """The browser's session (the CSRF token is bound to it), and whether it is new (its cookie to be set)."""
    found = request.cookies.get(SESSION_COOKIE)
    return (found, False) if found else (new_session(), True)


async def _form_of(request: "Request") -> dict[str, str] | None:
    """A posted form's fields (the last value of each); None when it is too large or not UTF-8."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        return None
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        return None
    return {k: v[-1] for k, v in fields.items()}


def _next_item(items: dict[str, dict[str, Any]], state: dict[str, Any], me: str | None,
               after: str | None = None) -> str | None:
    """The next open item (after ``after``, wrapping round) that ``me`` has not labelled yet."""
    ids = list(items)
    start = ids.index(after) + 1 if after in ids else 0
    for item_id in ids[start:] + ids[:start]:
        s = state.get(item_id)
        if s is not None and s.state in ("open",) and (me is None or me not in s.labels):
            return item_id
    return None


class _Labelling:
    """What the labelling routes share: their links, the queue and its items' states, the page answered
    (with the CSRF token and the session cookie), and the check a post must pass to write."""

    def __init__(self, get_engine: Callable[[], Any], page: Callable[..., Any], settings: LabellingSettings,
                 writes: bool, credential_cookies: Sequence[str], base: str) -> None:
        self.get_engine = get_engine
        self.page = page
        self.settings = settings
        self.writes = writes
        self.credential_cookies = credential_cookies
        self.base = base

    def url(self, path: str, **params: Any) -> str:
        """The link to a labelling page (``path`` under ``/label``) with its query parameters."""
        query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
        return f"{self.base}/label{path}" + (f"?{query}" if query else "")

    def respond(self, request: "Request", template: str, context: dict[str, Any], *, status: int = 200) -> Any:
        """The page with the labelling context (links, whether posts may write, the form's CSRF token); a new
        session's cookie is set on it."""
        session, fresh = _session_of(request)
        context = {"page": "labelling", "label_url": self.url, "writes": self.writes,
                   "csrf": form_token(session, request, self.credential_cookies), **context}
        response = self.page(template, context, status=status)
        if fresh:
            response.set_cookie(SESSION_COOKIE, session, httponly=True, samesite="strict", path=self.base + "/",
                                secure=request.url.scheme == "https")
        return response

    def refuse(self, request: "Request", status: int, message: str) -> Any:
        """The error page with ``status``: why the request was refused."""
        return self.respond(request, "error.html", {"heading": "Not allowed" if status == 403 else "Cannot do that",
                                                    "message": message}, status=status)

    def checked(self, request: "Request", form: dict[str, str] | None) -> Any:
        """A refusal when the post may not write (no guard, no or wrong CSRF token), else None."""
        if not self.writes:
            return self.refuse(request, 403, "This dashboard has no credentials configured, so it takes no labels: "
                                             "set EVALOPS_DASHBOARD_TOKEN (or EVALOPS_DASHBOARD_USER and "
                                             "EVALOPS_DASHBOARD_PASSWORD), or open it inside Airflow.")
        if form is None or not valid_token(request, form.get("csrf"), self.credential_cookies):
            return self.refuse(request, 403, "The form's CSRF token is missing or is not this session's: reload the "
                                             "page and submit again. Nothing was changed.")
        return None

    async def named_post(self, request: "Request", logged_in: str | None, records: str) -> Any:
        """``(form, annotator)`` of a post that may write and whose annotator is known, else the refusal
        (``records``: what the post records, said when the annotator is not named)."""
        form = await _form_of(request)
        refused = self.checked(request, form)
        if refused is not None:
            return refused
        me = _annotator_of(request, logged_in)
        if me is None:
            return self.refuse(request, 403, f"Name yourself on the labelling page first: {records}")
        return form or {}, me

    def queue(self) -> dict[str, dict[str, Any]]:
        """The annotation queue's items by id, in working order (none without a queue file)."""
        if self.settings.queue is None:
            return {}
        return {r["item_id"]: r for r in ordered_items(read_queue(self.settings.queue))}

    def states(self, items: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Each item's state, from the labels and adjudications read in one transaction."""
        with transaction(self.get_engine(), "reading the labels") as conn:
            return item_states(list(items), load_labels(conn), load_adjudications(conn),
                               self.settings.labels_per_item)

    def grade_of(self, form: dict[str, str]) -> int | None:
        """The posted grade when it is one of the scale's, else None."""
        raw = form.get("grade", "")
        allowed = {g for g, _ in self.settings.grades}
        try:
            value = int(raw)
        except ValueError:
            return None
        return value if value in allowed else None


def _register_queue(app: Any, pages: _Labelling, user: Any) -> None:
    """The queue page (``/label``) and the form where an annotator names themself."""
    from fastapi import Depends, Request
    from fastapi.responses import RedirectResponse

    url, respond, refuse, checked = pages.url, pages.respond, pages.refuse, pages.checked
    queue, states, settings = pages.queue, pages.states, pages.settings
    base = pages.base

    @app.get("/label")
    def label_queue(request: Request, source: str | None = None, state: str | None = None,
                    logged_in: str | None = Depends(user)) -> Any:
        me = _annotator_of(request, logged_in)
        items = queue()
        found = states(items)
        rows = []
        counts = {s: 0 for s in ITEM_STATES}
        for item_id, item in items.items():
            s = found[item_id]
            counts[s.state] += 1
            if (source and item["source"] != source) or (state and s.state != state):
                continue
            mine = s.labels.get(me, "skip") if me in s.labels else None
            rows.append({"item": item, "state": s, "href": url(f"/item/{quote(item_id)}"),
                         "mine": "skip" if me in s.labels and mine is None else mine,
                         "priority": "–" if item["priority"] is None else f"{item['priority']:.3f}"})
        first = _next_item(items, found, me)
        return respond(request, "label_queue.html", {
            "rows": rows, "counts": counts, "sources": QUEUE_SOURCES, "states": ITEM_STATES, "source": source or "",
            "state": state or "", "me": me, "identified": logged_in is not None, "total": len(items),
            "queue_file": str(settings.queue), "start": None if first is None else url(f"/item/{quote(first)}"),
            "labels_per_item": settings.labels_per_item, "max_name": MAX_ANNOTATOR_LENGTH})

    @app.post("/label/annotator")
    async def set_annotator(request: Request, logged_in: str | None = Depends(user)) -> Any:
        form = await _form_of(request)
        refused = checked(request, form)
        if refused is not None:
            return refused
        if logged_in is not None:
            return refuse(request, 400, "You are logged in: labels are recorded under your login name.")
        try:
            name = person_name((form or {}).get("annotator", ""))
        except InputError as exc:
            return refuse(request, 400, str(exc))
        response = RedirectResponse(url(""), status_code=303)
        response.set_cookie(ANNOTATOR_COOKIE, name, httponly=True, samesite="strict", path=base + "/",
                            secure=request.url.scheme == "https")
        return response


def _register_items(app: Any, pages: _Labelling, user: Any) -> None:
    """An item's page and the post that records its label (or its skip)."""
    from fastapi import Depends, Request
    from fastapi.responses import RedirectResponse

    url, respond, refuse = pages.url, pages.respond, pages.refuse
    queue, states, settings = pages.queue, pages.states, pages.settings
    get_engine, grade_of = pages.get_engine, pages.grade_of

    @app.get("/label/item/{item_id}")
    def label_item(request: Request, item_id: str, logged_in: str | None = Depends(user)) -> Any:
        me = _annotator_of(request, logged_in)
        items = queue()
        item = items.get(item_id)
        if item is None:
            return refuse(request, 404, f"no annotation-queue item {item_id!r}")
        found = states(items)
        s = found[item_id]
        following = _next_item(items, found, me, after=item_id)
        return respond(request, "label_item.html", {
            "item": item, "state": s, "me": me, "document": _document(settings, item.get("doc_id")),
            "grades": settings.grades, "guidelines": settings.guidelines, "mine": s.labels.get(me) if me else None,
            "mine_given": me in s.labels if me else False, "action": url(f"/item/{quote(item_id)}"),
            "next": None if following is None else url(f"/item/{quote(following)}"),
            "labels_per_item": settings.labels_per_item})

    @app.post("/label/item/{item_id}")
    async def post_label(request: Request, item_id: str, logged_in: str | None = Depends(user)) -> Any:
        posted = await pages.named_post(request, logged_in, "every label records its annotator.")
        if not isinstance(posted, tuple):
            return posted
        form, me = posted
        items = queue()
        item = items.get(item_id)
        if item is None:
            return refuse(request, 404, f"no annotation-queue item {item_id!r}")
        skip = form.get("action") == "skip"
        grade = None if skip else grade_of(form)
        if not skip and grade is None:
            return refuse(request, 400, f"grade must be one of {[g for g, _ in settings.grades]}, got "
                                        f"{form.get('grade', '')!r}; nothing was recorded")
        try:
            record_label(get_engine(), item, annotator=me, grade=grade, comment=form.get("comment"))
        except InputError as exc:
            return refuse(request, 400, str(exc))
        found = states(items)
        following = _next_item(items, found, me, after=item_id)
        return RedirectResponse(url(f"/item/{quote(following)}") if following else url(""), status_code=303)


def _register_agreement(app: Any, pages: _Labelling, user: Any) -> None:
    """The agreement page (kappa, alpha, the conflicts) and the post that adjudicates a conflict."""
    from fastapi import Depends, Request
    from fastapi.responses import RedirectResponse

    url, respond, refuse = pages.url, pages.respond, pages.refuse
    queue, states, settings = pages.queue, pages.states, pages.settings
    get_engine, grade_of = pages.get_engine, pages.grade_of

    @app.get("/label/agreement")
    def agreement(request: Request, logged_in: str | None = Depends(user)) -> Any:
        items = queue()
        found = states(items)
        report = agreement_report({i: s.labels for i, s in found.items()},
                                  {i: r.get("proposed_grade") for i, r in items.items()})
        conflicts = [{"item": items.get(i, {"item_id": i, "query": "", "doc_id": None, "source": "hole"}),
                      "state": s, "action": url(f"/adjudicate/{quote(i)}"), "href": url(f"/item/{quote(i)}")}
                     for i, s in found.items() if s.state == "conflict"]
        adjudicated = [{"item": items.get(i, {"item_id": i, "query": "", "doc_id": None}), "state": s}
                       for i, s in found.items() if s.state == "adjudicated"]
        for row in report["pairs"] + report["judge"]:
            row["kappa_text"], row["agreement_text"] = _fmt(row["kappa"]), _fmt(row["agreement"])
        return respond(request, "label_agreement.html", {
            "report": report, "alpha": {k: _fmt(v) for k, v in report["alpha"].items()}, "conflicts": conflicts,
            "adjudicated": adjudicated, "grades": settings.grades, "me": _annotator_of(request, logged_in)})

    @app.post("/label/adjudicate/{item_id}")
    async def adjudicate(request: Request, item_id: str, logged_in: str | None = Depends(user)) -> Any:
        posted = await pages.named_post(request, logged_in, "an adjudication records who made it.")
        if not isinstance(posted, tuple):
            return posted
        form, me = posted
        items = queue()
        labels = [lab for lab in load_labels(get_engine()) if lab.item_id == item_id]
        item = items.get(item_id) or (None if not labels else {
            "item_id": item_id, "source": labels[0].source, "query_id": labels[0].query_id,
            "doc_id": labels[0].doc_id})
        if item is None:
            return refuse(request, 404, f"no annotation-queue item {item_id!r}")
        grade = grade_of(form)
        if grade is None:
            return refuse(request, 400, f"grade must be one of {[g for g, _ in settings.grades]}; nothing was recorded")
        try:
            record_adjudication(get_engine(), item, adjudicator=me, grade=grade, comment=form.get("comment"))
        except InputError as exc:
            return refuse(request, 400, str(exc))
        return RedirectResponse(url("/agreement"), status_code=303)
