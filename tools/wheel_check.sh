#!/usr/bin/env bash
# make wheel-check: what a user who has only the wheel gets. Builds the sdist and the wheel,
# runs twine check on both, installs the wheel into a clean virtual environment (no system
# site-packages; torch first, pinned, as `make install` does), then, from a folder outside the
# checkout, reports on a bundled example and loads an evaluate module by its bare name offline.
# Prints each step's seconds. The fast part (build, twine, the wheel's file list) is
# tests/test_wheel.py.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
PYTHON=${PYTHON:-python3}
WORK=${WHEEL_CHECK_DIR:-$(mktemp -d)}
EXAMPLE=${EXAMPLE:-examples/cascaded_like.wav}
mkdir -p "$WORK"
step() { echo "wheel-check: $1 ($(( $(date +%s) - START )) s so far)"; }
START=$(date +%s)

rm -rf "$WORK/dist"
"$PYTHON" -m build --outdir "$WORK/dist" . >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; exit 1; }
step "built $(cd "$WORK/dist" && echo *)"
"$PYTHON" -m twine check --strict "$WORK"/dist/*
step "twine check passed"

rm -rf "$WORK/venv"
"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q torch==2.13.0
"$WORK/venv/bin/python" -m pip install -q -c constraints.txt "$WORK"/dist/turneval-*.whl
step "installed the wheel into a clean venv"

# outside the checkout, so that nothing of it is importable
mkdir -p "$WORK/elsewhere"
cd "$WORK/elsewhere"
"$WORK/venv/bin/python" -c "import turneval, sys; assert '$REPO' not in turneval.__file__, turneval.__file__; print('turneval from', turneval.__file__)"
HF_HUB_OFFLINE=1 "$WORK/venv/bin/turneval" report "$REPO/$EXAMPLE" --system-channel 1 --out "$WORK/report" --quiet
test -s "$WORK/report/report.json" && test -s "$WORK/report/report.html"
step "turneval report wrote $WORK/report/report.json and report.html"

export HF_HOME="$WORK/hf_home" HF_EVALUATE_OFFLINE=1 HF_HUB_OFFLINE=1
"$WORK/venv/bin/turneval" metrics install >/dev/null
"$WORK/venv/bin/python" -c '
import evaluate
result = evaluate.load("turn_naturalness").compute(natural_scores=[1.0, 2.0, 3.0], perturbed_scores=[2.0, 2.5, 2.9])
assert abs(result["c_index"] - 5 / 8) < 1e-12, result
print("evaluate.load(\"turn_naturalness\") by bare name: c_index", result["c_index"])
' 2>/dev/null
step "done"
