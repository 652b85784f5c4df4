# Every target installs what it needs: a fresh clone needs only Python 3.11.5+ and make (Linux,
# macOS, Windows through WSL2; README.md).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# One stamp per requirement set, each installed on top of the one before: the reader's
# (requirements.txt, and the package) for the book; JupyterLab's (binder/requirements.txt) for
# `make lab`; the instructor's (requirements-instructor.txt: nbgrader) for `make assignments` and
# `make grade`; the developer's (requirements-dev.txt) for the tests, benchmarks and linters.
# INSTALLED= installs nothing (the Python in BIN already has everything).
INSTALLED := $(VENV)/.installed
LAB_INSTALLED := $(if $(INSTALLED),$(VENV)/.installed-lab)
INSTRUCTOR_INSTALLED := $(if $(INSTALLED),$(VENV)/.installed-instructor)
DEV_INSTALLED := $(if $(INSTALLED),$(VENV)/.installed-dev)
# pip retries an unreachable index five times per package, with back-off: offline, the PyTorch CPU
# index named in requirements.txt then costs many minutes. One try is enough on a good network;
# PIP_RETRIES=5 for a flaky one.
PIP_RETRIES ?= 0
# pip installs without compiling every module to bytecode: that took about a minute of the
# reader's two-minute install here, mostly for modules no chapter imports. What the build imports
# is compiled right after (tools/compile_imports.py, about 30 s), anything else when first
# imported; so that its bytecode is kept, every command below may write it whatever the shell says
# (with PYTHONDONTWRITEBYTECODE set, every chapter kernel would compile torch's modules again:
# about 10 s each).
unexport PYTHONDONTWRITEBYTECODE
PIP_INSTALL = $(BIN)/python -m pip install --quiet --retries $(PIP_RETRIES) --no-compile
# The folder holding _config.yml and _toc.yml (tests point this at throwaway books).
BOOK ?= .
# What a chapter's execution depends on besides its own cells (tools/build_book.py): folders of
# importable code (a chapter depends on the modules it imports, followed through their imports)
# and files every chapter depends on (the reader's pins).
CACHE_INPUTS ?= code pyproject.toml requirements.txt
# Parallel workers: chapters executed at once by `make book` (0: MyST-NB executes them one at a
# time, as Sphinx reads them), pytest workers in `make test` (0: none). Default: one per core
# (macOS has no nproc: sysctl).
JOBS ?= $(shell env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null \
                || sysctl -n hw.ncpu 2>/dev/null || echo 1)
PORT ?= 8000
# Matplotlib's font cache beside this checkout's venv, not the user's shared one: that one holds
# absolute paths into whichever venv last rebuilt it, and once that venv is gone a kernel can draw
# a glyph (mathtext's italic pi) in a fallback font, so one figure's bytes differ between runs.
export MPLCONFIGDIR ?= $(abspath $(VENV))/matplotlib

.PHONY: help book test check test-fast notebooks lab serve lint bench clean student pdf launch-branch pack \
  assignments grade other-cpus calibrate student-pdf release-dry-run

help:  ## list the targets
	@awk -F':.*## ' '/^[a-z-]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# The pins need Python 3.11.5 or newer (soupsieve's floor); checked before the venv is made.
$(INSTALLED): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11, 5))' \
	  2>/dev/null || { \
	  echo "make: the course needs Python 3.11.5 or newer to create $(VENV), and $(PYTHON) is" \
	    "$$(command -v $(PYTHON) >/dev/null && $(PYTHON) --version 2>&1 || echo 'not installed')." >&2; \
	  echo "  Install a newer Python (python.org; macOS: brew install python@3.12; Ubuntu 24.04" \
	    "and WSL2's default Ubuntu: sudo apt install python3 python3-venv; older distributions:" \
	    "pyenv or uv), then run make again with PYTHON set to it, e.g. make book PYTHON=python3.12" >&2; \
	  exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-compile --no-deps --no-build-isolation -e .
	$(BIN)/python tools/compile_imports.py
	@touch $@

$(LAB_INSTALLED): binder/requirements.txt $(INSTALLED)
	$(PIP_INSTALL) -r binder/requirements.txt
	@touch $@

$(INSTRUCTOR_INSTALLED): requirements-instructor.txt $(LAB_INSTALLED)
	$(PIP_INSTALL) -r requirements-instructor.txt
	@touch $@

$(DEV_INSTALLED): requirements-dev.txt tools/npm_assets.py $(INSTRUCTOR_INSTALLED)
	$(PIP_INSTALL) -r requirements-dev.txt
	$(BIN)/python tools/npm_assets.py axe-core $(VENV)/axe-core
	@touch $@

# tools/build_book.py re-executes, in parallel, the chapters whose cells or imported code changed,
# into the cache MyST-NB reads; then, unless nothing changed since the last successful build, it
# runs `jupyter-book build --all -W -n --keep-going` into a fresh _build/html, so that a warning
# fails every build, not only the first. Its output is kept in _build/build.log for the tests.
book: $(INSTALLED)  ## build the HTML course into _build/html (re-executes the chapters an edit touched)
	$(BIN)/python tools/build_book.py --jobs $(JOBS) $(BOOK) $(CACHE_INPUTS)

# Three tiers of one suite. `make check`, what CI runs, is every test: `make test`'s, and the
# tests marked `pipeline`, each of which reruns a whole pipeline for minutes (every chapter on
# other CPUs and on the oldest torch, every platform's lock, the editions, Binder's JupyterLab,
# grading, throwaway book builds, the benchmarks), all in one pytest session, longest first
# (tests/conftest.py), so that the short tests fill the gaps the long ones leave. `make test` is
# every other test (the package, PyTorch parity, the built site, the browser), about five minutes
# once the book is built; `make test-fast` leaves out what needs the book or a browser too: the
# edit-test loop. pytest-xdist spreads the tests over $(JOBS) workers; tests/xdist_groups.py keeps
# the browser tests (and test_binder.py) together on one worker.
PYTEST = CHROMIUM="$$(tools/find_browser.sh $(BIN)/python)"; export CHROMIUM; \
  $(BIN)/python -m pytest -n $(JOBS) --dist loadgroup

test: book $(DEV_INSTALLED)  ## build the book, then run every test but the pipeline reruns (about 5 min)
	$(PYTEST) -m "not pipeline"

# The two fresh environments pipeline tests run chapters in (the student set; the oldest torch,
# a 3.5 GB download) are built in the background while the other tests run (tests/fresh_envs.py).
# It ends with the 40 slowest tests and their times: where the next minute of CI is to be found.
check: book $(DEV_INSTALLED)  ## everything CI runs: every test, the pipeline reruns included (about 20 min on 2 cores)
	$(BIN)/python tests/fresh_envs.py --start
	$(PYTEST) --durations=40

# Other CPUs, played on this one (tools/other_cpus.py): every chapter's download, claims strict,
# on three other CPUs, each another draw (every initial weight moved by one float32 ulp:
# transformer_course/draws.py), two of them on another numeric path as well (torch's plain
# kernels; MKL's vendor-neutral code). `make check` plays one other CPU (the third setting, on
# the oldest torch: tests/test_oldest_torch.py); run this before a release.
other-cpus: book  ## every chapter, claims strict, on 3 other CPUs this machine can play
	$(BIN)/python tools/other_cpus.py --jobs $(JOBS)

# The calibration file the trained claims' margins come from (bench/calibration.py): every chapter
# on this CPU and 20 simulated others, each trained statistic's values recorded. About 1.5 hours
# on 2 cores; CHAPTERS=06,07 recalibrates only those chapters.
calibrate: $(DEV_INSTALLED)  ## every trained statistic over 20 simulated CPUs, into calibration.json
	$(BIN)/python -m bench.calibration --jobs $(JOBS) $(if $(CHAPTERS),--chapters $(CHAPTERS))

test-fast: $(DEV_INSTALLED)  ## run the unit tests only (no book build, no browser, no pipeline)
	$(BIN)/python -m pytest -n $(JOBS) -m "not pipeline and not browser and not site"

# The site's notebook downloads (tools/launch_site.py): each chapter executed, its Markdown made
# readable with that execution's numbers.
notebooks: book  ## write every chapter as the site's readable, executed notebook into notebooks/
	@mkdir -p notebooks
	for chapter in $$($(BIN)/python tools/toc_chapters.py --notebooks $(BOOK)); do \
	  cp "$(BOOK)/_build/html/_sources/$${chapter%.*}.ipynb" notebooks/; \
	done
	@ls notebooks

lab: $(LAB_INSTALLED)  ## open the chapters in JupyterLab as notebooks (the settings Binder uses)
	JUPYTER_CONFIG_PATH="$(CURDIR)/.jupyter" $(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" book

serve: book  ## serve the built site on http://127.0.0.1:$(PORT)
	$(BIN)/python -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

lint: $(DEV_INSTALLED)  ## check the Python code (the chapters' cells too) with ruff, and the workflows
	$(BIN)/ruff check code tests tools bench
	$(BIN)/python tools/lint_chapters.py $(BOOK)
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml

bench: book $(DEV_INSTALLED)  ## run the benchmarks; prints one table and writes _build/bench/results.json
	$(BIN)/python -m bench $(BENCH_ARGS)

# --- Editions: the student site and the PDF (tools/build_edition.py) --------------------------
# Each is a Sphinx build of its own from the site's execution cache (nothing re-executes), rebuilt
# only when the site changed since; the PDF is printed by the Chromium tools/find_browser.sh finds.
student: book  ## the site and notebooks without solutions, in _build/student/{html,notebooks}
	$(BIN)/python tools/build_edition.py student $(BOOK)

pdf: book  ## the whole book as one PDF, _build/pdf/book.pdf (headless Chromium, no LaTeX)
	CHROMIUM="$$(tools/find_browser.sh $(BIN)/python)"; export CHROMIUM; \
	$(BIN)/python tools/build_edition.py pdf $(BOOK)

student-pdf: student  ## the student edition as one PDF, _build/student-pdf/book.pdf
	CHROMIUM="$$(tools/find_browser.sh $(BIN)/python)"; export CHROMIUM; \
	$(BIN)/python tools/build_edition.py student-pdf $(BOOK)

# The instructor's pack (tools/instructor_pack.py): the student edition, the PDF, the assignment
# notebooks and rubrics, every figure as SVG and 200-dpi PNG with its attribution, one offline
# slide deck per chapter; zipped. It runs the chapters again (to export their figures), so it takes
# about as long as a clean `make book`.
pack: student pdf $(INSTRUCTOR_INSTALLED)  ## the instructor's pack in _build/pack and _build/instructor-pack.zip
	$(BIN)/python tools/instructor_pack.py $(BOOK) $(BOOK)/_build/pack \
	  --student $(BOOK)/_build/student --pdf $(BOOK)/_build/pdf/book.pdf --jobs $(JOBS)

# --- Graded assignments (assignments/, nbgrader: tools/assignment_notebooks.py, tools/grade.py) -
# One notebook per exercise with a checker. Students get a stub and the visible tests; grading
# puts the hidden tests back, runs each notebook in a fresh kernel and writes one CSV.
assignments: $(INSTRUCTOR_INSTALLED)  ## the students' assignment notebooks in _build/assignments
	$(BIN)/python tools/assignment_notebooks.py _build/assignments

grade: $(INSTRUCTOR_INSTALLED)  ## grade the notebooks in SUBMISSIONS=folder into a CSV
	@test -n "$(SUBMISSIONS)" || { echo "make grade: name the folder of submitted notebooks:" \
	  "make grade SUBMISSIONS=path/to/folder" >&2; exit 2; }
	$(BIN)/python tools/grade.py "$(SUBMISSIONS)" --work _build/grading

# What the publishing workflow deploys and pushes to the launch branch (_config.yml's launch_branch):
# the site, the student edition under student/, and Binder's environment (tools/launch_branch.py).
launch-branch: student  ## the site, student/ and what Binder installs, in _build/launch-branch
	$(BIN)/python tools/launch_branch.py $(BOOK) $(BOOK)/_build/launch-branch

# A release, built here as its tag's build will build it (CONTRIBUTING.md, "Cutting a release"):
# the version numbers checked, then with COURSE_RELEASE=v<version> (the buttons open the release's
# own launch branch, launch-v<version>) the pack, the student PDF and the launch branch, then the
# release's files collected into _build/release and checked (tests/test_release.py).
RELEASE_TAG = v$(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
release-dry-run: $(DEV_INSTALLED) $(INSTRUCTOR_INSTALLED)  ## every release asset, built and checked, into _build/release
	$(BIN)/python tools/release.py check $(RELEASE_TAG)
	COURSE_RELEASE=$(RELEASE_TAG) $(MAKE) pack student-pdf launch-branch
	$(BIN)/python tools/release.py assets $(BOOK) $(BOOK)/_build/release
	COURSE_RELEASE=$(RELEASE_TAG) $(BIN)/python tools/release.py verify $(BOOK)

clean:  ## remove the built site, the execution cache and generated notebooks
	rm -rf _build notebooks
