"""A fake MLflow tracking server on 127.0.0.1: the REST endpoints evalops calls, with the checks the real one
makes (keys, batch limits, no NaN, JSON bodies)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self
from urllib.parse import parse_qs, urlsplit

KEY = re.compile(r"^[/\w.\- ]*$")
LIMITS = {"metrics": 1000, "params": 100, "tags": 100}


class FakeMlflow:
    """The REST endpoints evalops calls, with MLflow's checks; ``calls`` records (method, endpoint, body,
    Authorization header)."""

    def __init__(self, fail: dict[str, tuple[int, dict]] | None = None):
        self.experiments: dict[str, str] = {}
        self.runs: dict[str, dict] = {}
        self.calls: list[tuple[str, str, dict, str | None]] = []
        self.fail = fail or {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _answer(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                parts = urlsplit(self.path)
                endpoint = parts.path.removeprefix("/api/2.0/mlflow/")
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length)) if length else {}
                if method == "GET":
                    body = {k: v[0] for k, v in parse_qs(parts.query).items()}
                fake.calls.append((method, endpoint, body, self.headers.get("Authorization")))
                if endpoint in fake.fail:
                    self._answer(*fake.fail[endpoint])
                    return
                self._answer(*fake.route(method, endpoint, body))

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def _bad(message: str) -> tuple[int, dict]:
        return 400, {"error_code": "INVALID_PARAMETER_VALUE", "message": message}

    def route(self, method: str, endpoint: str, body: dict) -> tuple[int, dict]:
        if (method, endpoint) == ("GET", "experiments/get-by-name"):
            name = body["experiment_name"]
            if name not in self.experiments:
                return 404, {"error_code": "RESOURCE_DOES_NOT_EXIST", "message": f"no experiment {name}"}
            return 200, {"experiment": {"experiment_id": self.experiments[name], "name": name}}
        if (method, endpoint) == ("POST", "experiments/create"):
            self.experiments[body["name"]] = str(100 + len(self.experiments))
            return 200, {"experiment_id": self.experiments[body["name"]]}
        if (method, endpoint) == ("POST", "runs/create"):
            if body["experiment_id"] not in self.experiments.values():
                return self._bad("unknown experiment")
            run_id = f"run{len(self.runs)}"
            self.runs[run_id] = {"experiment_id": body["experiment_id"], "name": body["run_name"], "metrics": {},
                                 "params": {}, "tags": {t["key"]: t["value"] for t in body["tags"]},
                                 "status": "RUNNING"}
            return 200, {"run": {"info": {"run_id": run_id, "experiment_id": body["experiment_id"]}}}
        run = self.runs.get(body.get("run_id"))
        if run is None:
            return 404, {"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "no run"}
        if (method, endpoint) == ("POST", "runs/log-batch"):
            for kind, limit in LIMITS.items():
                if len(body.get(kind, [])) > limit:
                    return self._bad(f"too many {kind}")
                for item in body.get(kind, []):
                    if not KEY.match(item["key"]):
                        return self._bad(f"invalid key {item['key']}")
            for m in body.get("metrics", []):
                if not isinstance(m["value"], float) or m["value"] != m["value"]:
                    return self._bad("metric value must be a number")
                run["metrics"][m["key"]] = m["value"]
            run["params"].update({p["key"]: p["value"] for p in body.get("params", [])})
            run["tags"].update({t["key"]: t["value"] for t in body.get("tags", [])})
            return 200, {}
        if (method, endpoint) == ("POST", "runs/set-tag"):
            run["tags"][body["key"]] = body["value"]
            return 200, {}
        if (method, endpoint) == ("POST", "runs/update"):
            run["status"] = body["status"]
            return 200, {"run_info": {"run_id": body["run_id"], "status": body["status"]}}
        return 404, {"error_code": "ENDPOINT_NOT_FOUND", "message": endpoint}
