"""A headless Chromium driven over the DevTools protocol on a pipe (no websocket, no package).

``--remote-debugging-pipe`` makes Chromium read protocol messages on its file descriptor 3
and write on 4, each message JSON followed by a NUL byte. :class:`Browser` opens a page,
records every network request and every error the page logs, and takes screenshots.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
)
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """``$RANKHOUSE_CHROMIUM``, else the first Chromium on PATH, else None."""
    if os.environ.get("RANKHOUSE_CHROMIUM"):
        return os.environ["RANKHOUSE_CHROMIUM"]
    return next((path for name in NAMES if (path := shutil.which(name))), None)


@dataclass
class PageLoad:
    """What loading one page did."""

    requests: list[str] = field(default_factory=list)
    """URL of every request the page made, the page itself included."""
    errors: list[str] = field(default_factory=list)
    """Console and log errors, uncaught exceptions and failed loads."""


class Browser:
    """One headless Chromium process with a fresh profile; use as a context manager."""

    def __init__(self, binary: str, *, width: int = 1280, height: int = 1600, timeout=60.0):
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="rankhouse-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # above 4, so that moving them to 3 and 4 in the child cannot overwrite each other
        keep = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser_r, from_browser_w)]
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)

        def to_3_and_4() -> None:
            os.dup2(keep[0], 3)
            os.dup2(keep[1], 4)

        self.process = subprocess.Popen(
            [
                binary,
                *FLAGS,
                f"--user-data-dir={self._profile}",
                f"--window-size={width},{height}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=to_3_and_4,
            close_fds=False,
        )
        for fd in keep:
            os.close(fd)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Network", "Log", "Runtime"):
            self.call(f"{domain}.enable", session=self.session)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        """End the browser and remove its profile."""
        with contextlib.suppress(OSError, TimeoutError, RuntimeError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    # --- the protocol -------------------------------------------------------------------
    def call(self, method: str, *, session: str | None = None, **params) -> dict:
        """Send one command and return its result (events that arrive meanwhile are kept)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def _receive(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _wait_for(self, method: str) -> None:
        while not any(e.get("method") == method for e in self._events):
            self._events.append(self._receive())

    # --- pages --------------------------------------------------------------------------
    def load(self, url: str) -> PageLoad:
        """Open ``url``, wait for its load event, and report its requests and errors."""
        self._events.clear()
        result = self.call("Page.navigate", session=self.session, url=url)
        if result.get("errorText"):
            raise RuntimeError(f"cannot open {url}: {result['errorText']}")
        self._wait_for("Page.loadEventFired")
        self.call("Runtime.evaluate", session=self.session, expression="1")  # flush events
        found = PageLoad()
        for event in self._events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Network.requestWillBeSent":
                found.requests.append(params["request"]["url"])
            elif method == "Network.loadingFailed":
                found.errors.append(f"load failed: {params.get('errorText')}")
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.errors.append(f"log: {params['entry'].get('text')}")
            elif method == "Runtime.exceptionThrown":
                found.errors.append(f"exception: {params['exceptionDetails'].get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.errors.append(f"console: {params.get('args')}")
        return found

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (the test's probe; the report
        itself has no script)."""
        result = self.call(
            "Runtime.evaluate", session=self.session, expression=expression, returnByValue=True
        )
        return result["result"].get("value")

    def screenshot(self, *, full_page: bool = False, clip: dict | None = None) -> bytes:
        """A PNG of the viewport, of the whole page, or of ``clip`` (``x, y, width, height``
        in page coordinates)."""
        params = {"format": "png", "captureBeyondViewport": full_page or clip is not None}
        if clip is not None:
            params["clip"] = {**clip, "scale": 1}
        elif full_page:
            size = self.call("Page.getLayoutMetrics", session=self.session)["cssContentSize"]
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size["width"],
                "height": size["height"],
                "scale": 1,
            }
        data = self.call("Page.captureScreenshot", session=self.session, **params)["data"]
        return base64.b64decode(data)
