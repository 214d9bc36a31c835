"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``): no driver, no
network, no package beyond the standard library.  Used by the browser tests (``tests/test_browser_pictures.py``)
and by the screenshot tool (``tests/screenshots.py``).

    with Browser.start() as b:                       # one headless Chromium, a fresh profile, closed on exit
        page = b.open(path, width=1400, height=900)  # loaded, at 100 % zoom (device scale 1)
        page.evaluate("document.title")              # a JavaScript value
        page.screenshot(png, clip=(0, 0, 800, 600))  # a PNG of that region
        page.errors                                  # console errors, uncaught exceptions, failed loads

Chromium is started headless with ``FLAGS`` (no sandbox: CI runs as root; no GPU; no QUIC, first-run, background
networking, component updates or sync: the network is closed) and a fresh ``--user-data-dir``.  Messages are JSON
separated by NUL bytes: commands on the browser's fd 3, replies and events on its fd 4.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-pipe")
NAMES = ("chromium", "chromium-browser", "google-chrome")
TIMEOUT = 60.0  # seconds for one command (a page load included)


def find() -> str | None:
    """The browser's path, or None (Debian: ``apt-get install -y chromium``)."""
    return next((p for p in (shutil.which(n) for n in NAMES) if p), None)


def missing() -> str:
    """Why there is no browser, for a skipped test: what CI's install said (``.ci/run`` sets ``PTX_NO_BROWSER``
    when ``apt-get install -y chromium`` fails), else how to install one."""
    return "no headless browser: " + os.environ.get("PTX_NO_BROWSER", "Debian: apt-get install -y chromium")


class BrowserError(RuntimeError):
    """The browser did not answer, or answered with an error."""


class Browser:
    """One headless Chromium process (see the module docstring)."""

    def __init__(self, proc: subprocess.Popen, send_fd: int, recv_fd: int, profile: Path) -> None:
        self.proc, self._send, self._recv, self.profile = proc, send_fd, recv_fd, profile
        self._buf = b""
        self._id = 0
        self._events: list[dict[str, Any]] = []

    @classmethod
    def start(cls, path: str | None = None) -> "Browser":
        exe = path or find()
        if exe is None:
            raise BrowserError(missing())
        profile = Path(tempfile.mkdtemp(prefix="ptx-chromium-profile-"))
        to_browser, from_browser = os.pipe(), os.pipe()

        def wire() -> None:  # in the child: its fd 3 reads our commands, its fd 4 writes its replies
            a = fcntl.fcntl(to_browser[0], fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_browser[1], fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(3, 4),
                                preexec_fn=wire)
        os.close(to_browser[0])
        os.close(from_browser[1])
        return cls(proc, to_browser[1], from_browser[0], profile)

    # ------------------------------------------------------------------------- the protocol

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """One command; its result (``BrowserError`` on an error reply or no reply within ``TIMEOUT``)."""
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session is not None:
            msg["sessionId"] = session
        os.write(self._send, json.dumps(msg).encode() + b"\0")
        want = self._id
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._next(deadline)
            if reply.get("id") == want:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def wait_for(self, method: str, session: str | None, deadline: float) -> dict[str, Any]:
        """The next event ``method`` of ``session`` (earlier events are kept)."""
        for k, ev in enumerate(self._events):
            if ev.get("method") == method and ev.get("sessionId") == session:
                return self._events.pop(k)
        while True:
            ev = self._next(deadline)
            if ev.get("method") == method and ev.get("sessionId") == session:
                return ev
            self._events.append(ev)

    def _next(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._recv], [], [], left)[0]:
                raise BrowserError(f"no answer from the browser within {TIMEOUT:.0f} s")
            chunk = os.read(self._recv, 1 << 20)
            if not chunk:
                raise BrowserError("the browser closed its pipe (it exited)")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        return json.loads(raw)

    def events_of(self, session: str) -> list[dict[str, Any]]:
        """The events of ``session`` received so far (taken)."""
        mine = [e for e in self._events if e.get("sessionId") == session]
        self._events = [e for e in self._events if e.get("sessionId") != session]
        return mine

    # ------------------------------------------------------------------------- pages

    def open(self, target: Path | str, width: int = 1400, height: int = 900) -> "Page":
        """``target`` (a file, or a URL) in a new tab of ``width x height`` CSS px at device scale 1, loaded."""
        url = target.as_uri() if isinstance(target, Path) else target
        tab = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": tab, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", {}, session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session)
        nav = self.send("Page.navigate", {"url": url}, session)
        if nav.get("errorText"):
            raise BrowserError(f"{url}: {nav['errorText']}")
        self.wait_for("Page.loadEventFired", session, time.monotonic() + TIMEOUT)
        return Page(self, tab, session, url)

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close")
                except (BrowserError, OSError):
                    pass
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(10)
        finally:
            for fd in (self._send, self._recv):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Page:
    """A loaded tab."""

    def __init__(self, browser: Browser, tab: str, session: str, url: str) -> None:
        self.browser, self.tab, self.session, self.url = browser, tab, session, url

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (JSON-able)."""
        r = self.browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                    "awaitPromise": True}, self.session)
        if "exceptionDetails" in r:
            raise BrowserError(f"{expression[:80]}...: {r['exceptionDetails'].get('text')} "
                               f"{r['exceptionDetails'].get('exception', {}).get('description', '')}")
        return r["result"].get("value")

    @property
    def errors(self) -> list[str]:
        """Console errors and assertions, uncaught exceptions and errors the browser logged (a resource that does
        not load, a document that does not parse), in the order they came."""
        out = []
        for ev in self.browser.events_of(self.session):
            p = ev.get("params", {})
            if ev.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description", "")))
                                                                    for a in p.get("args", [])))
            elif ev.get("method") == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: " + str(d.get("exception", {}).get("description") or d.get("text")))
            elif ev.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                e = p["entry"]
                out.append(f"{e.get('source')}: {e.get('text')} {e.get('url', '')}".strip())
        return out

    def screenshot(self, path: Path, clip: tuple[int, int, int, int]) -> Path:
        """A PNG of the region ``(x, y, width, height)`` in CSS px (beyond the window too), at scale 1."""
        x, y, w, h = clip
        r = self.browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                         "clip": {"x": x, "y": y, "width": w, "height": h,
                                                                  "scale": 1}}, self.session)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(r["data"]))
        return path

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.tab})
