# Two commands set everything up on a fresh machine:
#   make demo   installs turneval and runs `turneval report` on a bundled human-AI style conversation
#   make test   installs turneval with its test extras and runs the test suite
PYTHON ?= python3
PIP := $(PYTHON) -m pip
EXAMPLE ?= examples/cascaded_like.wav
REPORT_DIR ?= reports/cascaded_like

.PHONY: install demo test perf-deps perf perf-quick bench-deps bench bench-quick sync-checkpoints sync-metrics space synth-deps recipes-quick release dist wheel-check metric-env-check screenshot

# torch first, pinned: a looser pin would pull the CUDA build with several GB of packages.
install:
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -c constraints.txt -e ".[space,test]"
	$(PIP) install -q --no-deps -c constraints.txt pipecat-ai -r examples/agents/requirements.txt
	$(PYTHON) -m turneval.cli metrics install >/dev/null  # evaluate.load("turn_naturalness") by bare name (docs/release.md)

demo: install
	HF_HUB_OFFLINE=1 turneval report $(EXAMPLE) --system-channel 1 --out $(REPORT_DIR)

# two pytest workers, each test file whole on one (its fixtures and servers stay together): the probe's
# tests wait on real-time audio while the other worker computes (7.3 min on 2 cores, 1,264 tests)
test: install
	HF_HUB_OFFLINE=1 $(PYTHON) -m pytest -q -p no:cacheprovider -n 2 --dist loadfile tests

# smart-turn v3.2 (the judge's turn-completion cue is converted from it, and it is the judge's peer in
# the benchmarks) is the ONNX model inside pipecat-ai; `install` adds pipecat-ai without its own (large)
# dependency tree, plus the few packages its bots need at run time (examples/agents/requirements.txt: the
# example Pipecat bots the probe's end-to-end tests serve on loopback), keeping the project's soundfile.
perf-deps: install

# this project's own speed, memory and quality runs (`turneval perf`); bench* are their earlier names
perf: perf-deps
	HF_HUB_OFFLINE=1 $(PYTHON) benchmarks/run_all.py --docs docs/performance.md

perf-quick: perf-deps
	HF_HUB_OFFLINE=1 $(PYTHON) benchmarks/run_all.py --quick --jobs 2 --output-dir runs/bench

bench-deps: perf-deps
bench: perf
bench-quick: perf-quick

# every bundled checkpoint's recipe at its CI size (made-up data, tiny models, a few steps; docs/training.md)
recipes-quick:
	for recipe in turn_taking_judge_swb_revoiced future_activity_predictor_demo future_activity_predictor_switchboard future_activity_predictor_words future_activity_predictor_lookahead; do \
		HF_HUB_OFFLINE=1 $(PYTHON) -m turneval.training.recipes.$$recipe --quick --out runs/recipes_quick/$$recipe || exit 1; \
	done

# the bundled checkpoints carry copies of modeling/ for trust_remote_code: refresh them after a change
sync-checkpoints:
	$(PYTHON) tools/sync_checkpoints.py

# the evaluate modules carry copies of the turneval code they run (metrics/<name>/turneval_*.py):
# refresh them after a change to turneval's source (tests/test_evaluate_modules.py fails on a stale copy)
sync-metrics:
	$(PYTHON) -m turneval.evaluate_modules sync

# the sdist and the wheel under dist/, checked by twine (docs/release.md, "Installing turneval")
dist:
	rm -rf dist
	$(PYTHON) -m build --outdir dist .
	$(PYTHON) -m twine check --strict dist/*

# ... and the wheel installed into a clean venv, reporting on a bundled example from outside the
# checkout and loading an evaluate module by its bare name (a few minutes: it installs torch)
wheel-check:
	tools/wheel_check.sh

# the evaluate modules' card examples in a clean venv holding only their requirements.txt (no turneval; about a minute)
metric-env-check:
	tools/metric_env_check.sh

# Festival (HTS and diphone voices), Flite and SVOX Pico (ttspico compiles it: needs gcc) for
# re-voicing Switchboard (docs/revoicing.md); eSpeak NG needs nothing (it comes with the
# espeakng-loader wheel). The report never needs them.
synth-deps:
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y festival festvox-us-slt-hts festvox-kallpc16k festvox-kdlpc16k flite
	$(PIP) install -q ttspico==0.3.2

# the README's picture: the first screen of today's report on the bundled example, taken by headless
# Chromium, and the figures it shows (docs/report_first_screen.json; a test fails when they go stale)
screenshot:
	HF_HUB_OFFLINE=1 $(PYTHON) tools/report_screenshot.py

# a self-sufficient Gradio Space folder (app, examples, turneval built into it as a wheel): docs/space.md
space:
	$(PYTHON) space/assemble.py build/space

# the Hugging Face release: one folder per repo (models, data sets, metric Spaces, the demo Space) and
# release.json under hub/, nothing uploaded (docs/release.md); RELEASE_FLAGS=--push uploads them
RELEASE_ORG ?= turneval
release:
	turneval release --org $(RELEASE_ORG) --out hub $(RELEASE_FLAGS)
