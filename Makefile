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

.PHONY: help setup book book-zh gettext translation-status book-nocheck book-check test unit loaded load-test labs chapters student-test browser-check lab student bench labs-run chapter clean weights scalesim-check scalesim-reference nbgrader-check metadata grade bank bank-check headless-check grade-check labs-busy labs-quiet

help:
	@echo "make book    - set up .venv and build the HTML book strictly (every page executed), English and Chinese"
	@echo "make gettext - extract the English messages into locale/zh_CN/ (the Chinese edition's catalogues)"
	@echo "make translation-status - how much of the Chinese edition is translated"
	@echo "make test    - set up .venv and run every test (unit, labs, student edition, grading, book with its chapters executed, browser)"
	@echo "make lab     - open JupyterLab on the labs"
	@echo "make student - rewrite the student edition of the labs in labs/student/ (committed)"
	@echo "make metadata - write the labs' nbgrader cell metadata (idempotent)"
	@echo "make grade SUB='submissions/*.ipynb' [CSV=grades.csv] - grade submissions with the instructor's checks"
	@echo "make bench   - measure the performance goals side by side"
	@echo "make bank OUT=bank.gift.txt [SEED=N] - write the question bank for Moodle (GIFT format)"
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
$(CACHE_STAMP): $(wildcard npukit/*.py npukit/*/*.py npukit/*/*/*.py npukit/data/*)
	rm -rf _build/.jupyter_cache
	@mkdir -p _build && touch $(CACHE_STAMP)

# The build's shared measurements (npukit.shared: the machine profile, latencies, accuracy …) live in
# $(STORE); every page of one build reads them from there. A build starts a fresh store, and drops the
# execution cache with it: a cached page would show the old store's numbers next to the new ones.
STORE := _build/npukit-store

book: $(STAMP) $(CACHE_STAMP)
	rm -rf $(STORE) _build/.jupyter_cache
	$(JB) clean . >/dev/null
	@mkdir -p _build && date +%s > _build/.book-start
	NPUKIT_STORE=$(CURDIR)/$(STORE) $(JB) build . -W -n --keep-going
	@date +%s > _build/.book-en
	$(MAKE) --no-print-directory book-zh
	$(PY) tests/edition_check.py _build/html
	@echo
	@echo "make book: English edition (every page executed) $$(( $$(cat _build/.book-en) - $$(cat _build/.book-start) )) s, Chinese edition and edition check $$(( $$(date +%s) - $$(cat _build/.book-en) )) s"
	@echo "The book is at $(CURDIR)/_build/html/index.html"
	@echo "中文版 (the Chinese edition) is at $(CURDIR)/_build/html/zh/index.html"

# The Chinese edition: the same project built with language zh_CN by sphinx-build
# (Jupyter Book 1's CLI cannot pass -D), from the conf.py that `jupyter-book config
# sphinx` writes from _config.yml (generated, not committed). It reads every notebook
# from the execution cache the English build filled (npukit/i18n.py warns if it had
# to execute one), and is moved under the English site as zh/ (built elsewhere first:
# myst-nb writes its notebook files next to the output directory).
ZH_OPTS := -D language=zh_CN -D "html_title=Tensors on Silicon 中文版" \
	-D nb_execution_cache_path=$(CURDIR)/_build/.jupyter_cache
book-zh: $(STAMP)
	$(JB) config sphinx . >/dev/null
	rm -rf _build/zh _build/html/zh
	$(BIN)/sphinx-build -b html -W -n --keep-going $(ZH_OPTS) -d _build/zh/doctrees . _build/zh/html
	mv _build/zh/html _build/html/zh

# Extract the English messages and update locale/zh_CN/ (then translate, then make book).
gettext: $(STAMP)
	$(PY) tools/i18n.py extract

# How much of the Chinese edition is translated (fails if a required page is not).
translation-status: $(STAMP)
	$(PY) tools/i18n.py status

# ---- tests ------------------------------------------------------------------
# Each stage's wall time is printed after it and again at the end (the budgets: make test <= 15 min, and
# the book stage, both editions, is the part a reader's `make book` runs).
TEST_STAGES := unit loaded student-test nbgrader-check book book-check browser-check
test: $(STAMP)
	@set -e; start=$$(date +%s); times=""; \
	for stage in $(TEST_STAGES); do \
	  t=$$(date +%s); $(MAKE) --no-print-directory $$stage; \
	  times="$$times $$stage=$$(( $$(date +%s) - t ))s"; echo "make test: $$stage took $$(( $$(date +%s) - t )) s"; \
	done; \
	echo "make test: all checks passed in $$(( $$(date +%s) - start )) s:$$times"

# Two pytest workers (pytest-xdist). No unit test's outcome depends on a timing (make bench and make load-test measure). The notebook
# tests run labs whose timing checks re-measure in interleaved rounds; make load-test holds those checks under two
# busy processes, more than one other worker. On 2 cores: unit 170 s -> 135 s, student-test 186 s -> 133 s.
XDIST := -n 2
unit: $(STAMP)
	$(PYTEST) -q $(XDIST) --doctest-modules npukit tests -m "not slow and not book and not load"

# Every timing check with its reference answer (10 tries) and its typical wrong answers, while two busy
# processes (tests/busy.py) compete for the cores; prints a line per check with its reruns. Then the timing
# checks' passing examples (tests/test_teach_examples.py, a few seconds, on the machine as it is). Its cost is wall
# time waiting for the cores: about 30 s of CPU time in the test's process; about 50 s with only its own two busy
# processes running (load average about 3), 3.5-5.5 min measured on this
# project's shared 2-core machine at a load average of 10-20 (see tests/test_timing_checks.py).
load-test: $(STAMP)
	$(PYTEST) -q -s tests/test_timing_checks.py tests/test_teach_examples.py -m load

# The built book quotes each shared quantity with one value (tables and prose; reads _build, < 1 s).
book-check: $(STAMP)
	$(PYTEST) -q tests/test_built_book.py -m book

# The labs under nbval while two bursty busy processes compete for the cores (tests/busy.py), as on a
# shared hub: every lab's stored outputs must come back, its timing checks included (their cells print
# what does not depend on the run's speed; make load-test holds each timing check to its reference and its
# typical wrong answers under the same load). About 50-70 s on 2 cores (45 s without the load: labs-quiet).
labs: $(STAMP)
	$(PY) tests/busy.py -- $(PYTEST) -q $(NBVAL) labs

labs-quiet: $(STAMP)
	$(PYTEST) -q $(NBVAL) labs

# make test's second stage: the load test, the labs, SCALE-Sim and the question bank's parser at once. The
# labs run beside the load test's checks and SCALE-Sim's numba compiles, as on a busy shared hub, and beside
# the load test's two busy processes for most of their run (those stop with tests/test_timing_checks.py, which
# took 70-96 s where the labs took 73-80 s; alone, `make labs` brings busy processes of its own). The load test
# holds its checks under that extra load too: about 90 s on 2 cores, against 36 + 51 + 55 + 15 s in a row.
loaded: $(STAMP)
	$(MAKE) --no-print-directory -j4 load-test labs-quiet scalesim-check bank-check

# The former name of `make labs`.
labs-busy: labs

# Every chapter executed as a notebook, outside the book (not in make test: make book
# executes every chapter in its strict build, so this would run them twice).
chapters: $(STAMP)
	rm -rf $(STORE)
	NPUKIT_STORE=$(CURDIR)/$(STORE) $(PYTEST) -q --myst --nbval-lax --nbval-current-env --nbval-cell-timeout=120 chapters

# Every test that executes notebooks (marked slow): the student edition runs with only its
# unfinished exercises failing, the grader scores real submissions, the checkers' notebook tests.
# (tests/test_nbgrader.py skips here: nbgrader-check runs it with nbgrader installed.)
student-test: $(STAMP)
	$(PYTEST) -q $(XDIST) --dist loadfile tests -m slow   # by file: a module fixture (test_grade's grading run, 60-70 s) runs once

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
	NBGRADER_VENV=$(CURDIR)/$(NBGVENV) $(PYTEST) -q $(XDIST) tests/test_nbgrader.py -m slow

# ---- question bank: the GIFT export read back by an independent parser --------------
# gift-pegjs (npm, MIT) is a PEG grammar of Moodle's GIFT format; it is installed
# once into .node-gift (stamp file, a second) and parses the whole export (a second).
GIFTDIR   := .node-gift
GIFTSTAMP := $(GIFTDIR)/.installed

$(GIFTSTAMP):
	npm install --silent --no-audit --no-fund --prefix $(GIFTDIR) gift-pegjs@1.0.2
	@touch $(GIFTSTAMP)

bank-check: $(STAMP)
	@if command -v node >/dev/null && command -v npm >/dev/null; then \
		$(MAKE) --no-print-directory $(GIFTSTAMP) && \
		GIFT_PEGJS=$(CURDIR)/$(GIFTDIR)/node_modules $(PYTEST) -q tests/test_bank.py; \
	else \
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
		echo "!! SKIPPED the GIFT parser check: node and npm are not installed.       !!"; \
		echo "!! Install them with: apt-get install nodejs npm                        !!"; \
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
	fi

OUT  ?= bank.gift.txt
SEED ?=
bank: $(STAMP)
	$(PY) -m npukit.teach.bank gift -o $(OUT) $(if $(SEED),--seed $(SEED))

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
SSREF   := npukit/data/scalesim_reference.json

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
# (it keeps the store of earlier runs, so a chapter alone runs fast and quotes what the others quoted)
chapter: $(STAMP)
	NPUKIT_STORE=$(CURDIR)/$(STORE) $(PYTEST) -q --myst --nbval-lax --nbval-current-env --nbval-cell-timeout=120 $(CH)

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
