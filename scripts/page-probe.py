#!/usr/bin/env python3
"""Drives headless Chromium over the Chrome DevTools protocol for the page test.

    python3 scripts/page-probe.py URL STEPS.json

Opens URL in a fresh headless Chromium, waits for its load event, then runs the steps in order,
printing one JSON line per step ({"name", "ok", "value", "ms"}: the value the step read and how
long after the load it passed). Steps:

    {"name": "...", "until": "JS expression", "timeout": 30}  waits until the expression is truthy
    {"name": "...", "eval": "JS expression"}                   reads a value
    {"name": "...", "screenshot": "out.png", "width": 1280}    saves the whole page as PNG

The first step that fails ends the run with exit status 1, after a line with the page's text.
`--dump-dom` returns at the load event, before any server-sent event arrives, and
`--virtual-time-budget` never ends while a stream is open, so a live page is read this way.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket


def browser_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("page-probe: no chromium found (scripts/install-deps.sh installs Debian's chromium)")


class Page:
    def __init__(self, url):
        self.profile = tempfile.mkdtemp(prefix="page-probe-")
        self.browser = subprocess.Popen(
            [browser_binary(), "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
             "--remote-debugging-port=0", "--remote-allow-origins=*", "--user-data-dir=" + self.profile,
             "--window-size=1280,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 60
        while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
            if time.time() > deadline or self.browser.poll() is not None:
                self.close()
                sys.exit("page-probe: chromium did not open its DevTools port")
            time.sleep(0.1)
        with open(port_file) as f:
            port = int(f.readline().strip())
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(t for t in targets if t.get("type") == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
        self.next_id = 0
        self.events = []
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired", 60)

    def call(self, method, **params):
        self.next_id += 1
        ident = self.next_id
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message["method"])

    def wait_event(self, name, seconds):
        deadline = time.time() + seconds
        while name not in self.events:
            if time.time() > deadline:
                raise RuntimeError(f"no {name} within {seconds} s")
            message = json.loads(self.socket.recv())
            if "method" in message:
                self.events.append(message["method"])

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("text", "exception"))
        return result["result"].get("value")

    def screenshot(self, path, width):
        height = int(self.evaluate("Math.ceil(document.documentElement.scrollHeight)") or 900)
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return height

    def close(self):
        try:
            self.browser.terminate()
            self.browser.wait(timeout=10)
        except Exception:
            self.browser.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def run(page, step):
    if "until" in step:
        deadline = time.time() + float(step.get("timeout", 30))
        while True:
            value = page.evaluate(step["until"])
            if value:
                return value
            if time.time() > deadline:
                raise RuntimeError(f"not true within {step.get('timeout', 30)} s: {step['until']}")
            time.sleep(0.2)
    if "eval" in step:
        return page.evaluate(step["eval"])
    if "screenshot" in step:
        return page.screenshot(step["screenshot"], int(step.get("width", 1280)))
    raise RuntimeError("a step needs until, eval or screenshot")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: page-probe.py URL STEPS.json")
    with open(sys.argv[2]) as f:
        steps = json.load(f)
    page = Page(sys.argv[1])
    started = time.time()
    try:
        for step in steps:
            try:
                value = run(page, step)
            except Exception as error:
                print(json.dumps({"name": step.get("name"), "ok": False, "error": str(error)}), flush=True)
                print(json.dumps({"page": page.evaluate("document.body.innerText")}), flush=True)
                sys.exit(1)
            print(json.dumps({"name": step.get("name"), "ok": True, "value": value, "ms": int((time.time() - started) * 1000)}), flush=True)
    finally:
        page.close()


if __name__ == "__main__":
    main()
