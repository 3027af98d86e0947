"""The released model cards' first screen (STYLE.md, model cards): what the model is, what it heard,
its real-speech figure beside the baseline, its limits and licence, then how to load it; the
figures there are the checkpoint's own record (provenance.json), so a refit that changes them
fails here until the card says the new ones."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from turneval.release.cards import split_front_matter
from turneval.release.model_repo import LICENCE_NAME
from turneval.release.plan import MODEL_REPOS


REPO = Path(__file__).resolve().parents[1]


def _first_screen(card: Path) -> list[str]:
    _, body = split_front_matter(card)
    lines = body.lstrip("\n").splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith("## "))
    return lines[:end]


@pytest.mark.parametrize("checkpoint", sorted(MODEL_REPOS))
def test_first_screen_says_what_it_heard_its_real_figure_and_licence(checkpoint):
    card = REPO / "model_cards" / MODEL_REPOS[checkpoint] / "README.md"
    meta, _ = split_front_matter(card)
    assert meta["license"] == "other" and meta["license_name"] == LICENCE_NAME
    screen = _first_screen(card)
    rows = {m.group(1): m.group(2) for m in (re.match(r"\| \*\*(.+?)\*\* \| (.+) \|$", line) for line in screen) if m}
    assert {"What it heard", "On real speech", "Known limits", "Licence"} <= set(rows), f"{card}: first-screen rows {sorted(rows)}"
    assert rows["Licence"].startswith(LICENCE_NAME)
    assert any(line.startswith("**Load it") for line in screen) and any(line.startswith("```python") for line in screen)
    usage = next(i for i, line in enumerate(screen) if line.startswith("```python"))
    assert usage < 35, f"{card}: the usage block starts at line {usage + 1} of the body; the release adds none above it"
    measured = json.loads((REPO / "checkpoints" / checkpoint / "provenance.json").read_text(encoding="utf-8"))["measured"]
    record = " ".join(measured) + " " + " ".join(str(v) for v in measured.values())
    ours = re.findall(r"\*\*(-?\d+\.\d+)\*\*", rows["On real speech"])
    assert ours, f"{card}: the real-speech row shows no figure of this model in bold"
    for figure in ours:
        assert float(figure) in [float(v) for v in measured.values() if isinstance(v, (int, float))], (
            f"{card}: {figure} on the first screen is not in {checkpoint}/provenance.json; say the checkpoint's figure")
    for figure in re.findall(r"(?<![\d*])(\d\.\d{2,3})(?![\d*])", rows["On real speech"]):
        assert figure in record or figure in card.read_text(encoding="utf-8").split("## ", 1)[1], (
            f"{card}: the baseline {figure} on the first screen is neither in provenance.json nor in the card's tables")
