"""Book glue for the labs: every lab page offers its student edition.

The book publishes the instructor's lab notebooks, with each solution
collapsed under its exercise for readers who learn on their own. Students
need the exercise version: this Sphinx extension (listed in ``_config.yml``)

* adds a box at the top of every lab page with the student edition
  (``labs/student/NN_name.ipynb``, committed and kept in sync by a test): a
  download from the book itself, and Binder and Colab links built from
  ``repository.url`` in ``_config.yml``;
* points the page's launch buttons (Binder, JupyterHub, Colab) at the student
  edition instead of the instructor's notebook.

See the instructor guide, "The student edition" (chapters/instructor.md).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["setup", "student_links", "student_box"]

_LAB = re.compile(r"^labs/(\d\d_\w+)$")


def _repository(config: Any) -> tuple[str, str, str, str, str]:
    """(repository URL, org, repo, branch, path to the book) from the Sphinx config jupyter-book writes."""
    options = getattr(config, "html_theme_options", {}) or {}
    url = str(options.get("repository_url", "")).rstrip("/")
    m = re.match(r"^https://github\.com/([^/]+)/([^/]+?)(\.git)?$", url)
    org, repo = (m.group(1), m.group(2)) if m else ("", "")
    branch = str(options.get("repository_branch", "") or "main")
    path = str(options.get("path_to_docs", "") or "").strip("/")
    return url, org, repo, branch, (path + "/" if path else "")


def student_links(config: Any, lab: str) -> dict[str, str]:
    """Links to ``labs/student/<lab>.ipynb``: "github", "binder" and "colab" (those that can be built).

    Examples
    --------
    >>> class C:
    ...     html_theme_options = {"repository_url": "https://github.com/o/r", "repository_branch": "main",
    ...                           "launch_buttons": {"binderhub_url": "https://mybinder.org",
    ...                                              "colab_url": "https://colab.research.google.com"}}
    >>> student_links(C(), "01_tensors")["colab"]
    'https://colab.research.google.com/github/o/r/blob/main/labs/student/01_tensors.ipynb'
    """
    url, org, repo, branch, path = _repository(config)
    launch = (getattr(config, "html_theme_options", {}) or {}).get("launch_buttons", {}) or {}
    target = f"{path}labs/student/{lab}.ipynb"
    links = {}
    if org:
        links["github"] = f"{url}/blob/{branch}/{target}"
        if launch.get("binderhub_url"):
            links["binder"] = f"{launch['binderhub_url'].rstrip('/')}/v2/gh/{org}/{repo}/{branch}?urlpath=lab/tree/{target}"
        if launch.get("colab_url"):
            links["colab"] = f"{launch['colab_url'].rstrip('/')}/github/{org}/{repo}/blob/{branch}/{target}"
    return links


def student_box(config: Any, lab: str) -> str:
    """The MyST markdown of the box at the top of a lab page."""
    links = student_links(config, lab)
    online = [f"[open it in Binder]({links['binder']})" if "binder" in links else "",
              f"[in Colab]({links['colab']})" if "colab" in links else "",
              f"[see it on GitHub]({links['github']})" if "github" in links else ""]
    online = [x for x in online if x]
    return (":::{admonition} Do this lab: the student edition\n:class: tip\n"
            "This page is the lab with its reference solutions, folded away under each exercise for readers "
            "who learn on their own. To do the lab, take the **student edition**: every solution is removed and "
            "every check is ready to run. "
            f"{{download}}`Download it <student/{lab}.ipynb>`"
            + (", " + ", ".join(online[:-1]) + (" or " if len(online) > 1 else "") + online[-1] if online else "")
            + ". The launch buttons at the top of this page open the student edition too.\n:::\n")


def _add_box(app: Any, docname: str, source: list[str]) -> None:
    m = _LAB.match(docname)
    if not m or not source or not source[0].lstrip().startswith("{"):
        return
    nb = json.loads(source[0])
    cell = {"cell_type": "markdown", "id": "npukit-student-edition", "metadata": {},
            "source": student_box(app.config, m.group(1))}
    nb["cells"].insert(1 if nb.get("cells") else 0, cell)
    source[0] = json.dumps(nb, ensure_ascii=False)


def _launch_student(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    m = _LAB.match(pagename)
    if not m:
        return
    instructor, student = f"labs/{m.group(1)}.ipynb", f"labs/student/{m.group(1)}.ipynb"

    def walk(buttons: Any) -> None:
        for b in buttons or ():
            if isinstance(b, dict):
                if b.get("text") in ("Binder", "JupyterHub", "Colab", "Deepnote", "JupyterLite") and "url" in b:
                    b["url"] = b["url"].replace(instructor, student)
                walk(b.get("buttons"))

    walk(context.get("header_buttons"))


def setup(app: Any) -> dict:
    """Register the student-edition box and the launch-button rewrite."""
    app.connect("source-read", _add_box)
    app.connect("html-page-context", _launch_student, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
