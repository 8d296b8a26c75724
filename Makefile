# One entry point: `make demo` runs the main job, `make test` the whole test suite, `make docs` the site.
# Each target is a command of dev.py, which holds their one definition (the same commands without
# make: `python3 dev.py demo`, on Windows `py dev.py demo`); each creates or refreshes the local
# virtual environment first (idempotent, fast on re-run) with the newest supported Python found, or
# with PYTHON (a program, or a version such as 3.11): `make test PYTHON=3.11`.

BOOT   ?= $(shell command -v python3 2>/dev/null || command -v python)
PYTHON ?=
VENV   ?= .venv
EXTRAS ?= test,plot,ray,gym,video

.PHONY: venv demo test test-fast test-matrix wheels bench docs notebook clean

# venv: the editable install; demo: evolve the ball simulator; test: the whole suite; test-fast: the
# edit-test loop (everything but the tests marked slow); test-matrix: every supported Python from a
# wheel, the fast subset; wheels: binary wheels into dist/; docs: the site into site/ (a strict
# build, as tests/test_docs.py runs it); notebook: the example notebook run and saved; bench: the
# benchmarks.
venv demo test test-fast test-matrix wheels bench docs notebook clean:
	@$(BOOT) dev.py $@ --python "$(PYTHON)" --venv $(VENV) --extras $(EXTRAS)
