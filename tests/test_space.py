"""The Space's logic without a browser: answer storage, listening-test statistics, SWOZ
stimuli, pair stimuli, upload caps and the analysis call."""
from __future__ import annotations

import importlib.util
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.metrics.intervals import wilson_interval


SPACE_DIR = Path(__file__).resolve().parents[1] / "space"
EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(SPACE_DIR))

import analysis  # noqa: E402
import listening  # noqa: E402
import stimuli  # noqa: E402
import swoz  # noqa: E402
from listening import ListeningError, ListeningStore, PairAnswer, SourceSegment  # noqa: E402


def answer(rater: str, pair: str, natural_position: str, choice: str, ra: int = 3, rb: int = 3, kind: str = "late_response") -> PairAnswer:
    return PairAnswer(rater=rater, session="s", pair_id=pair, perturbation_type=kind, natural_position=natural_position, choice=choice, rating_a=ra, rating_b=rb)


@pytest.fixture
def store(tmp_path: Path) -> ListeningStore:
    return ListeningStore(tmp_path / "db" / "answers.sqlite3")


# ---------------------------------------------------------------------------------------
# Storage
# ---------------------------------------------------------------------------------------


def test_pair_answers_round_trip(store: ListeningStore) -> None:
    first = answer("ann", "p1", "A", "A", 5, 2)
    store.add_pair_answer(first)
    store.add_pair_answer(answer("bob", "p2", "B", "A", 4, 1, kind="early_entry"))
    stored = store.pair_answers()
    assert [(a.rater, a.pair_id, a.choice) for a in stored] == [("ann", "p1", "A"), ("bob", "p2", "A")]
    assert stored[0].prefers_natural and not stored[1].prefers_natural
    assert (stored[0].rating_natural, stored[0].rating_perturbed) == (5, 2)
    assert (stored[1].rating_natural, stored[1].rating_perturbed) == (1, 4)
    assert store.answered_pairs("ann") == {"p1"}
    # a second store on the same file sees the answers (they are on disk)
    assert len(ListeningStore(store.path).pair_answers()) == 2


def test_db_path_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(listening.DB_ENV_VAR, str(tmp_path / "x.sqlite3"))
    assert ListeningStore().path == tmp_path / "x.sqlite3"
    assert (tmp_path / "x.sqlite3").is_file()


@pytest.mark.parametrize(
    "fields, message",
    [({"rater": " "}, "rater name"), ({"choice": "C"}, "choice"), ({"rating_a": 0}, "clip A"), ({"rating_b": None}, "clip B")],
)
def test_invalid_answers_are_refused(fields: dict, message: str) -> None:
    base = dict(rater="ann", session="s", pair_id="p", perturbation_type="t", natural_position="A", choice="A", rating_a=3, rating_b=3)
    with pytest.raises(ListeningError, match=message):
        PairAnswer(**{**base, **fields})


def test_yuck_presses_take_the_source_playing(store: ListeningStore) -> None:
    schedule = [SourceSegment(0.0, 30.0, "human"), SourceSegment(30.0, 60.0, "algorithm")]
    store.start_swoz_session("s1", "ann", "stim", 60.0, schedule)
    assert store.add_yuck("s1", 10.0) == "human"
    assert store.add_yuck("s1", 35.0) == "algorithm"
    assert store.add_yuck("s1", 40.0) == "algorithm"
    with pytest.raises(ListeningError, match="Start"):
        store.add_yuck("unknown", 1.0)
    with pytest.raises(ListeningError, match="playback time"):
        store.add_yuck("s1", -1.0)
    store.finish_swoz_session("s1", 45.0)
    (session,) = store.swoz_sessions()
    assert session["listened_s"] == 45.0 and session["schedule"] == schedule
    paths = store.export_csv(store.path.parent / "export")
    assert [p.name for p in paths] == ["pair_answers.csv", "swoz_sessions.csv", "yuck_presses.csv"]
    lines = paths[2].read_text().splitlines()
    assert lines[0] == "id,created_at,session,time_s,source" and len(lines) == 4 and lines[2].endswith(",s1,35.0,algorithm")
    rates = listening.yuck_rates(store.swoz_sessions(), store.yuck_presses())
    assert rates["human"] == {"n_yucks": 1, "minutes": 0.5, "yucks_per_minute": 2.0}
    assert rates["algorithm"]["n_yucks"] == 2
    assert rates["algorithm"]["minutes"] == pytest.approx(0.25)
    assert rates["algorithm"]["yucks_per_minute"] == pytest.approx(8.0)


def test_unfinished_session_counts_exposure_to_its_last_press() -> None:
    schedule = [SourceSegment(0.0, 20.0, "algorithm"), SourceSegment(20.0, 60.0, "human")]
    sessions = [{"session": "s", "schedule": schedule, "listened_s": None}]
    rates = listening.yuck_rates(sessions, [{"session": "s", "time_s": 30.0, "source": "human"}])
    assert rates["algorithm"]["minutes"] == pytest.approx(20 / 60)
    assert rates["human"]["minutes"] == pytest.approx(10 / 60)
    assert rates["human"]["yucks_per_minute"] == pytest.approx(6.0)
    assert rates["algorithm"]["yucks_per_minute"] == 0.0


# ---------------------------------------------------------------------------------------
# Naturalness statistics
# ---------------------------------------------------------------------------------------


def test_preference_summary_by_type() -> None:
    answers = [
        answer("r1", "p1", "A", "B"),  # r1 first prefers the perturbed clip of p1 ...
        answer("r1", "p1", "A", "A"),  # ... then changes their mind: only the latest counts
        answer("r2", "p1", "B", "B"),
        answer("r3", "p1", "A", "B"),
        answer("r1", "p2", "B", "B", kind="early_entry"),
        answer("r2", "p2", "A", "A", kind="early_entry"),
    ]
    summary = listening.preference_summary(answers)
    late, early, overall = summary["late_response"], summary["early_entry"], summary["all"]
    assert (late["n_answers"], late["natural_preferred"], late["n_raters"]) == (3, 2, 3)
    assert late["preference_rate"] == pytest.approx(2 / 3)
    assert late["majority_agreement"] == pytest.approx(2 / 3)
    assert early["preference_rate"] == 1.0 and early["majority_agreement"] == 1.0
    assert (overall["n_answers"], overall["natural_preferred"], overall["n_pairs"]) == (5, 4, 2)
    assert (overall["ci_low"], overall["ci_high"]) == pytest.approx(wilson_interval(4, 5))
    assert overall["majority_agreement"] == pytest.approx((2 / 3 + 1) / 2)
    assert overall["n_pairs_with_2plus_raters"] == 2


def test_majority_agreement_needs_two_raters() -> None:
    agreement, n = listening.majority_agreement([answer("r1", "p1", "A", "A")])
    assert math.isnan(agreement) and n == 0
    agreement, n = listening.majority_agreement([answer("r1", "p1", "A", "A"), answer("r2", "p1", "A", "B")])
    assert (agreement, n) == (0.5, 1)


def test_rating_matrix_maps_positions_to_clips() -> None:
    answers = [answer("ann", "p1", "B", "B", ra=2, rb=5), answer("bob", "p1", "A", "A", ra=4, rb=1)]
    matrix, raters, units = listening.rating_matrix(answers)
    assert raters == ["ann", "bob"]
    assert units == [("p1", "natural"), ("p1", "perturbed")]
    np.testing.assert_array_equal(matrix, [[5, 2], [4, 1]])


def test_krippendorff_alpha_of_ratings() -> None:
    import krippendorff

    agree = [answer(r, p, "A", "A", ra=a, rb=b) for r in ("r1", "r2", "r3") for p, a, b in (("p1", 5, 1), ("p2", 4, 2), ("p3", 3, 3))]
    assert listening.rating_alpha(agree) == pytest.approx(1.0)
    reversed_ = [answer("r1", "p1", "A", "A", 5, 1), answer("r2", "p1", "A", "A", 1, 5), answer("r1", "p2", "A", "A", 4, 2), answer("r2", "p2", "A", "A", 2, 4)]
    assert listening.rating_alpha(reversed_) < 0
    mixed = [
        answer("r1", "p1", "A", "A", 5, 2), answer("r2", "p1", "B", "B", 1, 4), answer("r3", "p1", "A", "A", 4, 2),
        answer("r1", "p2", "B", "B", 3, 5), answer("r2", "p2", "A", "A", 4, 3),
    ]
    # the same data laid out by hand: rows r1..r3, columns p1 natural, p1 perturbed, p2 natural, p2 perturbed
    by_hand = np.array([[5, 2, 5, 3], [4, 1, 4, 3], [4, 2, np.nan, np.nan]])
    expected = krippendorff.alpha(reliability_data=by_hand, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    assert listening.rating_alpha(mixed) == pytest.approx(expected)
    assert math.isnan(listening.rating_alpha(agree[:3]))  # one rater
    assert math.isnan(listening.rating_alpha([answer(r, "p1", "A", "A", 3, 3) for r in ("r1", "r2")]))  # no variation


# ---------------------------------------------------------------------------------------
# SWOZ
# ---------------------------------------------------------------------------------------


def test_switching_schedule_follows_swoz_rule() -> None:
    schedule = swoz.switching_schedule(20_000.0, random.Random(1))
    lengths = np.array([s.end - s.start for s in schedule])
    assert schedule[0].start == 0.0 and schedule[-1].end == 20_000.0
    assert all(a.end == b.start and a.source != b.source for a, b in zip(schedule, schedule[1:]))
    assert lengths[:-1].min() >= 10.0 - 1e-9 and lengths.max() <= 50.0 + 1e-9
    # N(30, 10) clipped at 10 and 50 keeps a mean of 30 (the clipping is symmetric)
    assert lengths[:-1].mean() == pytest.approx(30.0, abs=1.0)
    assert swoz.switching_schedule(100.0, random.Random(7)) == swoz.switching_schedule(100.0, random.Random(7))
    assert swoz.switching_schedule(25.0, random.Random(0), first_source="human")[0].source == "human"
    with pytest.raises(swoz.SwozError):
        swoz.switching_schedule(0.0, random.Random(0))


def test_pause_rule_backchannels() -> None:
    dialogue = Dialogue(id="d", segments=[[(0, 2), (2.5, 4), (4.6, 5.0), (5.3, 8), (8.4, 9)], []], duration=10)
    # pauses after >= 1 s of speech; the pause at 5.0 follows a 0.4 s IPU and is skipped
    assert swoz.pause_rule_backchannels(dialogue, listener=1) == [2.25, 4.25, 8.25]
    assert swoz.pause_rule_backchannels(dialogue, listener=1, min_spacing_s=2.5) == [2.25, 8.25]


def test_judge_backchannels_threshold_and_spacing() -> None:
    probs = np.zeros(40)
    probs[0] = np.nan
    probs[[2, 3, 30]] = [0.2, 0.3, 0.5]
    assert swoz.judge_backchannels(probs) == [0.08, 1.2]
    assert swoz.judge_backchannels(probs, threshold=0.4) == [1.2]


def _toned_dialogue() -> Dialogue:
    segments = [[(0.0, 4.0), (4.5, 9.5)], [(2.0, 2.4), (6.0, 6.4)]]
    audio = np.zeros((2, 10 * SAMPLE_RATE), dtype=np.float32)
    t = np.arange(audio.shape[1]) / SAMPLE_RATE
    for channel, spans in enumerate(segments):
        for start, end in spans:
            sel = (t >= start) & (t < end)
            audio[channel, sel] = 0.3 * np.sin(2 * np.pi * (200 + 100 * channel) * t[sel])
    return Dialogue(id="toned", segments=segments, audio=audio)


def test_swoz_stimulus_swaps_backchannels_in_algorithm_intervals() -> None:
    dialogue = _toned_dialogue()
    schedule = [SourceSegment(0.0, 5.0, "human"), SourceSegment(5.0, 10.0, "algorithm")]
    stimulus = swoz.build_swoz_stimulus(dialogue, 1, schedule, [4.1, 7.0, 7.5, 9.8])
    # 4.1: human interval; 7.5: under 1 s after 7.0; 9.8: the snippet would run past the end
    assert stimulus.backchannels == [{"start": 2.0, "end": 2.4, "source": "human"}, {"start": 7.0, "end": 7.4, "source": "algorithm"}]
    listener = stimulus.audio[1]

    def rms(a: float, b: float) -> float:
        return float(np.sqrt(np.mean(listener[int(a * SAMPLE_RATE) : int(b * SAMPLE_RATE)] ** 2)))

    assert rms(2.05, 2.35) > 0.1  # human backchannel kept
    assert rms(6.02, 6.38) == 0.0  # human backchannel removed in the algorithm interval
    assert rms(7.05, 7.35) > 0.1  # the algorithm's, the listener's own snippet
    np.testing.assert_array_equal(stimulus.audio[0], dialogue.audio[0])
    assert stimulus.duration == 10.0
    with pytest.raises(swoz.SwozError, match="no backchannels"):
        swoz.build_swoz_stimulus(dialogue, 0, schedule, [7.0])


def _constant_judge(bc_logit: float):
    """A tiny random-init judge whose head ignores the audio: p_BC is fixed by the bias."""
    import torch

    from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
    from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge

    tiny = {"d_model": 64, "encoder_layers": 2, "encoder_attention_heads": 4, "encoder_ffn_dim": 128, "max_source_positions": 1500}
    model = TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=tiny, context_mode="causal", context_s=2.0))
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.zero_()
        model.classifier.bias[list(model.config.label_names).index("BC")] = bc_logit
    return model.eval()


def test_judge_as_listener_algorithm() -> None:
    dialogue = _toned_dialogue()  # speaker A holds one turn over 0-9.5 s; B (listener) backchannels
    judge = _constant_judge(10.0)
    times = swoz.judge_listener_backchannels(dialogue, 1, judge)
    # p_BC ~ 1 on every chunk: one backchannel per second (SWOZ spacing), all inside A's turn
    assert len(times) == 10 and times[0] <= 0.04 and times[-1] < 9.5
    assert np.diff(times) == pytest.approx(np.ones(9))
    # listener A: B never holds a turn, so the judge's backchannels have nowhere to go
    assert swoz.judge_listener_backchannels(dialogue, 0, judge) == []


def test_default_listener_has_more_backchannels() -> None:
    assert swoz.default_listener(_toned_dialogue()) == 1


# ---------------------------------------------------------------------------------------
# Pair stimuli
# ---------------------------------------------------------------------------------------


@pytest.mark.skipif(not (EXAMPLES_DIR / "human_like.json").is_file(), reason="bundled examples missing")
def test_pair_stimuli_written_and_read_back(tmp_path: Path) -> None:
    from turneval.dataset_scripts.readers import read_annotations

    dialogue = read_annotations(EXAMPLES_DIR / "human_like.json")
    built = stimuli.build_pair_stimuli([dialogue], tmp_path / "pairs")
    assert built, "the human-like example yields at least one pair"
    assert stimuli.load_pair_folder(tmp_path / "pairs") == built
    for pair in built:
        natural, perturbed = sf.info(str(pair.natural)), sf.info(str(pair.perturbed))
        assert natural.channels == perturbed.channels == 2
        assert 20.0 <= natural.duration <= 25.5 and pair.description
    pair, position = stimuli.choose_pair(built, {p.pair_id for p in built[1:]}, random.Random(0))
    assert pair == built[0] and position in ("A", "B")


def test_malformed_pair_folder_names_the_problem(tmp_path: Path) -> None:
    with pytest.raises(stimuli.StimulusError, match="no pair manifest"):
        stimuli.load_pair_folder(tmp_path)
    (tmp_path / "pairs.json").write_text('[{"pair_id": "x",\n "natural": }]')
    with pytest.raises(stimuli.StimulusError, match=r"pairs.json:2: invalid JSON"):
        stimuli.load_pair_folder(tmp_path)
    (tmp_path / "pairs.json").write_text(json.dumps([{"pair_id": "x", "perturbation_type": "t", "natural": "n.wav", "perturbed": "p.wav"}]))
    with pytest.raises(stimuli.StimulusError, match="n.wav not found"):
        stimuli.load_pair_folder(tmp_path)


# ---------------------------------------------------------------------------------------
# Analyse tab: caps, bad input, outputs
# ---------------------------------------------------------------------------------------


def _write(path: Path, audio: np.ndarray) -> Path:
    sf.write(str(path), np.asarray(audio, dtype=np.float32).T, SAMPLE_RATE)
    return path


def test_upload_caps_and_bad_files(tmp_path: Path) -> None:
    stereo = _write(tmp_path / "s.wav", np.zeros((2, 3 * SAMPLE_RATE)))
    mono = _write(tmp_path / "m.wav", np.zeros(SAMPLE_RATE))
    assert analysis.check_upload(stereo, limit_bytes=10**7, limit_seconds=10, channels=2) == 3.0
    with pytest.raises(analysis.AnalysisError, match=r"s.wav is 3.0 s long; the limit here is 2.0 s"):
        analysis.check_upload(stereo, limit_bytes=10**7, limit_seconds=2, channels=2)
    with pytest.raises(analysis.AnalysisError, match="MB; the limit here is"):
        analysis.check_upload(stereo, limit_bytes=1000, limit_seconds=10, channels=2)
    with pytest.raises(analysis.AnalysisError, match="1 channel.*stereo file"):
        analysis.check_upload(mono, limit_bytes=10**7, limit_seconds=10, channels=2)
    corrupt = tmp_path / "c.wav"
    corrupt.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk" * 10)
    with pytest.raises(analysis.AnalysisError, match="c.wav is not a readable audio file"):
        analysis.check_upload(corrupt, limit_bytes=10**7, limit_seconds=10)
    with pytest.raises(analysis.AnalysisError, match="upload a stereo conversation"):
        analysis.analyse(root=tmp_path)
    with pytest.raises(analysis.AnalysisError, match="both mono files"):
        analysis.analyse(user=mono, root=tmp_path)


def test_two_hour_file_is_refused_from_its_header(tmp_path: Path) -> None:
    # a real 2-hour file kept small by a 100 Hz sample rate (the cap reads the header)
    path = tmp_path / "long.wav"
    sf.write(str(path), np.zeros((2 * 3600 * 100, 2), dtype=np.float32), 100, subtype="PCM_16")
    with pytest.raises(analysis.AnalysisError, match="long.wav is 120.0 min long; the limit here is 10.0 min"):
        analysis.analyse(path, root=tmp_path / "work", limit_seconds=600)
    assert not (tmp_path / "work").exists(), "nothing may be written for a refused upload"


def test_silent_channel_is_a_clear_error(tmp_path: Path) -> None:
    audio = np.zeros((2, 2 * SAMPLE_RATE), dtype=np.float32)
    audio[0] = 0.1 * np.sin(np.linspace(0, 800 * np.pi, audio.shape[1]))
    path = _write(tmp_path / "half_silent.wav", audio)
    # the message names the upload by its file name (not the temp path) and says what is wrong
    with pytest.raises(analysis.AnalysisError, match=r"^half_silent.wav: .*(silent|no speech)"):
        analysis.analyse(path, system_channel=1, root=tmp_path / "work")


def test_clean_old_outputs(tmp_path: Path) -> None:
    old, new, other = tmp_path / "analysis_old", tmp_path / "analysis_new", tmp_path / "keep_me"
    for folder in (old, new, other):
        folder.mkdir()
    past = time.time() - 7200
    os.utime(old, (past, past))
    os.utime(other, (past, past))
    assert analysis.clean_old_outputs(tmp_path, max_age_s=3600) == [old]
    assert not old.exists() and new.exists() and other.exists()


@pytest.mark.skipif(not (EXAMPLES_DIR / "cascaded_like.wav").is_file(), reason="bundled examples missing")
def test_analyse_writes_plot_json_and_html(tmp_path: Path) -> None:
    audio, _ = sf.read(str(EXAMPLES_DIR / "cascaded_like.wav"), dtype="float32", frames=20 * SAMPLE_RATE, always_2d=True)
    clip = _write(tmp_path / "clip.wav", audio.T)

    def no_models(stereo, user, system, system_channel, limit_seconds):
        from turneval.reporting import report

        return report(stereo, system_channel=system_channel, judge=False, predictor=False, max_seconds=limit_seconds, progress=False)

    result = analysis.analyse(clip, system_channel=1, root=tmp_path / "work", analyser=no_models)
    assert result.timeline_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads(result.report_json.read_text())
    assert saved["conversation"]["system_channel"] == 1 and saved["conversation"]["duration_s"] == 20.0
    assert "<html" in result.report_html.read_text().lower()
    labels = [row[1] for row in result.table]
    assert "Gaps per minute" in labels and len(result.table[0]) == len(analysis.TABLE_COLUMNS)
    assert result.headline["verdict"] == saved["headline"]["verdict"] and result.headline["verdict_line"].startswith("Verdict:")
    assert result.gaps_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert result.timeline_png.parent.parent == tmp_path / "work"


# ---------------------------------------------------------------------------------------
# App handlers (no browser)
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app_module():
    spec = importlib.util.spec_from_file_location("turneval_space_app", SPACE_DIR / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_app_builds_and_pair_handlers_store_answers(app_module, store: ListeningStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    natural = _write(tmp_path / "n__natural.wav", 0.1 * np.ones((2, SAMPLE_RATE)))
    perturbed = _write(tmp_path / "n__perturbed.wav", 0.2 * np.ones((2, SAMPLE_RATE + 8000)))
    pair = stimuli.PairStimulus("p1", "late_response", "B's response comes 1.50 s later", natural, perturbed)
    monkeypatch.setattr(app_module, "cached_pairs", lambda: [pair])
    monkeypatch.setenv("TURNEVAL_SPACE_WORK", str(tmp_path / "work"))
    assert app_module.build_demo(store) is not None
    clip_a, clip_b, _, state, *_ = app_module.next_pair(store, "ann", None)
    # blind: opaque names, equal lengths; the natural clip sits where the state says
    assert (Path(clip_a).name, Path(clip_b).name) == ("clip_A.wav", "clip_B.wav")
    a, b = sf.read(clip_a)[0], sf.read(clip_b)[0]
    assert a.shape == b.shape == (SAMPLE_RATE + 8000, 2)
    natural_clip = a if state["natural_position"] == "A" else b
    assert np.allclose(natural_clip[:SAMPLE_RATE], 0.1, atol=1e-3) and np.allclose(natural_clip[SAMPLE_RATE:], 0.0)
    feedback, state = app_module.submit_pair(store, "ann", state, state["natural_position"], 5, 5)
    # nothing is revealed before Finish
    assert feedback.startswith("Saved") and "natural clip was" not in feedback and "late" not in feedback
    # submitting again without a new pair stores nothing
    assert app_module.submit_pair(store, "ann", state, "A", 5, 5)[0] == "Press 'Next pair' first."
    assert len(store.pair_answers()) == 1
    reveal, results, state = app_module.finish_pairs(store, state)
    assert "the natural clip was" in reveal and "late response" in reveal and "1.50 s later" in reveal
    table = results["value"]
    assert [row[0] for row in table] == ["late response", "all"] and table[1][3] == "100 %" and results["visible"] is True
    assert state is None and app_module.finish_pairs(store, state)[0] == "Answer at least one pair first."


def test_swoz_presses_after_finish_are_not_counted(app_module, store: ListeningStore) -> None:
    state = {"session": "s1", "schedule": [{"start": 0.0, "end": 30.0, "source": "human"}]}
    store.start_swoz_session("s1", "ann", "stim", 30.0, [SourceSegment(0.0, 30.0, "human")])
    assert "recorded at 1.0 s" in app_module.press_yuck(store, 1.0, state)
    status, results, state, yuck = app_module.finish_swoz(store, 5.0, state)
    assert "The sources were: 0-30 s human" in status and state["finished"] and yuck["interactive"] is False
    assert "not counted" in app_module.press_yuck(store, 6.0, state)
    assert len(store.yuck_presses()) == 1


def test_short_upload_is_refused_with_its_length(tmp_path: Path) -> None:
    short = _write(tmp_path / "half_second.wav", 0.1 * np.ones((2, SAMPLE_RATE // 2)))
    with pytest.raises(analysis.AnalysisError, match=r"half_second.wav is only 0.5 s long; the analysis needs at least 2 s"):
        analysis.analyse(short, root=tmp_path / "work")


def test_size_limit_is_stated_in_gradios_unit() -> None:
    # Gradio counts 2**20 bytes per MB: the page's limit and Gradio's own message must agree
    assert analysis.max_bytes() == 100 * 2**20 and analysis.size_text(analysis.max_bytes()) == "100.0 MB"
