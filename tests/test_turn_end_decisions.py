"""Turn-end decisions (shift vs hold after a pause), the Switchboard corpus helpers, and the
logistic-regression baselines built on them."""
from __future__ import annotations

import math
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest

from turneval.dataset_scripts.dialogue import Dialogue, DialogueError, Word
from turneval.dataset_scripts.readers import (
    iter_switchboard_calls,
    read_split_ids,
    read_switchboard,
    switchboard_word_file,
)
from turneval.dataset_scripts.turn_end_decisions import TurnEndDecision, shift_rate, turn_end_decisions
from turneval.metrics.turn_end_baselines import FEATURE_SETS, fit_baseline, fit_baselines


SWB = Path(__file__).parent / "data" / "readers" / "switchboard"


def _words(*items: tuple[float, float, str]) -> list[Word]:
    return [Word(s, e, t) for s, e, t in items]


def _dialogue(a: list[Word], b: list[Word]) -> Dialogue:
    return Dialogue("bc", [[(w.start, w.end) for w in a], [(w.start, w.end) for w in b]], words=[a, b])


@pytest.fixture()
def with_backchannel() -> Dialogue:
    """A talks, B says "uh-huh" in A's pause, A goes on, then B takes the turn."""
    a = _words((0.0, 0.5, "i"), (0.5, 1.0, "went"), (1.0, 1.5, "to"), (1.5, 2.0, "town"), (3.3, 3.8, "and"), (3.8, 4.1, "bought"), (4.1, 4.5, "milk"))
    b = _words((2.5, 2.8, "uh-huh"), (5.0, 5.4, "that's"), (5.4, 6.0, "nice"))
    return _dialogue(a, b)


def test_switchboard_fixture_decisions():
    dialogue = read_switchboard(SWB / "sw0001A-ms98-a-word.text")
    found = turn_end_decisions(dialogue)
    assert [(d.speaker_name, round(d.ipu_end, 2), d.label) for d in found] == [
        ("A", 2.1, "shift"),  # "how was your weekend" -> B answers after 0.3 s
        ("B", 3.1, "hold"),  # "it was great", 0.25 s of silence, "we went hiking"
        ("B", 4.6, "shift"),
        ("A", 6.3, "shift"),
    ]  # B's last IPU ends the call: no decision
    first = found[0]
    assert first.last_words == ("your", "weekend") and first.first_word == "so"
    assert first.partner_since is None and first.partner_ipu_duration is None
    assert first.ipu_duration == pytest.approx(1.6) and first.turn_duration == pytest.approx(1.6)
    hold = found[1]
    assert hold.partner_since == pytest.approx(1.0) and hold.partner_ipu_duration == pytest.approx(1.6)
    assert found[2].turn_duration == pytest.approx(2.2)  # B's turn started at 2.4, across the pause
    assert shift_rate(found) == 0.75
    # A longer required silence drops the 0.25 s pause; a decision needs >= min_silence.
    assert [d.label for d in turn_end_decisions(dialogue, min_silence=0.26)] == ["shift", "shift", "shift"]
    assert turn_end_decisions(dialogue, min_silence=1.0) == []


def test_backchannel_switches(with_backchannel: Dialogue):
    default = turn_end_decisions(with_backchannel)
    assert [(d.speaker, d.ipu_end, d.label, d.next_is_backchannel, d.is_backchannel) for d in default] == [
        (0, 2.0, "shift", True, False),  # the next speech is B's "uh-huh": the partner spoke
        (1, 2.8, "shift", False, True),  # after B's backchannel, A goes on
        (0, 4.5, "shift", False, False),
    ]
    last = default[-1]
    assert last.turn_duration == pytest.approx(4.5)  # the backchannel did not end A's turn
    assert last.ipu_duration == pytest.approx(1.2)
    assert last.partner_since == pytest.approx(1.7) and last.partner_ipu_duration == pytest.approx(0.3)
    assert last.last_words == ("bought", "milk") and last.first_word == "and"
    # Metric (a)'s view: only the floor holder's pauses, a backchannel answer is no decision.
    strict = turn_end_decisions(with_backchannel, include_backchannel_ipus=False, next_backchannel="skip")
    assert [(d.ipu_end, d.label) for d in strict] == [(4.5, "shift")]
    as_hold = turn_end_decisions(with_backchannel, include_backchannel_ipus=False, next_backchannel="hold")
    assert [(d.ipu_end, d.label) for d in as_hold] == [(2.0, "hold"), (4.5, "shift")]
    assert as_hold[0].to_dict()["label"] == "hold" and as_hold[0].to_dict()["last_words"] == ["to", "town"]


def test_overlap_and_simultaneous_starts_decide_nothing():
    # B still speaks when A stops: no silence after A's IPU, so no decision there.
    a = _words((0.0, 1.0, "well"), (3.0, 4.0, "right"))
    b = _words((0.5, 2.0, "so"), (4.5, 5.0, "ok"))
    found = turn_end_decisions(_dialogue(a, b))
    assert [(d.speaker, d.ipu_end) for d in found] == [(1, 2.0), (0, 4.0)]
    # Both start again at the same instant after A's IPU: who took the turn is undecided.
    a = _words((0.0, 1.0, "well"), (2.0, 3.0, "so"))
    b = _words((2.0, 2.5, "and"))
    assert turn_end_decisions(_dialogue(a, b)) == []


def test_bad_arguments(with_backchannel: Dialogue):
    with pytest.raises(ValueError, match="min_silence"):
        turn_end_decisions(with_backchannel, min_silence=-0.1)
    with pytest.raises(ValueError, match="next_backchannel"):
        turn_end_decisions(with_backchannel, next_backchannel="maybe")
    assert math.isnan(shift_rate([]))


# -- the corpus on disk ----------------------------------------------------------------------
def test_switchboard_tree_and_splits(tmp_path: Path):
    call = tmp_path / "00" / "0001"
    call.mkdir(parents=True)
    for f in SWB.glob("*.text"):
        shutil.copy(f, call / f.name)
    assert switchboard_word_file(tmp_path, "sw0001") == call / "sw0001A-ms98-a-word.text"
    assert switchboard_word_file(SWB, "0001").parent == SWB  # a flat folder works too
    with pytest.raises(DialogueError, match="no word file for Switchboard call 4242"):
        switchboard_word_file(tmp_path, 4242)
    splits = tmp_path / "splits"
    splits.mkdir()
    (splits / "train.txt").write_text("4637\n0001\n", encoding="utf-8")
    (splits / "val.txt").write_text("2005\n", encoding="utf-8")
    (splits / "test.txt").write_text("3946\n\n2001", encoding="utf-8")
    assert read_split_ids(splits, "train") == ["0001", "4637"]
    assert read_split_ids(splits, "all") == ["0001", "2001", "2005", "3946", "4637"]
    with pytest.raises(ValueError, match="split must be"):
        read_split_ids(splits, "dev")
    (splits / "val.txt").write_text("2005\nsw20x6\n", encoding="utf-8")
    with pytest.raises(DialogueError, match=r"val.txt:2: expected a call id"):
        read_split_ids(splits, "val")
    [dialogue] = list(iter_switchboard_calls(tmp_path, ["0001"]))
    assert dialogue.id == "sw0001" and dialogue.audio is None
    # The archive itself, streamed: the same conversation.
    archive = tmp_path / "swb_ms98_transcriptions.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "00", arcname="swb_ms98_transcriptions/00")
    [from_archive] = list(iter_switchboard_calls(archive, ["sw0001"]))
    assert from_archive.id == "sw0001"
    assert from_archive.segments == dialogue.segments and from_archive.words == dialogue.words
    assert from_archive.duration == dialogue.duration
    with pytest.raises(DialogueError, match="no word files .* 1 call"):
        list(iter_switchboard_calls(archive, ["0001", "4242"]))


# -- the logistic-regression baselines --------------------------------------------------------
def _synthetic(n: int, seed: int) -> list[TurnEndDecision]:
    """Shifts follow long IPUs and the word "know"; the first word is noise."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        shift = bool(rng.random() < 0.3)
        ipu = float(rng.gamma(2.0, 1.5 if shift else 0.7))
        last = ("know" if rng.random() < 0.85 else "and") if shift else ("and" if rng.random() < 0.85 else "know")
        first = str(rng.choice(["so", "well", "i", "the"]))
        out.append(TurnEndDecision("s", 0, 10.0, ipu, ipu + 1.0, None, None, ("you", last), first, shift, 0.5))
    return out


def test_baselines_learn_what_carries_information():
    train, test = _synthetic(600, 1), _synthetic(300, 2)
    results = fit_baselines(train, test)
    assert set(results) == set(FEATURE_SETS)
    timing, both = results["timing"]["roc_auc"], results["timing+words"]["roc_auc"]
    assert 0.65 < timing < 0.95 and both > timing + 0.05  # the words add what timing lacks
    assert results["text"]["n_test"] == 300 and len(results["text"]["scores"]) == 300
    assert results["text"]["shift_rate_test"] == pytest.approx(np.mean([d.shift for d in test]))
    # Shuffled labels: nothing to learn, the ROC-AUC falls to chance.
    rng = np.random.default_rng(3)
    flipped = [TurnEndDecision(**{**d.__dict__, "shift": bool(rng.random() < 0.3)}) for d in test]
    assert abs(fit_baseline(train, flipped, "timing+words")["roc_auc"] - 0.5) < 0.1


def test_baselines_need_both_classes():
    train = [d for d in _synthetic(100, 4) if not d.shift]
    with pytest.raises(ValueError, match="both shifts and holds"):
        fit_baseline(train, train, "timing")
    with pytest.raises(ValueError, match="unknown feature set"):
        fit_baseline(_synthetic(50, 5), _synthetic(10, 6), "prosody")
