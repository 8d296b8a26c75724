# One entry point: `make demo` runs the main job, `make test` the whole test suite, `make docs` the site.
# Each target is a command of dev.py, which holds their one definition (the same commands without
# make: `python3.11 dev.py demo`, on Windows `py -3.11 dev.py demo`); each creates or refreshes the
# local virtual environment first (idempotent, fast on re-run).

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   ?= .venv
EXTRAS ?= test,plot,ray,gym,video

.PHONY: venv demo test test-fast bench docs notebook clean

# venv: the editable install; demo: evolve the ball simulator; test: the whole suite; test-fast: the
# edit-test loop (everything but the tests marked slow); docs: the site into site/ (a strict build,
# as tests/test_docs.py runs it); notebook: the example notebook run and saved; bench: the benchmarks.
venv demo test test-fast bench docs notebook clean:
	@$(PYTHON) dev.py $@ --venv $(VENV) --extras $(EXTRAS)
