"""The JupyterHub launch button appears only when an instructor sets their hub's address.

``launch_buttons.jupyterhub_url`` in ``_config.yml``: sphinx-book-theme adds the button when the value is
a non-empty string and leaves it out when it is ``""``; a bare ``jupyterhub_url:`` (YAML null) stops the
build (the theme calls ``.strip()`` on it). Checked by building a one-page book both ways (see the
instructor guide, "Running the labs"). Cost: well under a second; the built-page test needs ``make book``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parent.parent


def _hub() -> object:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return config["launch_buttons"].get("jupyterhub_url", "")


def test_hub_url_is_a_string_and_not_a_placeholder():
    url = _hub()
    assert isinstance(url, str), "jupyterhub_url must be a string: \"\" for no button (a bare key stops the build)"
    assert url == "" or (url.startswith("https://") and "example." not in url), url


def test_built_lab_pages_link_the_hub_only_when_set():
    page = ROOT / "_build" / "html" / "labs" / "05_systolic.html"
    if not page.exists():
        pytest.skip("no built book: run `make book`")
    html = page.read_text(encoding="utf-8")
    url = str(_hub()).rstrip("/")
    assert ("/hub/user-redirect/git-pull" in html) == bool(url)
    assert "hub.example.org" not in html
