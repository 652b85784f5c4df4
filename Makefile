# Every target installs what it needs: a fresh clone needs only Python 3.11+ and make.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
# The folder holding _config.yml and _toc.yml (tests point this at throwaway books).
BOOK ?= .
# What the execution cache depends on besides the notebooks' own cells.
CACHE_INPUTS ?= code pyproject.toml requirements.txt
PORT ?= 8000

.PHONY: help book test notebooks lab serve lint bench clean

help:  ## list the targets
	@awk -F':.*## ' '/^[a-z]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(INSTALLED): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

# --all re-reads every page on every build (cached chapters are not re-executed, only re-rendered):
# without it Sphinx skips unchanged pages, so a warning failed only the first build and a code
# change (cache cleared by cache_guard) never re-executed the chapters. The log feeds the tests.
# The old site goes first, so pages dropped from _toc.yml do not linger in _build/html.
book: $(INSTALLED)  ## build the HTML course into _build/html (executes changed chapters)
	$(BIN)/python tools/cache_guard.py $(BOOK)/_build/.jupyter_cache $(CACHE_INPUTS)
	rm -rf $(BOOK)/_build/html
	$(BIN)/jupyter-book build --all -W -n --keep-going $(BOOK) 2>&1 | tee $(BOOK)/_build/build.log

test: book  ## build the book, then run every test (code, site, browser)
	CHROMIUM="$$(tools/find_browser.sh $(BIN)/python)"; export CHROMIUM; \
	$(BIN)/python -m pytest

notebooks: $(INSTALLED)  ## write every chapter in _toc.yml as a Jupyter notebook into notebooks/
	@mkdir -p notebooks
	for chapter in $$($(BIN)/python tools/toc_chapters.py --notebooks $(BOOK)); do \
	  $(BIN)/jupytext --quiet --to ipynb --output notebooks/$$(basename "$${chapter%.*}").ipynb "$(BOOK)/$$chapter"; \
	done
	@ls notebooks

lab: $(INSTALLED)  ## open the chapters in JupyterLab as notebooks (the settings Binder uses)
	JUPYTER_CONFIG_PATH="$(CURDIR)/.jupyter" $(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" book

serve: book  ## serve the built site on http://127.0.0.1:$(PORT)
	$(BIN)/python -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

lint: $(INSTALLED)  ## check the Python code with ruff
	$(BIN)/ruff check code tests tools bench

bench: book  ## run the benchmarks; prints one table and writes _build/bench/results.json
	$(BIN)/python -m bench $(BENCH_ARGS)

clean:  ## remove the built site, the execution cache and generated notebooks
	rm -rf _build notebooks
