"""TurnNat perturbation edits and natural/perturbed pairs on a scripted conversation."""
from __future__ import annotations

import random

import numpy as np
import pytest

from turneval.dataset_scripts.dialogue import Dialogue, Word
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.perturbations import edits_conflict, merge_close_segments, sec_to_segment
from turneval.dataset_scripts.perturbations.edits import EDIT_FUNCTIONS, PERTURBATION_TYPES, NoCandidateError
from turneval.dataset_scripts.perturbations.pairs import make_pair
from turneval.dataset_scripts.perturbations.timeline import Timeline, delete_time, insert_time


SCRIPT = [
    ("A", 0.5, 6.0, "so I was telling you about the trip we took last summer to the coast"),
    ("B", 2.5, 2.8, "yeah"),
    ("B", 6.5, 9.0, "oh that sounds like a really nice time"),
    ("A", 9.6, 14.0, "it was and the weather was perfect every single day"),
    ("A", 14.6, 19.0, "we even rented a small boat for the whole afternoon"),
    ("B", 19.6, 22.0, "did you catch any fish out there"),
    ("A", 22.6, 30.0, "a few but mostly we just enjoyed the view and the quiet water"),
    ("B", 25.0, 25.3, "yeah"),
    ("B", 35.0, 38.0, "maybe we should plan one together next year"),
    ("A", 38.6, 40.0, "that would be great for us"),
    ("B", 40.12, 41.32, "sure I can do that"),
    ("A", 41.44, 44.0, "then let us talk about it soon"),
]


def scripted_dialogue(name: str = "talk", duration: float = 46.0, seed: int = 0) -> Dialogue:
    """Speech as noise bursts (one channel per speaker) over a quiet floor, words spread evenly."""
    rng = np.random.default_rng(seed)
    n = int(duration * SAMPLE_RATE)
    audio = (0.001 * rng.standard_normal((2, n))).astype(np.float32)
    segments, words = [[], []], [[], []]
    for spk, start, end, text in SCRIPT:
        k = "AB".index(spk)
        a, b = int(start * SAMPLE_RATE), int(end * SAMPLE_RATE)
        audio[k, a:b] += (0.1 * rng.standard_normal(b - a)).astype(np.float32)
        segments[k].append((start, end))
        tokens = text.split()
        step = (end - start) / len(tokens)
        words[k] += [Word(start + i * step, start + (i + 1) * step, t) for i, t in enumerate(tokens)]
    return Dialogue(id=name, segments=segments, words=words, audio=audio)


def _rms(x):
    return float(np.sqrt(np.mean(np.asarray(x, dtype=np.float64) ** 2)))


@pytest.mark.parametrize("edit_type", PERTURBATION_TYPES)
def test_every_edit_applies_and_keeps_channels_aligned(edit_type):
    d = scripted_dialogue()
    result = EDIT_FUNCTIONS[edit_type](d, random.Random(0))
    out = result.dialogue
    assert result.edit["edit_type"] == edit_type
    assert out.audio.shape[0] == 2 and out.audio.dtype == np.float32
    assert abs(out.duration - out.audio.shape[1] / SAMPLE_RATE) < 1e-9
    for k in range(2):  # words stay inside the speech segments they came with
        for w in out.words[k]:
            mid = (w.start + w.end) / 2
            assert any(s - 1e-6 <= mid <= e + 1e-6 for s, e in out.segments[k]), (edit_type, k, w)


def test_late_response_delays_only_the_response():
    d = scripted_dialogue()
    r = EDIT_FUNCTIONS["late_response"](d, random.Random(0))
    delay = r.edit["delay_ms"] / 1000
    assert 1.2 <= delay <= 2.0
    resp = "AB".index(r.edit["responder_channel"].upper())
    old = r.edit["responder_original_start_ms"] / 1000
    new_starts = [s for s, _ in r.dialogue.segments[resp]]
    assert any(abs(s - (old + delay)) < 2e-3 for s in new_starts)
    assert r.dialogue.duration == pytest.approx(d.duration + delay, abs=1e-3)
    # the responder's audio moved with its segment: energy now sits at the new onset
    s = int((old + delay + 0.1) * SAMPLE_RATE)
    assert _rms(r.dialogue.audio[resp, s : s + 1600]) > 0.05
    assert _rms(r.dialogue.audio[resp, int((old + 0.1) * SAMPLE_RATE) : int((old + 0.2) * SAMPLE_RATE)]) < 0.01


def test_early_entry_overlaps_the_speaker():
    d = scripted_dialogue()
    r = EDIT_FUNCTIONS["early_entry"](d, random.Random(1))
    e = r.edit
    assert 1.2 <= e["advance_ms"] / 1000 <= 2.5
    assert e["responder_new_start_ms"] < e["speaker_end_ms"]  # now inside the speaker's turn
    resp = "AB".index(e["responder_channel"].upper())
    assert any(abs(s - e["responder_new_start_ms"] / 1000) < 2e-3 for s, _ in r.dialogue.segments[resp])
    assert r.dialogue.duration == pytest.approx(d.duration - e["advance_ms"] / 1000, abs=1e-3)


def test_hold_instead_of_shift_removes_the_response():
    d = scripted_dialogue()
    r = EDIT_FUNCTIONS["hold_instead_of_shift"](d, random.Random(0))
    e = r.edit
    assert e["removed_responder_text"] == "sure I can do that" and 500 <= e["edited_hold_gap_ms"] <= 1500
    rc = "AB".index(e["removed_channel"].upper())
    lo, hi = e["removed_region_start_ms"] / 1000, e["removed_region_end_ms"] / 1000
    assert all(en <= lo or st >= hi for st, en in r.dialogue.segments[rc])
    assert _rms(r.dialogue.audio[rc, int(lo * SAMPLE_RATE) : int(hi * SAMPLE_RATE)]) < 0.01
    assert r.dialogue.duration == d.duration


def test_shift_instead_of_hold_inserts_other_speakers_turn():
    d = scripted_dialogue()
    r = EDIT_FUNCTIONS["shift_instead_of_hold"](d, random.Random(0))
    e = r.edit
    ic = "AB".index(e["inserted_channel"].upper())
    at, dur = e["insert_ms"] / 1000, e["insert_duration_ms"] / 1000
    assert 1.0 <= dur <= 4.0 and e["hold_channel"] != e["inserted_channel"]
    assert any(abs(s - at) < 0.05 for s, _ in r.dialogue.segments[ic])
    assert _rms(r.dialogue.audio[ic, int((at + 0.2) * SAMPLE_RATE) : int((at + 0.6) * SAMPLE_RATE)]) > 0.05
    assert r.dialogue.duration == pytest.approx(d.duration + dur, abs=1e-3)
    assert e["inserted_text"] in " ".join(w.text for w in r.dialogue.words[ic])


def test_excessive_backchannel_adds_two_or_three_from_the_listener():
    d = scripted_dialogue()
    r = EDIT_FUNCTIONS["excessive_backchannel"](d, random.Random(0))
    e = r.edit
    lc = "AB".index(e["source_channel"].upper())
    assert e["bc_insert_count"] in (2, 3)
    assert len(r.dialogue.words[lc]) == len(d.words[lc]) + e["bc_insert_count"]
    assert len(r.dialogue.segments[lc]) == len(d.segments[lc]) + e["bc_insert_count"]
    starts = [x["start_ms"] for x in e["inserted_backchannels"]]
    assert all(b - a >= 800 for a, b in zip(starts, starts[1:]))


def test_no_candidate_is_reported():
    quiet = Dialogue(id="q", segments=[[(0.5, 3.0)], []], words=[[Word(0.5, 3.0, "hello there")], []],
                     audio=np.zeros((2, 5 * SAMPLE_RATE), dtype=np.float32))
    for edit_type in PERTURBATION_TYPES:
        with pytest.raises(NoCandidateError):
            EDIT_FUNCTIONS[edit_type](quiet, random.Random(0))


@pytest.mark.parametrize("edit_type", PERTURBATION_TYPES)
def test_pairs_are_cropped_in_mutual_silence_and_normalized(edit_type):
    d = scripted_dialogue()
    pair = make_pair(d, edit_type, seed=0)
    assert pair.crop["enabled"]
    for clip in (pair.natural, pair.perturbed):
        assert 20.0 - 1e-6 <= clip.duration <= 25.0 + 1e-6 or clip is pair.natural
        assert 20 * np.log10(_rms(clip.audio)) == pytest.approx(-20.0, abs=0.05)
        for spk in clip.segments:  # starts and ends in mutual silence
            assert all(s > 0.0 for s, _ in spk) and all(e < clip.duration for _, e in spk)
    assert pair.description and pair.edit["edit_type"] == edit_type
    assert make_pair(d, edit_type, seed=0).crop == pair.crop  # deterministic


def test_timeline_and_track_edits():
    segs, words = insert_time([(1.0, 2.0), (3.0, 4.0)], [Word(3.0, 3.5, "x")], 2.5, 1.0)
    assert segs == [(1.0, 2.0), (4.0, 5.0)] and words[0].start == 4.0
    segs, _ = delete_time([(1.0, 2.0), (3.0, 4.0)], [], 2.2, 0.5)
    assert segs == [(1.0, 2.0), (2.5, 3.5)]
    tl = Timeline()
    tl.insert(2.0, 1.0)
    assert tl.to_source(1.0) == 1.0 and tl.to_source(2.5) == 2.0 and tl.to_source(5.0) == 4.0


def test_segment_grid_and_conflicts():
    seg = sec_to_segment(0.4, 3.6, 80.0)
    assert (seg.start, seg.end, seg.dur) == (5, 44, 40)
    merged = merge_close_segments([sec_to_segment(1.0, 2.5, 80.0, "a b"), sec_to_segment(2.62, 4.0, 80.0, "c d")])
    assert len(merged) == 1 and merged[0].text == "a b c d" and merged[0].end_s == 4.0
    assert edits_conflict({"edit_type": "late_response", "anchor_ms": 15000.0},
                          [{"edit_type": "early_entry", "responder_new_start_ms": 10000.0}]).startswith("too_close")
    assert edits_conflict({"edit_type": "late_response", "anchor_ms": 30000.0, "speaker_start_ms": 0.0, "speaker_end_ms": 10.0},
                          [{"edit_type": "late_response", "anchor_ms": 0.0, "speaker_start_ms": 2.0, "speaker_end_ms": 9.0}]) == "overlaps_existing_turn"


def _edited_span_ms(edit: dict) -> tuple[float, float]:
    """Where the perturbed clip's audio was touched, on its own clock (ms, crop-relative).

    Before the span the clip runs on the natural clock; after it, on the natural clock shifted
    by the inserted/deleted time (so both clips line up from their ends).
    """
    t = edit["edit_type"]
    if t == "late_response":
        cut = min(edit["speaker_end_ms"], edit["responder_original_start_ms"])
        return cut, max(edit["speaker_end_ms"], edit["responder_original_start_ms"]) + edit["delay_ms"]
    if t == "early_entry":
        cuts = (edit["cut_start_ms"], edit["speaker_channel_cut_start_ms"])
        return min(cuts), max(cuts)
    if t == "hold_instead_of_shift":
        return edit["removed_region_start_ms"], edit["removed_region_end_ms"]
    if t == "shift_instead_of_hold":
        return edit["insert_ms"], edit["insert_end_ms"]
    if t == "excessive_backchannel":
        inserted = edit["inserted_backchannels"]
        return min(x["start_ms"] for x in inserted), max(x["end_ms"] for x in inserted)
    raise AssertionError(f"no edited span known for {t}")


SPLICE_MARGIN_S = 0.1
"""Crossfades reach at most 60 ms (insertions) or 10 ms (cuts) past a splice point."""


@pytest.mark.parametrize("edit_type", PERTURBATION_TYPES)
def test_perturbed_clip_differs_from_natural_only_around_the_edit(edit_type):
    pair = make_pair(scripted_dialogue(), edit_type, seed=0)
    gains = [10 ** (pair.loudness[k]["gain_db"] / 20) for k in ("natural", "perturbed")]
    natural, perturbed = pair.natural.audio / gains[0], pair.perturbed.audio / gains[1]
    lo_ms, hi_ms = _edited_span_ms(pair.edit)
    lo = int((lo_ms / 1000 - SPLICE_MARGIN_S) * SAMPLE_RATE)
    hi = int((hi_ms / 1000 + SPLICE_MARGIN_S) * SAMPLE_RATE)
    tail = perturbed.shape[1] - hi  # samples after the edit, aligned from the clip ends
    assert lo > 2 * SAMPLE_RATE and tail > 2 * SAMPLE_RATE, "the crop must keep context on both sides"
    # gain_db is recorded to 1e-3 dB: undoing it is exact to ~1e-4 relative
    np.testing.assert_allclose(perturbed[:, :lo], natural[:, :lo], rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(perturbed[:, -tail:], natural[:, -tail:], rtol=1e-3, atol=1e-5)
    # ... and the edit itself is audible: inside the span the clips do differ
    end = min(hi, natural.shape[1])
    inside_p, inside_n = perturbed[:, lo:end], natural[:, lo:end]
    assert inside_p.shape[1] > 0 and not np.allclose(inside_p, inside_n, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("seed", range(4))
def test_every_type_respects_the_reference_parameter_ranges(seed):
    d = scripted_dialogue(seed=seed)
    for edit_type in PERTURBATION_TYPES:
        e = make_pair(d, edit_type, seed=seed).edit
        if edit_type == "late_response":
            assert 1200 <= e["delay_ms"] <= 2000
        elif edit_type == "early_entry":
            assert 1200 <= e["advance_ms"] <= 2500 and e["responder_new_start_ms"] < e["speaker_end_ms"]
        elif edit_type == "hold_instead_of_shift":
            assert 500 <= e["edited_hold_gap_ms"] <= 1500
        elif edit_type == "shift_instead_of_hold":
            assert 1000 <= e["insert_duration_ms"] <= 4000
        elif edit_type == "excessive_backchannel":
            assert e["bc_insert_count"] in (2, 3)
            inserted = e["inserted_backchannels"]
            assert all(e["speaker_start_ms"] <= x["start_ms"] and x["end_ms"] <= e["speaker_end_ms"] + 1 for x in inserted)
