# jostle: `make run` (the main job) and `make test` (every test).  Both install what is missing
# (Debian 12, apt-get, as root), make the Python virtual environment, and build.
#
# Builds: build/openmpi (Open MPI) and build/mpich (MPICH) on Debian; on a cluster without
# those, build/mpi with the mpicc found in PATH.

PYTHON   ?= /usr/bin/python3
VENV     := .venv
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release -DJOSTLE_WERROR=ON
# A build's output goes to DIR.log and is shown only when it fails (warnings are errors):
# `make run` stays readable.
cmake_build = cmake --build $(1) -j $(JOBS) $(2) >$(1).log 2>&1 || { cat $(1).log; exit 1; }
# Configure DIR with ARGS (an environment prefix ENV before them) only where it was not, or was
# with others: cmake's build step configures again itself when a CMakeLists.txt changes, and a
# configure that changes nothing cost 0.5 s a directory on every `make test-fast`.
configure = a=$$(printf '%s|' $(3) $(2)); \
  if [ ! -f $(1)/CMakeCache.txt ] || [ "$$(cat $(1)/.configured 2>/dev/null)" != "$$a" ]; then \
  $(3) cmake -S . -B $(1) $(2) >/dev/null || exit 1; printf '%s\n' "$$a" >$(1)/.configured; fi

# Python's byte-code caches kept: without them pytest rewrites and compiles every test module in
# every worker, 5 s of CPU each instead of 2 s, and a machine may set this for its own reasons.
unexport PYTHONDONTWRITEBYTECODE

OMPI_CC  := $(shell test -x /usr/bin/mpicc.openmpi && echo /usr/bin/mpicc.openmpi)
MPICH_CC := $(shell test -x /usr/bin/mpicc.mpich && echo /usr/bin/mpicc.mpich)

.PHONY: all deps venv build prepare relocate build-dirs run test test-fast golden lint test-c test-py test-py-fast \
        test-sanitize clean

all: build

deps:
	@bash scripts/install-deps.sh

# A checkout copied or moved keeps a venv whose scripts name the old path and whose editable
# install is the old tree: removed when read, so that the rule below makes it again.
ifneq ($(shell test -d $(VENV) && ! grep -qsF '$(CURDIR)/$(VENV)/bin/python' $(VENV)/bin/jostle && echo stale),)
$(info make: $(VENV) was made for another path: making it again)
$(shell rm -rf $(VENV))
endif

# Re-made only when the package description changes.
$(VENV)/.stamp: python/pyproject.toml | deps
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	@$(VENV)/bin/pip install -q --disable-pip-version-check -e 'python[test]'
	@touch $@

venv: $(VENV)/.stamp
	@:

# Several builds at once in one tree would race: they take turns (flock).
build: deps
	@mkdir -p build && flock build/.lock $(MAKE) --no-print-directory relocate build-dirs

# A build directory made in another checkout (copied or moved here) is refused by cmake:
# remove it, to be made again.
relocate:
	@for c in build/*/CMakeCache.txt; do [ -f "$$c" ] || continue; \
	  if ! grep -qxF 'CMAKE_HOME_DIRECTORY:INTERNAL=$(CURDIR)' "$$c"; then \
	    echo "make: $$(dirname $$c) was made for another checkout: building it again"; \
	    rm -rf "$$(dirname $$c)"; fi; done

build-dirs:
	@set -e; \
	if [ -x /usr/bin/mpicc.openmpi ]; then \
	  $(call configure,build/openmpi,$(CMAKE_FLAGS) -DMPI_C_COMPILER=/usr/bin/mpicc.openmpi \
	        -DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.openmpi "-DMPIEXEC_PREFLAGS=--oversubscribe;--bind-to;none"); \
	  $(call cmake_build,build/openmpi); fi; \
	if [ -x /usr/bin/mpicc.mpich ]; then \
	  $(call configure,build/mpich,$(CMAKE_FLAGS) -DMPI_C_COMPILER=/usr/bin/mpicc.mpich \
	        -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich); \
	  $(call cmake_build,build/mpich); fi; \
	if [ ! -x /usr/bin/mpicc.openmpi ] && [ ! -x /usr/bin/mpicc.mpich ]; then \
	  $(call configure,build/mpi,$(CMAKE_FLAGS)); $(call cmake_build,build/mpi); fi; \
	if command -v smpicc >/dev/null; then \
	  $(call configure,build/simgrid,$(CMAKE_FLAGS) -DJOSTLE_SMPI=ON -DMPI_C_COMPILER=smpicc,CC=smpicc); \
	  $(call cmake_build,build/simgrid,--target jostle-bench); fi

# The venv (pip, one process) and the builds side by side: 49 s -> 37 s from a fresh clone
# (2026-11-29, 2 cores).
prepare:
	@$(MAKE) --no-print-directory -j $(JOBS) build venv

run: prepare
	$(VENV)/bin/jostle run

test: prepare
	@$(MAKE) --no-print-directory lint test-c test-py

# The edit-run loop: lint, the unit tier of pytest (no MPI launch, no external service, no
# whole page drawn: those are the pages tier) and one 2-rank ping-pong with each MPI library
# (the tests marked smoke). The tiers are markers (tests/py/conftest.py): `make test` runs
# them all, `pytest -m pages`, `-m mpi` or `-m system` one alone.
test-fast: prepare
	@$(MAKE) --no-print-directory lint test-py-fast

# The golden files (describe.json, cli_options.json, the generated topologies) rewritten from
# what makes them, after a change that is meant; tests/py/test_golden.py checks them.
golden: build venv
	$(VENV)/bin/python scripts/golden.py --update

# ruff (ruff.toml: which rules and why) and the layers of src/ and python/jostle.
lint: venv
	@$(VENV)/bin/ruff check python tests bench scripts
	@$(VENV)/bin/python scripts/check-layers.py

# Two at a time on 2 cores: 14 s -> 7 s a build, 8 runs in a row green (2026-11-29).
test-c:
	@set -e; for d in build/openmpi build/mpich build/mpi; do \
	  if [ -d $$d ]; then echo "== ctest $$d"; (cd $$d && ctest --output-on-failure -j $(JOBS)); fi; done

# The tests side by side (pytest-xdist): most of their time waits (MPI start-up, SLURM jobs, a
# browser), so twice as many workers as cores; tests/py/conftest.py keeps what shares a set-up
# on one worker and starts the slow ones first.  TEST_WORKERS=0: one at a time.
TEST_WORKERS ?= $(shell echo $$(( $(JOBS) * 2 )))
# The scans of the four netns "hosts" judge performance (a node slower than the others): they
# run alone afterwards, as beside the rest of the suite a time slice flags a healthy host (a
# healthy host's 8-byte latency 1.6-2.2 times the others' in both measurements, 2026-11-26).
test-py:
	$(VENV)/bin/python -m pytest tests/py -q -rs -n $(TEST_WORKERS) --dist loadgroup --durations=25 --cpu-top 25 \
	  --ignore tests/py/test_scan_netns.py
	$(VENV)/bin/python -m pytest tests/py/test_scan_netns.py -q -rs

# The unit tier mostly computes (figures, records), but its fake bench and smoke ranks wait:
# one worker more than cores (on 2 cores, 2026-11-28: 2 workers 66-71 s, 3 workers 58-61 s).
FAST_WORKERS ?= $(shell echo $$(( $(JOBS) + 1 )))
test-py-fast:
	$(VENV)/bin/python -m pytest tests/py -q -rs -m "unit or smoke" -n $(FAST_WORKERS) \
	  --dist loadgroup

# build/asan (ASan + UBSan) and build/tsan (TSan), MPICH: ctest and the threaded modes.
test-sanitize: deps
	@bash scripts/test-sanitize.sh

clean:
	rm -rf build
