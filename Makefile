# The course's commands. Every target sets up .venv first (idempotent, fast when done):
# torch==2.13.0 on its own first, so pip never pulls a newer build with CUDA, then the
# pinned requirements and attnlib itself (pip install -e .).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
ARGS ?=
# JupyterLab refuses to start as root (as in many containers) unless told it may.
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
NBVAL_FLAGS := --nbval --nbval-current-env --nbval-sanitize-with $(CURDIR)/tests/nbval_sanitize.cfg

.PHONY: setup lab test course notebooks images bench clean

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

## make lab: JupyterLab on notebooks/ (extra arguments: make lab ARGS=--no-browser)
lab: setup
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(LAB_ROOT) $(ARGS)

## make test: lint, attnlib's unit tests, then every notebook replayed by nbval
test: setup
	$(VENV)/bin/ruff check .
	OMP_NUM_THREADS=1 $(PY) -m pytest tests notebooks $(NBVAL_FLAGS) $(ARGS)

## make course: run every notebook in a fresh kernel into build/, print a table of seconds
course: setup
	$(PY) tests/tools/run_notebooks.py course $(ARGS)

## make notebooks: re-execute the notebooks in place to refresh their stored outputs
notebooks: setup
	OMP_NUM_THREADS=1 $(PY) tests/tools/run_notebooks.py refresh $(ARGS)

## make images: export the figures the README shows into images/
images: setup
	OMP_NUM_THREADS=1 $(PY) tests/tools/export_images.py

## make bench: attnlib against PyTorch's own attention (time and peak memory), prints a table
bench: setup
	$(PY) tests/tools/bench_attention.py $(ARGS)

clean:
	rm -rf build .pytest_cache

## make mutants: mutation testing of attnlib with mutmut (pinned in requirements-mutants.txt; not part of
## make test: about an hour on 2 busy shared cores), then the kill rate per module (ARGS=--survivors lists them)
.PHONY: mutants
mutants: setup
	$(PY) -m pip install --quiet -r requirements-mutants.txt
	rm -rf mutants
	@mkdir -p build
	OMP_NUM_THREADS=1 $(VENV)/bin/mutmut run --max-children 2 > build/mutmut.log 2>&1 || (tail -n 20 build/mutmut.log; exit 1)
	$(PY) tests/tools/mutants_report.py $(ARGS)
