# Tensors on Silicon — build and test commands.
# On a fresh machine with Python 3 and make, `make book` and `make test` create
# .venv and install everything they need from this repository's own files.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP  := $(VENV)/.installed
LABSTAMP := $(VENV)/.installed-lab
JB     := $(BIN)/jupyter-book
PYTEST := $(PY) -m pytest -p no:cacheprovider
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with nbval_sanitize.cfg --nbval-cell-timeout=120
export PYDEVD_DISABLE_FILE_VALIDATION := 1
export OPENBLAS_NUM_THREADS ?= 2
# plotly's kernels output JSON; the book renders it with npukit's mime renderer.

.PHONY: help setup book book-nocheck test unit labs chapters student-test browser-check lab student bench labs-run chapter clean weights scalesim-check scalesim-reference nbgrader-check metadata grade headless-check grade-check

help:
	@echo "make book    - set up .venv and build the HTML book strictly (every page executed)"
	@echo "make test    - set up .venv and run every test (unit, labs, chapters, student edition, book, browser)"
	@echo "make lab     - open JupyterLab on the labs"
	@echo "make student - rewrite the student edition of the labs in labs/student/ (committed)"
	@echo "make metadata - write the labs' nbgrader cell metadata (idempotent)"
	@echo "make grade SUB='submissions/*.ipynb' [CSV=grades.csv] - grade submissions with the instructor's checks"
	@echo "make bench   - measure the performance goals side by side"
	@echo "make scalesim-check - run SCALE-Sim 3.0.0 (own venv) and compare systolic.estimate with it"

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[book,test]"
	@touch $(STAMP)

setup: $(STAMP)

# ---- the book ---------------------------------------------------------------
# jupyter-cache keys a page on its own code only: when npukit changes, every
# page must run again, so the execution cache is dropped.
CACHE_STAMP := _build/.npukit-cache-stamp
$(CACHE_STAMP): $(wildcard npukit/*.py npukit/*/*.py npukit/data/*)
	rm -rf _build/.jupyter_cache
	@mkdir -p _build && touch $(CACHE_STAMP)

book: $(STAMP) $(CACHE_STAMP)
	$(JB) clean . >/dev/null
	$(JB) build . -W -n --keep-going
	@echo
	@echo "The book is at $(CURDIR)/_build/html/index.html"

# ---- tests ------------------------------------------------------------------
test: $(STAMP)
	$(MAKE) --no-print-directory unit
	$(MAKE) --no-print-directory scalesim-check
	$(MAKE) --no-print-directory labs
	$(MAKE) --no-print-directory chapters
	$(MAKE) --no-print-directory student-test
	$(MAKE) --no-print-directory nbgrader-check
	$(MAKE) --no-print-directory book
	$(MAKE) --no-print-directory browser-check
	@echo "make test: all checks passed."

unit: $(STAMP)
	$(PYTEST) -q --doctest-modules npukit tests -m "not slow"

labs: $(STAMP)
	$(PYTEST) -q $(NBVAL) labs

chapters: $(STAMP)
	$(PYTEST) -q --myst --nbval-lax --nbval-current-env --nbval-cell-timeout=120 chapters

# Every test that executes notebooks (marked slow): the student edition runs with only its
# unfinished exercises failing, the grader scores real submissions, the checkers' notebook tests.
# (tests/test_nbgrader.py skips here: nbgrader-check runs it with nbgrader installed.)
student-test: $(STAMP)
	$(PYTEST) -q tests -m slow

# ---- nbgrader round trip (issue 14) ---------------------------------------------
# nbgrader 0.9 pins Jupyter server packages, so it lives in a virtual environment
# of its own, installed once (stamp file, about a minute). The test builds a course
# directory, runs nbgrader generate_assignment on a lab and nbgrader autograde on
# submissions, with the notebooks executed by this repository's .venv kernel.
NBGVENV  := .venv-nbgrader
NBGSTAMP := $(NBGVENV)/.installed

$(NBGSTAMP):
	@test -x $(NBGVENV)/bin/python || $(PYTHON) -m venv $(NBGVENV)
	$(NBGVENV)/bin/python -m pip install --quiet "nbgrader>=0.9,<0.10"
	@touch $(NBGSTAMP)

nbgrader-check: $(STAMP) $(NBGSTAMP)
	NBGRADER_VENV=$(CURDIR)/$(NBGVENV) $(PYTEST) -q tests/test_nbgrader.py -m slow

browser-check: $(STAMP)
	@if [ -x /usr/bin/chromium ]; then \
		$(PY) tests/browser_check.py _build/html; \
	else \
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
		echo "!! SKIPPED the browser check: /usr/bin/chromium is not installed.      !!"; \
		echo "!! Install it with: apt-get install chromium   (.ci/run does this).    !!"; \
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
	fi

# ---- SCALE-Sim cross-check (chapter 5) ----------------------------------------------
# SCALE-Sim 3.0.0 needs numpy<2.4 and pulls numba, pandas and matplotlib, so it
# lives in a virtual environment of its own, installed once (stamp file).
# scalesim-check runs it on small GEMM and conv layers (about 15 s) and compares
# npukit.systolic.estimate with its output; scalesim-reference rewrites the
# committed copy of that output, which the unit tests compare against.
SSVENV  := .venv-scalesim
SSSTAMP := $(SSVENV)/.installed
SSREF   := tests/data/scalesim_reference.json

$(SSSTAMP):
	@test -x $(SSVENV)/bin/python || $(PYTHON) -m venv $(SSVENV)
	$(SSVENV)/bin/python -m pip install --quiet "scalesim==3.0.0" "numpy<2.4"
	@touch $(SSSTAMP)

scalesim-check: $(STAMP) $(SSSTAMP)
	@mkdir -p _build
	$(SSVENV)/bin/python tools/scalesim_reference.py _build/scalesim_live.json
	SCALESIM_REFERENCE=_build/scalesim_live.json $(PYTEST) -q tests/test_systolic.py -k scalesim

scalesim-reference: $(SSSTAMP)
	$(SSVENV)/bin/python tools/scalesim_reference.py $(SSREF)

# ---- authoring helpers --------------------------------------------------------
# Run one chapter under pytest: make chapter CH=chapters/01_tensors.md
chapter: $(STAMP)
	$(PYTEST) -q --myst --nbval-lax --nbval-current-env --nbval-cell-timeout=120 $(CH)

# Re-execute labs in place and save their outputs: make labs-run [LAB=labs/01_tensors.ipynb]
# (nbconvert --execute --inplace, with the fix for widget cells that froze headless: npukit/_jupyter.py)
LAB ?= labs/*.ipynb
labs-run: $(STAMP)
	$(PY) -m npukit._jupyter run --timeout 120 $(LAB)

# Grade a fresh clone's labs three ways (student edition 0, instructor edition full, all wrong with the
# universal attacks 0) and time a class of CLASS submissions of one lab (several minutes).
CLASS ?= 30
grade-check: $(STAMP)
	$(PY) tools/grade_check.py --class $(CLASS)

# Run every lab headless N times with a per-cell limit and report a frozen cell (several minutes a lab;
# make test runs a cheap version): make headless-check [N=10] [LAB=labs/05_systolic.ipynb]
N ?= 10
headless-check: $(STAMP)
	$(PY) tools/headless_runs.py --runs $(N) --limit 60 $(LAB)

$(LABSTAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[lab]"
	@touch $(LABSTAMP)

lab: $(LABSTAMP)
	$(BIN)/jupyter lab labs $$([ "$$(id -u)" = 0 ] && echo --allow-root)

student: $(STAMP)
	$(PY) -m npukit.teach student labs -o labs/student

metadata: $(STAMP)
	$(PY) -m npukit.teach metadata labs

SUB ?=
CSV ?=
grade: $(STAMP)
	@test -n "$(SUB)" || { echo "usage: make grade SUB='submissions/*.ipynb' [CSV=grades.csv]"; exit 2; }
	$(PY) -m npukit.teach grade $(SUB) $(if $(CSV),--csv $(CSV))

bench: $(STAMP)
	$(PY) bench/run.py

clean:
	rm -rf _build student .pytest_cache

# Re-train CameraNet and rewrite npukit/data/cameranet.npz (deterministic).
weights: $(STAMP)
	$(PY) -m npukit.train
