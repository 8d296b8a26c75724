# One entry point: `make demo` runs the main job, `make test` the whole test suite, `make docs` the site.
# Each target creates or refreshes the local virtual environment first (idempotent, fast on re-run).

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.neatpar-installed
EXTRAS ?= test,plot,ray,gym,video

.PHONY: venv demo test test-fast bench docs notebook clean

venv: $(STAMP)

$(STAMP): Makefile pyproject.toml setup.py MANIFEST.in $(wildcard neatpar/*/*.c neatpar/*/*/*.c neatpar/*/*.h neatpar/*/*/*.h) neatpar-fastwire.pth
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "neatpar needs Python 3.11; run make PYTHON=/path/to/python3.11")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[$(EXTRAS)]'
	@touch $@

demo: $(STAMP)
	$(BIN)/neatpar evolve --config configs/ball.cfg

test: $(STAMP)
	$(BIN)/python -m pytest

# The edit-test loop: everything but the tests marked slow (make test runs those too).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" -x -q

# The documentation site into site/: the reference pages regenerated from the code, then a strict build
# (a broken link, page or anchor fails it; tests/test_docs.py runs the same build in make test).
docs: $(STAMP)
	$(BIN)/python docs/generate.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# Runs the example notebook in a real kernel and saves its outputs in it (the site shows them).
notebook: $(STAMP)
	$(BIN)/python docs/generate.py --notebook

bench: $(STAMP)
	$(BIN)/python bench/bench_evaluator.py
	$(BIN)/python bench/bench_kernel.py
	$(BIN)/python bench/bench_ctrnn.py
	$(BIN)/python bench/bench_neat_step.py
	$(BIN)/python bench/bench_wire.py
	$(BIN)/python bench/bench_visual.py
	$(BIN)/python bench/bench_hosts.py
	$(BIN)/python bench/bench_frames.py

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .hypothesis
