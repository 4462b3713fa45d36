# The two commands of the README: `make run` starts ConvScope, `make test` runs every test.
# Both create the virtual environment .venv on first use.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
HOST   ?= 127.0.0.1
PORT   ?= 8000
# pytest-xdist workers: one per core. A test file runs whole on one worker (--dist
# loadfile), so a module's one server and one Chromium serve all its tests.
JOBS   ?= auto

.PHONY: run test check lint bench system-deps clean

run: $(VENV)/.installed
	$(VENV)/bin/convscope serve --host $(HOST) --port $(PORT)

# The tests marked `alone` measure time under a load they make themselves (a p99, a
# 100 ms health answer), or wait on timing a class of pages makes; they run after the
# parallel part, by themselves.
test: $(VENV)/.installed system-deps lint
	node --test tests/js/
	$(PY) -m pytest -n $(JOBS) --dist loadfile -m "not alone" --durations=30
	$(PY) -m pytest -m alone

# The fast tier for a developer's loop: the page's units and every Python test not marked
# browser or slow (no Chromium, and none of the long server runs), property tests with a
# quarter of their examples (hypothesis profile "dev", tests/conftest.py). CI runs `test`.
check: $(VENV)/.installed lint
	node --test tests/js/
	HYPOTHESIS_PROFILE=dev $(PY) -m pytest -n $(JOBS) --dist loadfile -m "not browser and not slow" -q

# The Python code as ruff formats it, and its lint (pyproject's [tool.ruff]); `ruff format .`
# and `ruff check --fix .` mend most of what it finds.
lint: $(VENV)/.installed
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .

# Every benchmark prints ratios measured side by side in one run; figures in docs/benchmarks.md.
bench: $(VENV)/.installed system-deps
	$(PY) bench/core.py
	$(PY) bench/trace.py
	$(PY) bench/server.py
	$(PY) bench/page.py
	$(PY) bench/follow.py
	$(PY) bench/classroom.py --against d021669
	$(PY) bench/export.py
	$(PY) bench/grader.py
	$(PY) bench/code_trace.py

# Debian's Chromium for the browser tests (Playwright's own browser download does not
# work offline), Node.js for the page's unit tests, redis-server for follow mode's
# two-worker tests (started on a loopback port by the tests) and bubblewrap, which
# `convscope check` runs submissions in (docs/grader.md), and poppler-utils (pdfinfo,
# pdftotext, pdftoppm), with which the handout tests read `convscope export handout.pdf`.
# Installed when missing and we are root; otherwise this says what to install. Running
# it again changes nothing.
SYSTEM_PACKAGES := chromium:chromium node:nodejs redis-server:redis-server bwrap:bubblewrap pdftotext:poppler-utils
system-deps:
	@missing=""; for pair in $(SYSTEM_PACKAGES); do \
	  command -v $${pair%%:*} >/dev/null 2>&1 || missing="$$missing $${pair#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "missing Debian packages:$$missing (install them for the browser and page tests)"; fi; fi

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

clean:
	rm -rf $(VENV) build dist *.egg-info
