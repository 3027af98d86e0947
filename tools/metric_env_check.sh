#!/usr/bin/env bash
# make metric-env-check: the six evaluate modules where turneval was never installed. A clean
# virtual environment (no system site-packages) gets only what the modules' requirements.txt
# files name (pinned by constraints.txt); each card's Python blocks then run there, the module
# loaded from its folder (the card's bare name becomes the folder's path). Prints each step's
# seconds. The fast equivalent, with turneval blocked by an import hook, is
# tests/test_evaluate_modules.py.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
PYTHON=${PYTHON:-python3}
WORK=${METRIC_ENV_DIR:-$(mktemp -d)}
START=$(date +%s)
step() { echo "metric-env-check: $1 ($(( $(date +%s) - START )) s so far)"; }

rm -rf "$WORK/venv"
"$PYTHON" -m venv "$WORK/venv"
cat metrics/*/requirements.txt | sort -u > "$WORK/requirements.txt"
"$WORK/venv/bin/python" -m pip install -q -c constraints.txt -r "$WORK/requirements.txt"
step "installed $(tr '\n' ' ' < "$WORK/requirements.txt")"

mkdir -p "$WORK/elsewhere"
cd "$WORK/elsewhere"
HF_HOME="$WORK/hf_home" HF_EVALUATE_OFFLINE=1 HF_HUB_OFFLINE=1 "$WORK/venv/bin/python" - "$REPO" <<'EOF'
import importlib.util, re, sys
from pathlib import Path

repo = Path(sys.argv[1])
assert importlib.util.find_spec("turneval") is None, "turneval is importable in the clean venv"
for card in sorted(repo.glob("metrics/*/README.md")):
    name = card.parent.name
    blocks = re.findall(r"^```python\n(.*?)^```", card.read_text(encoding="utf-8"), re.S | re.M)
    for k, block in enumerate(blocks, 1):
        code = block.replace(f'evaluate.load("{name}"', f'evaluate.load("{card.parent}"')
        exec(compile(code, f"{card} block {k}", "exec"), {})
    print(f"{name}: {len(blocks)} card block(s) ran")
EOF
step "done"
