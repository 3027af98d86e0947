"""A model repo: config, safetensors, the remote code, the card (with ``model-index``), licence.

The remote code is the package's own ``modeling/`` pair of the model (each pair imports only
torch, transformers, numpy, the standard library and its own configuration: checked here), so
``AutoModel.from_pretrained(repo_id, trust_remote_code=True)`` needs no turneval. The card's
usage block is written for the repo id and run as written by tests/test_release.py.
"""
from __future__ import annotations

import ast
import re
import shutil
import sys
from pathlib import Path

from .cards import (
    ReleaseLinks,
    absolute_links,
    check_card_metadata,
    hub_url,
    insert_after_title,
    join_front_matter,
    split_front_matter,
)
from .model_index import model_index
from .plan import MODEL_REPOS, REPO_ROOT, ReleaseError, RepoPlan


WEIGHT_FILES = ("config.json", "model.safetensors", "provenance.json")
REMOTE_CODE_IMPORTS = frozenset({"torch", "transformers", "numpy"})
"""Third-party packages the remote code may import (transformers needs numpy itself)."""

USAGE: dict[str, str] = {
    "turn_taking_judge_swb_revoiced": '''\
import numpy as np
from transformers import AutoModel
judge = AutoModel.from_pretrained("{repo_id}", trust_remote_code=True)
audio = np.sin(np.arange(16000 * 4) * 0.09).astype(np.float32) / 10   # mono 16 kHz: your recording here
probs = judge.score(audio).probabilities   # [chunks, 5]: P(NA, BC, I, T, C) of chunk t + 1
''',
    "future_activity_predictor_lookahead": '''\
import numpy as np, torch
from transformers import AutoModel
model = AutoModel.from_pretrained("{repo_id}", trust_remote_code=True)
activity = np.zeros((500, 2), np.float32); activity[50:200, 0] = activity[215:400, 1] = 1   # 10 s at 50 Hz: A, then B
probs = model(voice_activity=torch.from_numpy(model.vad_inputs(activity))[None]).probs   # [1, 500, 256]: the next 2 s
''',
    "future_activity_predictor_words": '''\
import numpy as np, torch
from transformers import AutoModel
model = AutoModel.from_pretrained("{repo_id}", trust_remote_code=True)
activity = np.zeros((500, 2), np.float32); activity[50:200, 0] = activity[215:400, 1] = 1   # 10 s at 50 Hz: A, then B
words = [[(1.0, 1.5, "so"), (3.4, 4.0, "right")], [(4.3, 4.6, "yeah")]]   # per speaker: (start s, end s, word)
probs = model(voice_activity=torch.from_numpy(model.vad_inputs(activity, words))[None]).probs   # [1, 500, 256]
''',
}
"""Released model -> the usage block of its Hub card (``{repo_id}`` filled in)."""

LICENCE_NAME = "research-use-switchboard"
"""The one name of the weights' licence on every released model (``license: other``)."""

LICENCE_TEXT = """\
Code (configuration_*.py, modeling_*.py): Apache License 2.0, https://www.apache.org/licenses/LICENSE-2.0,
as the rest of turneval's code.

Weights (model.safetensors): {name}. Research use only: the model was trained on {what} of
Switchboard-1 Release 2 (LDC97S62, licensed by the Linguistic Data Consortium:
https://catalog.ldc.upenn.edu/LDC97S62) and the Mississippi State (ISIP) ms98 word alignments
(https://isip.piconepress.com/projects/switchboard/). It carries none of the corpus's audio.
{extra}
The model card (README.md) says what the model was trained on and why these terms apply.
"""
TRAINED_ON = {
    "turn_taking_judge_swb_revoiced": ("the word times and words", "Its turn-completion cue is converted from smart-turn v3.2 "
                                       "(pipecat-ai, BSD-2-Clause: https://github.com/pipecat-ai/smart-turn); its encoder is "
                                       "Whisper tiny.en (MIT: https://github.com/openai/whisper).\n"),
    "future_activity_predictor_lookahead": ("the timing", ""),
    "future_activity_predictor_words": ("the timing and words", ""),
}
"""Released model -> (what of Switchboard it learned from, other terms its LICENSE names)."""


def remote_code_files(config: Path) -> list[Path]:
    """The package's ``configuration_*.py`` / ``modeling_*.py`` that a checkpoint's ``auto_map`` names."""
    import json

    import turneval.modeling

    auto_map = json.loads(config.read_text(encoding="utf-8")).get("auto_map") or {}
    if not auto_map:
        raise ReleaseError(f"{config}: no 'auto_map'; save the model with register_for_auto_class so the Hub can load its code")
    source = Path(turneval.modeling.__file__).parent
    files = sorted({source / (ref.split(".")[0] + ".py") for ref in auto_map.values()})
    for path in files:
        check_self_contained(path, {p.stem for p in files})
    return files


def check_self_contained(path: Path, siblings: set[str]) -> None:
    """Raise ReleaseError when ``path`` imports anything but the standard library, torch,
    transformers, numpy or one of ``siblings``, so that the pair loads with trust_remote_code."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [(alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [(node.module or "", node.level)]
        else:
            continue
        for name, level in names:
            top = name.split(".")[0]
            ok = top in siblings and level <= 1 or (level == 0 and (top in REMOTE_CODE_IMPORTS or top in sys.stdlib_module_names))
            if not ok:
                raise ReleaseError(f"{path}:{node.lineno}: imports {'.' * level}{name}; remote code may import only torch, "
                                   f"transformers, numpy, the standard library and {sorted(siblings)}")


def _card(plan: RepoPlan, card: Path, provenance: Path, links: ReleaseLinks) -> str:
    meta, body = split_front_matter(card)
    if meta.get("license") != "other" or meta.get("license_name") != LICENCE_NAME:
        raise ReleaseError(f"{card}: a released model's front matter says 'license: other' and 'license_name: {LICENCE_NAME}'")
    meta["library_name"] = "transformers"
    meta["license_link"] = hub_url(plan.repo_id, "model", "LICENSE")
    meta["model-index"] = model_index(plan.name, provenance)
    usage = "```python\n" + USAGE[plan.name].format(repo_id=plan.repo_id) + "```\n"
    load_it = re.compile(r"\*\*Load it:?\*\*[^\n]*\n+```python\n.*?```\n", re.S)  # the card's own "Load it" block
    section = f"**Load it from the Hub** (`trust_remote_code=True`: the model's code ships in this repo):\n\n{usage}"
    body = load_it.sub(lambda _: section, body, count=1) if load_it.search(body) else insert_after_title(body, "## Usage\n\n" + section)
    text = join_front_matter(meta, absolute_links(body, card, links))
    check_card_metadata(text, "model", f"{card} (as released)")
    return text


def _licence(name: str) -> str:
    what, extra = TRAINED_ON[name]
    return LICENCE_TEXT.format(name=LICENCE_NAME, what=what, extra=extra)


def write_model_repo(plan: RepoPlan, out: Path, links: ReleaseLinks | None = None) -> Path:
    """Write the model repo of ``plan`` into ``out`` (a new folder); returns ``out``. ``links`` says
    where the card's links point on the Hub (default: this repo alone released)."""
    from turneval.checkpoints import bundled_root

    checkpoint = bundled_root() / plan.name
    if not (checkpoint / "config.json").is_file():
        raise ReleaseError(f"{checkpoint}: no checkpoint (config.json) to release; see training/recipes/{plan.name}.py")
    out.mkdir(parents=True)
    for name in WEIGHT_FILES:
        if not (checkpoint / name).is_file():
            raise ReleaseError(f"{checkpoint / name}: missing; a released checkpoint needs {', '.join(WEIGHT_FILES)}")
        shutil.copyfile(checkpoint / name, out / name)
    for path in remote_code_files(checkpoint / "config.json"):
        shutil.copyfile(path, out / path.name)
    card = REPO_ROOT / "model_cards" / MODEL_REPOS[plan.name] / "README.md"
    links = links or ReleaseLinks.of([plan])
    (out / "README.md").write_text(_card(plan, card, checkpoint / "provenance.json", links), encoding="utf-8")
    (out / "LICENSE").write_text(_licence(plan.name), encoding="utf-8")
    return out
