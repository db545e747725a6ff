"""The `envpin matrix --format html` page in a real browser: Debian's Chromium, headless, driven over the DevTools
protocol (a websocket, with websocket-client from the dev extras).

Each page must load with no console error, no uncaught exception, no error in the browser's log and no request
but the page itself (it is self-contained), and show its grids with a hover text on every cell. A screenshot of
each page is kept under test-artifacts/ (ignored by git). The control page proves the harness sees what it
looks for: an error printed, an exception thrown and a request made are all caught.

Chromium is not optional here: `.ci/run` installs it with apt-get when it is missing, and where it is still
missing this test fails and says so, rather than passing without having looked.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_cli import REPO, envpin

# slow: renders the page in a real headless Chromium; one xdist worker runs the module, so its shared fixtures are made once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("chromium")]

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-dev-shm-usage", "--remote-debugging-port=0"]
RTX5090 = ["--os", "linux", "--arch", "x86_64", "--driver", "570.124.04", "--gpu", "NVIDIA GeForce RTX 5090",
           "--python", "3.12"]


@dataclass
class DevTools:
    """A minimal DevTools protocol client over one websocket: commands by id, everything else kept as events."""

    socket: Any  # websocket.WebSocket
    events: list[dict] = field(default_factory=list)
    last_id: int = 0

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.last_id += 1
        message: dict = {"id": self.last_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == self.last_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str, seconds: float) -> dict:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for event in self.events:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            self.events.append(json.loads(self.socket.recv()))
        raise AssertionError(f"no {method} within {seconds} s")

    def drain(self, seconds: float) -> None:
        """Collect what arrives in the next `seconds` (console messages printed after the load event)."""
        import websocket  # noqa: PLC0415 - only this test needs the dev extra; imported where it is used

        self.socket.settimeout(seconds)
        try:
            while True:
                self.events.append(json.loads(self.socket.recv()))
        except websocket.WebSocketTimeoutException:
            pass
        finally:
            self.socket.settimeout(30)


@pytest.fixture(scope="module")
def browser() -> Iterator[DevTools]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: this test needs Debian's Chromium (`apt-get install -y chromium`, "
                    "which .ci/run does when it can); it cannot check the HTML page without a browser")
    import websocket  # noqa: PLC0415 - the dev extra's websocket-client; a missing one fails here, by name

    profile = tempfile.mkdtemp(prefix="envpin-chromium-")
    process = subprocess.Popen([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and len(port_file.read_text().split()) >= 2):
            if process.poll() is not None or time.monotonic() > deadline:
                error = process.stderr.read().decode(errors="replace")[-2000:] if process.stderr else ""
                pytest.fail(f"Chromium did not start its DevTools endpoint: {error}")
            time.sleep(0.1)
        port, path = port_file.read_text().split()[:2]
        # No Origin header: Chromium refuses websocket clients from origins it was not told to allow
        socket = websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=30, suppress_origin=True)
        client = DevTools(socket)
        yield client
        try:
            client.call("Browser.close")
        except Exception:  # noqa: BLE001 - the browser may close the socket before it answers
            pass
        socket.close()
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)  # the process group this fixture started, and nothing else
            process.wait(timeout=30)
        shutil.rmtree(profile, ignore_errors=True)


@dataclass
class Visit:
    problems: list[str]  # console errors, exceptions, error log entries, requests for anything but the page
    facts: dict  # what the page shows, read from its DOM


def visit(browser: DevTools, page: Path, screenshot: str) -> Visit:
    target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Runtime", "Log", "Page", "Network"):
        browser.call(f"{domain}.enable", session=session)
    browser.call("Emulation.setDeviceMetricsOverride", {"width": 1600, "height": 1000, "deviceScaleFactor": 1,
                                                         "mobile": False}, session=session)
    url = page.as_uri()
    navigated = browser.call("Page.navigate", {"url": url}, session=session)
    assert "errorText" not in navigated, navigated
    browser.wait_for("Page.loadEventFired", session, 30)
    browser.drain(1.0)
    facts = browser.call("Runtime.evaluate", {"returnByValue": True, "expression": """JSON.stringify({
        title: document.title, tables: document.querySelectorAll('table').length,
        cells: document.querySelectorAll('td[class]').length, titled: document.querySelectorAll('td[class][title]').length,
        picked: document.querySelectorAll('td.picked').length, sections: document.querySelectorAll('section').length,
        tops: [...document.querySelectorAll('section')].map(s => Math.round(s.getBoundingClientRect().top)),
        text: document.body.innerText})"""}, session=session)["result"]["value"]
    shot = browser.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=session)
    ARTIFACTS.mkdir(exist_ok=True)
    import base64  # noqa: PLC0415 - light, and only the screenshot needs it

    (ARTIFACTS / screenshot).write_bytes(base64.b64decode(shot["data"]))
    problems = []
    for event in (e for e in browser.events if e.get("sessionId") == session):
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            problems.append(f"exception: {details.get('exception', {}).get('description') or details.get('text')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            problems.append(f"console.{params['type']}: {[a.get('value') for a in params.get('args', [])]}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            problems.append(f"log: {params['entry'].get('text')}")
        elif method == "Network.requestWillBeSent" and params["request"]["url"] != url:
            problems.append(f"request: {params['request']['url']}")
    browser.call("Target.closeTarget", {"targetId": target})
    return Visit(problems, json.loads(facts))


def test_the_harness_sees_errors_exceptions_and_requests(browser, tmp_path):
    control = tmp_path / "control.html"
    control.write_text("<!DOCTYPE html><html><head><title>control</title></head><body><table><tr><td class=ok "
                       "title=t>x</td></tr></table><script>console.error('planted error');</script>"
                       "<img src='http://127.0.0.1:9/planted.png'><script>throw new Error('planted exception')</script>"
                       "</body></html>", encoding="utf-8")
    seen = " | ".join(visit(browser, control, "control.png").problems)
    assert "planted error" in seen and "planted exception" in seen and "127.0.0.1:9/planted.png" in seen


def test_the_page_of_one_machine_renders_cleanly(browser, tmp_path):
    page = tmp_path / "matrix.html"
    result = envpin("matrix", *RTX5090, "-o", str(page))
    assert result.returncode == 0, result.stderr
    seen = visit(browser, page, "matrix-torch-rtx5090.png")
    assert seen.problems == []
    facts = seen.facts
    assert facts["title"] == "envpin matrix: torch" and facts["tables"] == 1 and facts["picked"] == 1
    assert facts["cells"] > 100 and facts["titled"] == facts["cells"]
    assert "NVIDIA GeForce RTX 5090 (sm_120)" in facts["text"] and "torch 2.13.0+cu129" in facts["text"]
    assert (ARTIFACTS / "matrix-torch-rtx5090.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_a_fleet_page_shows_its_grids_side_by_side(browser, tmp_path):
    fleet = [
        {"name": "pascal-box", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
         "driver": {"version": "535.104.05"}, "gpus": [{"name": "NVIDIA GeForce GTX 1080 Ti"}]},
        {"name": "<b>blackwell</b> & co", "os": "linux", "arch": "x86_64", "python": {"version": "3.12"},
         "driver": {"version": "580.65.06"}, "gpus": [{"name": "<img src=x onerror=alert(1)>",
                                                       "compute_capability": "12.0"}]},
    ]
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps(fleet))
    page = tmp_path / "fleet.html"
    result = envpin("matrix", "--framework", "jax", "--targets", str(inventory), "-o", str(page))
    assert result.returncode == 0, result.stderr
    seen = visit(browser, page, "matrix-jax-fleet.png")
    assert seen.problems == []  # the hostile names were text: no image requested, no script run
    facts = seen.facts
    assert facts["sections"] == 2 and facts["tables"] == 2 and facts["picked"] == 2
    assert len(set(facts["tops"])) == 1, facts["tops"]  # side by side: both grids start at the same height
    assert "<b>blackwell</b> & co" in facts["text"]
