"""Local servers on 127.0.0.1 for the transport tests: each is a real socket, and each keeps the times at
which it received requests (the server's clock, never the client's)."""

from __future__ import annotations

import socket
import threading
import time

from tests.faults.servers import drip


class Scripted:
    """Answers request n with ``replies[n]`` (the last one repeats): ``(status, headers, body, interval)``, where
    ``interval`` > 0 sends the body one byte every ``drip`` seconds after the headers. ``received`` holds
    ``time.monotonic()`` at each request's arrival."""

    def __init__(self, replies: list[tuple[int, dict[str, str], bytes, float]]):
        self.replies = replies
        self.received: list[float] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.1)
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket, buf: bytes) -> tuple[bytes, bytes] | None:
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            buf += chunk
        head, rest = buf.split(b"\r\n\r\n", 1)
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            rest += chunk
        return head, rest[length:]

    def _handle(self, conn: socket.socket) -> None:
        buf = b""
        try:
            while not self._stop.is_set():
                got = self._read_request(conn, buf)
                if got is None:
                    return
                _, buf = got
                with self._lock:
                    n = len(self.received)
                    self.received.append(time.monotonic())
                status, headers, body, interval = self.replies[min(n, len(self.replies) - 1)]
                lines = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", "Content-Type: application/json",
                         *(f"{k}: {v}" for k, v in headers.items())]
                conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
                if interval <= 0:
                    conn.sendall(body)
                else:
                    drip(conn, body, interval, self._stop)
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        self._stop.set()
        self._sock.close()
