"""Load every page of the built book in headless Chromium and check it.

Usage: ``python tests/browser_check.py _build/html``

For each HTML page it reports console errors, uncaught page errors, failed
requests (network failures and HTTP status >= 400) and plotly figures that
were not drawn (a figure counts as drawn when its container holds plotly's
``svg.main-svg``). Exit status 1 if any page has a problem.

Uses Debian's ``/usr/bin/chromium`` through Playwright; no browser is
downloaded. The site is served from a local HTTP server on 127.0.0.1.

Allowed, on lab pages only: requests to the CDN hosts from which myst-nb
loads the ipywidgets manager (they cannot load offline; the widgets then show
their static text fallback).
"""

from __future__ import annotations

import functools
import http.server
import os
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDGET_CDN_HOSTS = {"cdn.jsdelivr.net", "unpkg.com", "cdnjs.cloudflare.com"}
SKIP = {"genindex.html", "search.html"}


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the report readable
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # the browser closed early
        pass


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def allowed(page: str, url: str) -> bool:
    return page.startswith("labs/") and urlparse(url).hostname in WIDGET_CDN_HOSTS


def check_page(context, base: str, rel: str) -> tuple[list[str], int]:
    problems: list[str] = []
    page = context.new_page()

    def on_console(msg):
        if msg.type == "error":
            url = (msg.location or {}).get("url", "")
            if not allowed(rel, url):
                problems.append(f"console error: {msg.text} ({url})")

    page.on("console", on_console)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on(
        "requestfailed",
        lambda req: None if allowed(rel, req.url) else problems.append(f"request failed: {req.url} ({req.failure})"),
    )
    page.on(
        "response",
        lambda resp: problems.append(f"HTTP {resp.status}: {resp.url}")
        if resp.status >= 400 and not allowed(rel, resp.url)
        else None,
    )
    page.goto(f"{base}/{rel}", wait_until="load")
    try:
        page.wait_for_load_state("networkidle", timeout=15000)
    except Exception:  # a page that keeps polling is reported by the counts below
        pass
    figures = page.locator(".npukit-plotly").count()
    drawn = page.locator(".npukit-plotly .js-plotly-plot svg.main-svg").evaluate_all(
        "els => new Set(els.map(e => e.closest('.npukit-plotly'))).size"
    )
    if drawn != figures:
        problems.append(f"{figures - drawn} of {figures} plotly figures not drawn")
    page.close()
    return problems, figures


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    root = Path(argv[1])
    pages = sorted(str(p.relative_to(root)) for p in root.rglob("*.html") if not p.name.startswith("_"))
    pages = [p for p in pages if p not in SKIP and not p.startswith(("_static/", "_sources/", "_images/"))]
    if not pages:
        print(f"browser check: no HTML pages under {root}; build the book first")
        return 1
    from playwright.sync_api import sync_playwright

    server, base = serve(root)
    failures = 0
    total_figures = 0
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            context = browser.new_context()
            for rel in pages:
                problems, figures = check_page(context, base, rel)
                total_figures += figures
                status = "ok " if not problems else "FAIL"
                print(f"  {status} {rel}  ({figures} figures)")
                for p in problems:
                    print(f"       - {p}")
                failures += bool(problems)
            browser.close()
    finally:
        server.shutdown()
    print(
        f"browser check: {len(pages)} pages, {total_figures} plotly figures; "
        f"{len(pages) - failures} passed, {failures} failed"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
