"""The Hub card of a released data set: the source card of ``model_cards/datasets/<name>/``, with
what this release holds put on its first screen.

The first screen says, from the built splits themselves: where each split's conversations come
from, whether their speech is real or synthetic, the licence of each split, how many rows it has
and what it lacks (a question task, a perturbation type, words), then how to load a row and
decode its audio (a few lines that tests/test_release.py runs against the release). The front
matter lists every split's licence, so it never names one licence for data under another.
"""
from __future__ import annotations

from typing import Any

from .cards import (
    ReleaseLinks,
    absolute_links,
    check_card_metadata,
    join_front_matter,
    size_category,
    split_front_matter,
)
from .dataset_sources import SOURCES, source_licences
from .plan import REPO_ROOT, RepoPlan


AUDIO_LINES: dict[str, str] = {
    "turn_taking_chunks": '''\
import soundfile as sf
from huggingface_hub import hf_hub_download
audio, rate = sf.read(hf_hub_download("{repo_id}", row["audio_path"], repo_type="dataset"))   # [samples, 2]: one speaker a channel
''',
    "turn_taking_perturbations": '''\
import io
import soundfile as sf
natural, rate = sf.read(io.BytesIO(row["natural_audio"]["bytes"]))     # [samples, 2] at 16 kHz, one speaker a channel
perturbed, _ = sf.read(io.BytesIO(row["perturbed_audio"]["bytes"]))    # the same stretch with the edit
''',
    "turn_taking_questions": '''\
import io
import soundfile as sf
audio, rate = sf.read(io.BytesIO(row["audio"]["bytes"]))   # mono 16 kHz clip; ask row["prompt"], expect row["answer"]
''',
}
"""Data set -> the lines that decode a row's audio with soundfile (``{repo_id}`` filled in)."""

NO_ROW: dict[str, str] = {
    "turn_taking_perturbations": "no 20-25 s stretch starts and ends in mutual silence around an edit",
}
"""Why a data set may get no row from a source (said in the card where it happens)."""


def _counts(name: str, split: Any) -> dict[str, tuple[int, int]]:
    """What the rows of a split hold, by kind: question task -> (yes, no); perturbation type -> (pairs, 0)."""
    if name == "turn_taking_questions":
        counts: dict[str, tuple[int, int]] = {}
        for task, answer in zip(split["task"], split["answer"]):
            yes, no = counts.get(task, (0, 0))
            counts[task] = (yes + bool(answer), no + (not answer))
        return counts
    if name == "turn_taking_perturbations":
        names = split.features["perturbation_type"].names
        found: dict[str, tuple[int, int]] = {}
        for value in split["perturbation_type"]:
            found[names[value]] = (found.get(names[value], (0, 0))[0] + 1, 0)
        return found
    return {}


def _kinds(name: str) -> tuple[str, ...]:
    """Every task (questions) or perturbation type (perturbations) the builder can make."""
    if name == "turn_taking_questions":
        from turneval.dataset_scripts.builders.turn_taking_questions import QUESTION_TASKS

        return QUESTION_TASKS
    if name == "turn_taking_perturbations":
        from turneval.dataset_scripts.builders.turn_taking_perturbations import perturbation_features

        return tuple(perturbation_features()["perturbation_type"].names)
    return ()


def _contents_table(name: str, built: dict[str, Any], counts: dict[str, dict[str, tuple[int, int]]]) -> list[str]:
    """Per task or perturbation type, what each split holds (yes / no items, or pairs); ``counts``:
    :func:`_counts` of each split."""
    kinds = _kinds(name)
    if not kinds:
        return []
    what = "yes / no items" if name == "turn_taking_questions" else "pairs"
    lines = [f"| {'task' if what != 'pairs' else 'perturbation type'} | " + " | ".join(f"`{s}`: {what}" for s in built) + " |",
             "|---|" + "---|" * len(built)]
    for kind in kinds:
        cells = []
        for split in built:
            yes, no = counts[split].get(kind, (0, 0))
            cells.append(("-" if not yes + no else f"{yes} / {no}") if what != "pairs" else (str(yes) if yes else "-"))
        lines.append(f"| `{kind}` | " + " | ".join(cells) + " |")
    return lines


def _lacks(name: str, built: dict[str, Any], counts: dict[str, dict[str, tuple[int, int]]]) -> list[str]:
    """One sentence per split that lacks something another split has, and one for what no split has."""
    kinds = _kinds(name)
    present = {split: set(counts[split]) for split in built}
    anywhere = set().union(*present.values()) if present else set()
    out = []
    for split, rows in built.items():
        missing = [f"`{k}`" for k in kinds if k in anywhere and k not in present[split]]
        if "words" in rows.column_names and not any(rows["words"]):
            missing.append("words (speech segments only)")
        if missing:
            out.append(f"`{split}` has no {' and no '.join(missing)}.")
    absent = [f"`{k}`" for k in kinds if k not in anywhere]
    if absent:
        out.append(f"No split has {' or '.join(absent)}: the builder found no place for it in these conversations.")
    return out


def release_section(plan: RepoPlan, built: dict[str, Any], sources: list[str]) -> str:
    """The first-screen section of the card: splits, licences, what each lacks, how to load a row and its audio."""
    first = next(iter(built))
    lines = ["| split | conversations | speech | licence | rows |", "|---|---|---|---|---|"]
    for split, rows in built.items():
        source = SOURCES[split]
        lines.append(f"| `{split}` | {source.credit} | {source.speech} | {source.licence} | {rows.num_rows} |")
    for source in (SOURCES[s] for s in sources if s not in built):
        lines.append(f"| none | {source.credit}: {NO_ROW.get(plan.name, 'the builder made no row')} | {source.speech} | | 0 |")
    usage = ["```python", "from datasets import load_dataset", f'ds = load_dataset("{plan.repo_id}")', f'row = ds["{first}"][0]']
    usage += AUDIO_LINES[plan.name].format(repo_id=plan.repo_id).splitlines() + ["```"]
    lines += ["", *usage]
    counts = {split: _counts(plan.name, rows) for split, rows in built.items()}  # one pass over each split's column
    lacks = _lacks(plan.name, built, counts)
    table = _contents_table(plan.name, built, counts)
    if table:
        lines += ["", *table]
    if lacks:
        lines += ["", "**What a split lacks.** " + " ".join(lacks)]
    return "\n".join(lines) + "\n"


def insert_after_intro(body: str, section: str) -> str:
    """``section`` placed after the first paragraph that follows the card's '# ' title."""
    lines = body.splitlines(keepends=True)
    title = next((i for i, line in enumerate(lines) if line.startswith("# ")), -1)
    i = title + 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    while i < len(lines) and lines[i].strip():
        i += 1
    return "".join(lines[:i]) + "\n" + section.rstrip("\n") + "\n" + "".join(lines[i:])


def dataset_card(plan: RepoPlan, built: dict[str, Any], sizes: dict[str, int], sources: list[str], links: ReleaseLinks) -> str:
    """The released card of data set ``plan`` whose splits are ``built`` (split -> Dataset; ``sizes``
    their bytes), built from ``sources``."""
    card = REPO_ROOT / "model_cards" / "datasets" / plan.name / "README.md"
    meta, body = split_front_matter(card)
    licences = source_licences(list(built))
    meta["license"] = licences[0] if len(licences) == 1 else licences
    rows = sum(part.num_rows for part in built.values())
    meta["size_categories"] = [size_category(rows)]
    meta["configs"] = [{
        "config_name": "default",
        "data_files": [{"split": s, "path": f"data/{s}-00000-of-00001.parquet"} for s in built],
    }]
    meta["dataset_info"] = {
        "features": next(iter(built.values())).features._to_yaml_list(),
        "splits": [{"name": s, "num_bytes": sizes[s], "num_examples": part.num_rows} for s, part in built.items()],
    }
    body = insert_after_intro(absolute_links(body, card, links), release_section(plan, built, sources))
    text = join_front_matter(meta, body)
    check_card_metadata(text, "dataset", f"{card} (as released)")
    return text

