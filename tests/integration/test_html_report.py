"""``-o html`` in a real browser: Debian's headless Chromium opens the page of every command, takes a
screenshot that must not be blank, and its console must stay free of errors (a blocked load, a
script error, a malformed page). The browser is driven over the DevTools protocol on a pipe (no
port, no network: the page itself forbids every load). Under CI (CI=true), a missing Chromium
fails the test: .ci/run installs it."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kplan.cli.app import app
from kplan.cli.render import render
from kplan.cli.render.html import MAX_NODE_BARS
from kplan.report.codec import decode
from kplan.report.document import SimulationDocument

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures"
CLUSTER = ["--cluster", str(FIX / "cluster.yaml")]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--remote-debugging-pipe", "--window-size=1200,1600"]


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Debian's chromium is not installed: .ci/run installs it (apt-get install chromium)")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    return exe


class Browser:
    """A headless Chromium spoken to over --remote-debugging-pipe (fd 3 in, fd 4 out, NUL-separated
    JSON messages), with one page attached."""

    def __init__(self, exe: str, profile: str) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # the protocol pipes must be the child's fds 3 and 4: let bash put them there (POSIX sh
        # knows fds 0-9 only), from numbers above 9 so that moving one cannot overwrite the other
        to_chrome_r, from_chrome_w = (self._high(fd) for fd in (to_chrome_r, from_chrome_w))
        script = f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w} {to_chrome_r}<&- {from_chrome_w}>&-'
        self.proc = subprocess.Popen(["bash", "-c", script, exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                                      "about:blank"], pass_fds=(to_chrome_r, from_chrome_w),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=self.session)

    @staticmethod
    def _high(fd: int) -> int:
        import fcntl

        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(fd)
        return high

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise AssertionError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return dict(json.loads(message))

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return dict(reply.get("result") or {})
            self.events.append(reply)

    def wait_for(self, method: str) -> None:
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read())

    def open(self, path: Path) -> tuple[bytes, list[str]]:
        """Load the page; its screenshot (PNG) and the console's errors and warnings."""
        self.events.clear()
        self.call("Page.navigate", session=self.session, url=path.as_uri())
        self.wait_for("Page.loadEventFired")
        # a round trip after the load: messages the page logged while loading are in by then
        self.call("Runtime.evaluate", session=self.session, expression="1")
        shot = self.call("Page.captureScreenshot", session=self.session, format="png")
        return base64.b64decode(shot["data"]), problems(self.events)

    def evaluate(self, expression: str) -> Any:
        return self.call("Runtime.evaluate", session=self.session, expression=expression,
                         returnByValue=True)["result"].get("value")

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (AssertionError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)


def problems(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for e in events:
        p = e.get("params") or {}
        if e.get("method") == "Runtime.exceptionThrown":
            out.append(f"exception: {p.get('exceptionDetails', {}).get('text')}")
        elif e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
            out.append(f"console.{p.get('type')}: {[a.get('value') for a in p.get('args', [])]}")
        elif e.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
            out.append(f"log {p['entry']['level']}: {p['entry'].get('text')}")
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    exe = chromium()
    with tempfile.TemporaryDirectory(prefix="kplan-chromium-") as profile:  # a new, empty profile
        b = Browser(exe, profile)
        try:
            yield b
        finally:
            b.close()


def blank(png: bytes) -> bool:
    """Nothing but one colour (a page that failed to draw)."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    colors = img.getcolors(maxcolors=1 << 16)
    return colors is not None and len(colors) < 2


def html_of(args: list[str]) -> str:
    r = CliRunner().invoke(app, [*args, "-o", "html", "-q"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.stderr
    return r.stdout


PAGES = [
    ("simulate", ["simulate", str(FIX / "manifests"), *CLUSTER], ["Pods that do not run, by reason",
                                                                  "Node utilisation"]),
    ("cluster-autoscaler simulate", ["simulate", "-f", str(FIX / "karpenter" / "burst.yaml"), *CLUSTER,
                                     "--autoscaler", "cluster-autoscaler", "--node-groups",
                                     str(FIX / "cluster-autoscaler" / "node-groups.yaml"), "--instance-types",
                                     str(FIX / "karpenter" / "instance-types.json")],
     ["Nodes the autoscaler launched", "Scale-up 1", "Node group considered", "Expander's score",
      "Chosen: compute +3 (least-waste chose it among 3 options).", "Node group"]),
    ("whatif", ["whatif", str(FIX / "manifests"), *CLUSTER, "--drain", "gen-b-2"],
     ["What differs", "Utilisation before", "Node utilisation before → after", "Before", "After"]),
    ("explain", ["explain", "pod", "ml/notebook", str(FIX / "manifests"), *CLUSTER],
     ["What would help", "Reasons over all 12 nodes", "Filters on the top 10 of 12 nodes"]),
    ("capacity", ["capacity", str(FIX / "manifests" / "gpu-inference.yaml"), *CLUSTER],
     ["Where the replicas go", "Node utilisation with the replicas"]),
    ("sweep", ["sweep", str(FIX / "app" / "deployment.yaml"), *CLUSTER, "-n", "shop", "--scale",
               "deployment/shop/web=6..10:2", "--add-node", "like=gen-c-3:0..2", "--price", "like=gen-c-3=0.38",
               "--workers", "1"],
     ["Pending pods against nodes added", "Fit probability against nodes added", "Cost against fit probability"]),
]


@pytest.mark.parametrize(("args", "headings"), [c[1:] for c in PAGES], ids=[f"the {c[0]} page" for c in PAGES])
def test_the_page_draws_in_chromium_without_console_errors(browser: Browser, tmp_path: Path, args: list[str],
                                                           headings: list[str]) -> None:
    page = html_of(args)
    assert len(page.encode()) < 3_000_000
    assert re.search(r"""(src|href)=["']?(https?:|//)|url\((?!#)""", page) is None  # nothing to fetch
    path = tmp_path / "report.html"
    path.write_text(page)
    png, errors = browser.open(path)
    assert errors == []
    assert not blank(png)
    assert browser.evaluate("document.querySelectorAll('svg').length") >= (0 if args[0] == "explain" else 1)
    text = browser.evaluate("document.body.innerText")
    for h in headings:
        assert h in text


def test_the_console_check_catches_a_page_that_tries_to_fetch(browser: Browser, tmp_path: Path) -> None:
    # the same policy as kplan's pages: a load from the network is refused and reported
    page = html_of(["simulate", str(FIX / "manifests" / "shop.yaml"), *CLUSTER])
    path = tmp_path / "tampered.html"
    path.write_text(page.replace("</body>", '<img src="http://192.0.2.1/x.png" alt=""></body>'))
    _, errors = browser.open(path)
    assert errors and "Content Security Policy" in " ".join(errors)


def node(i: int, pool: str) -> dict[str, Any]:
    return {"name": f"{pool}-{i:05d}", "pool": pool, "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
            "requested": {"cpu": f"{(i * 37) % 16000}m", "memory": f"{(i * 7) % 64}Gi"}, "pods": i % 110,
            "percent": {"cpu": (i * 37) % 16000 // 160, "memory": (i * 7) % 64 * 100 // 64, "pods": (i % 110) * 100 // 110}}


def simulation(nodes: int) -> SimulationDocument:
    pools = ("general", "memory", "spot")
    return decode(SimulationDocument, {"apiVersion": "kplan.dev/v1alpha1", "kind": "SimulationResult",
            "summary": {"nodes": nodes, "pending": 0, "scheduled": 0, "unschedulable": 0, "gated": 0, "preempted": 0,
                        "notCreated": 0, "replaced": 0},
            "pods": [], "preempted": [], "replaced": [], "nodes": [node(i, pools[i % 3]) for i in range(nodes)]})


def test_utilisation_is_per_node_up_to_a_few_hundred_nodes_and_per_pool_beyond(monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:
    import kplan.cli.render.html as html

    assert MAX_NODE_BARS == 300
    monkeypatch.setattr(html, "MAX_NODE_BARS", 30)  # the same rule, drawn faster
    few, more = render(simulation(30), "html"), render(simulation(31), "html")
    many = render(simulation(5000), "html")
    assert "general-00000" in few and "one bar per node" in few
    assert "general-00000" not in more and "general (11 nodes)" in more and "31 nodes are more than 30 bars" in more
    assert "general (1667 nodes)" in many and len(many.encode()) < 200_000


#: the pairs of texts of one chart whose boxes overlap or come within a pixel of each other
TOUCHING_TEXTS = """(() => {
  const out = [];
  document.querySelectorAll('svg').forEach((svg, n) => {
    const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
      .map(t => [t.textContent.trim(), t.getBoundingClientRect()]).filter(([, r]) => r.width > 0);
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const [a, ra] = texts[i], [b, rb] = texts[j];
        if (ra.left < rb.right + 1 && rb.left < ra.right + 1 && ra.top < rb.bottom + 1 && rb.top < ra.bottom + 1) {
          out.push(`chart ${n + 1}: '${a}' and '${b}'`);
        }
      }
    }
  });
  return out;
})()"""


@pytest.mark.parametrize("args", [c[1] for c in PAGES], ids=[f"the {c[0]} page" for c in PAGES])
def test_no_two_labels_of_a_chart_touch(browser: Browser, tmp_path: Path, args: list[str]) -> None:
    path = tmp_path / "report.html"
    path.write_text(html_of(args))
    browser.open(path)
    assert browser.evaluate(TOUCHING_TEXTS) == []


def test_the_touching_check_sees_labels_that_touch(browser: Browser, tmp_path: Path) -> None:
    path = tmp_path / "touching.html"
    path.write_text('<!DOCTYPE html><svg width="200" height="60"><text x="10" y="20" font-size="9">1. #0</text>'
                    '<text x="10" y="28" font-size="9">2. #1</text><text x="100" y="50" font-size="9">far</text></svg>')
    browser.open(path)
    assert browser.evaluate(TOUCHING_TEXTS) == ["chart 1: '1. #0' and '2. #1'"]
