"""Load every page of the built book in headless Chromium and check it.

Usage: ``python tests/browser_check.py _build/html``

For each HTML page it reports console errors, uncaught page errors, failed
requests (network failures and HTTP status >= 400) and plotly figures that
were not drawn (a figure counts as drawn when its container holds plotly's
``svg.main-svg``). Exit status 1 if any page has a problem.

Uses Debian's ``/usr/bin/chromium`` through Playwright; no browser is
downloaded. The site is served from a local HTTP server on 127.0.0.1.

Nothing is allowed to reach the network: labs' live controls (ipywidgets)
appear in the book as plotly sliders, and no widget manager is loaded
(``nb_ipywidgets_js: {}`` in ``_config.yml``).

Both editions are checked: the English one at the root of the site and the
Chinese one under ``zh/`` (``make book`` builds both). A request to any host
but the local server is a problem too, so a page that would fetch a font, a
script or a widget manager from the network fails even on a machine that is
online (the Chinese pages use the reader's own CJK fonts, ``_static/npukit.css``).

It also counts interactive figures — plotly sliders and animation frames —
and, on a slider, moves it to its last step and checks the figure is still
drawn without errors, so a static control is known to work.
"""

from __future__ import annotations

import functools
import http.server
import os
import sys
import threading
from pathlib import Path

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
SKIP = {"genindex.html", "search.html"}
#: The editions: the English one at the site's root, the Chinese one in its folder.
EDITIONS = {"": "English", "zh/": "Chinese"}
#: Pages with an animation, and the fewest frames each must have (a figure whose
#: frames were lost would still draw, so the count is checked), in every edition.
MIN_FRAMES = {f"{prefix}{page}": 100 for prefix in EDITIONS
              for page in ("chapters/05_systolic.html", "labs/05_systolic.html")}
NOT_PAGES = ("_static/", "_sources/", "_images/")


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



# In the page: for every plotly figure with a slider, move it to its last step
# (what a reader's drag does) and count frames of animated figures.
_MOVE_SLIDERS = """
async () => {
  const out = {sliders: 0, frames: 0, broken: 0};
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    const frames = (gd._transitionData && gd._transitionData._frames) || [];
    out.frames += frames.length;
    const sliders = (gd.layout && gd.layout.sliders) || [];
    for (let i = 0; i < sliders.length; i++) {
      out.sliders += 1;
      const steps = sliders[i].steps || [];
      const last = steps[steps.length - 1];
      try {
        if (last && last.method === 'update') await Plotly.update(gd, ...last.args);
        else if (last && last.method === 'animate') await Plotly.animate(gd, ...last.args);
        else if (last && last.method === 'restyle') await Plotly.restyle(gd, ...last.args);
        else if (last && last.method === 'relayout') await Plotly.relayout(gd, ...last.args);
        if (!gd.querySelector('svg.main-svg')) out.broken += 1;
      } catch (e) { out.broken += 1; }
    }
  }
  return out;
}
"""


def check_page(context, base: str, rel: str) -> tuple[list[str], int, dict]:
    problems: list[str] = []
    page = context.new_page()

    def on_console(msg):
        if msg.type == "error":
            url = (msg.location or {}).get("url", "")
            problems.append(f"console error: {msg.text} ({url})")

    page.on("console", on_console)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("requestfailed", lambda req: problems.append(f"request failed: {req.url} ({req.failure})"))
    page.on("response", lambda resp: problems.append(f"HTTP {resp.status}: {resp.url}") if resp.status >= 400 else None)
    page.on("request", lambda req: None if req.url.startswith((base, "data:", "blob:", "about:"))
            else problems.append(f"network request off the local site: {req.url}"))
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
    interactive = page.evaluate(_MOVE_SLIDERS)
    if interactive["frames"] < MIN_FRAMES.get(rel, 0):
        problems.append(f"{interactive['frames']} animation frames, expected at least {MIN_FRAMES[rel]}")
    if interactive["broken"]:
        problems.append(f"{interactive['broken']} interactive figures failed when their slider moved")
    page.close()
    return problems, figures, interactive


#: Browsers checking pages side by side, each in its own process with its own Chromium
#: (2 cores: the pages took 3 s each one at a time).
JOBS = int(os.environ.get("BROWSER_CHECK_JOBS", "2"))


def _check_pages(base: str, rels: list[str]) -> list[tuple[str, tuple[list[str], int, dict]]]:
    """Check ``rels`` in one headless Chromium: each page's problems, figure count and interactive counts."""
    from playwright.sync_api import sync_playwright

    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        context = browser.new_context()
        for rel in rels:
            out.append((rel, check_page(context, base, rel)))
        browser.close()
    return out


def _edition(rel: str) -> tuple[str, str]:
    """(edition name, the page's path inside its edition) of a page's path in the site."""
    for prefix, name in sorted(EDITIONS.items(), key=lambda kv: -len(kv[0])):
        if prefix and rel.startswith(prefix):
            return name, rel[len(prefix):]
    return EDITIONS[""], rel


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    root = Path(argv[1])
    pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html") if not p.name.startswith("_"))
    pages = [p for p in pages if _edition(p)[1] not in SKIP and not _edition(p)[1].startswith(NOT_PAGES)]
    if not pages:
        print(f"browser check: no HTML pages under {root}; build the book first")
        return 1
    server, base = serve(root)
    failures = 0
    per_edition = {name: [0, 0] for name in EDITIONS.values()}  # pages, failed
    total_figures = total_sliders = total_frames = 0
    jobs = max(1, min(JOBS, len(pages)))
    shards = [pages[k::jobs] for k in range(jobs)]   # one browser per shard, in its own process
    try:
        if jobs == 1:
            results = dict(_check_pages(base, shards[0]))
        else:
            import multiprocessing

            with multiprocessing.get_context("fork").Pool(jobs) as pool:
                results = {rel: r for part in pool.starmap(_check_pages, [(base, sh) for sh in shards])
                           for rel, r in part}
        for rel in pages:
            problems, figures, interactive = results[rel]
            total_figures += figures
            total_sliders += interactive["sliders"]
            total_frames += interactive["frames"]
            status = "ok " if not problems else "FAIL"
            print(f"  {status} {rel}  ({figures} figures, {interactive['sliders']} sliders, "
                  f"{interactive['frames']} animation frames)")
            for p in problems:
                print(f"       - {p}")
            failures += bool(problems)
            per_edition[_edition(rel)[0]][0] += 1
            per_edition[_edition(rel)[0]][1] += bool(problems)
    finally:
        server.shutdown()
    editions = "; ".join(f"{name}: {n} pages, {bad} failed" for name, (n, bad) in per_edition.items())
    print(
        f"browser check ({editions}): {len(pages)} pages, {total_figures} plotly figures "
        f"({total_sliders} sliders moved, {total_frames} animation frames); "
        f"{len(pages) - failures} passed, {failures} failed"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
