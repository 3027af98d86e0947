"""Turn-taking agreement (Talking Turns §4.3-4.9): instances, judge labels, agreement, rates,
threshold sweep, confusion matrix, and the evaluate module."""
from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix as sk_confusion_matrix
from sklearn.metrics import f1_score

from turneval import Dialogue, DialogueError
from turneval.dataset_scripts.agreement_instances import (
    LABELS,
    build_agreement_instances,
    dialogue_agreement_instances,
    system_decision_chunks,
)
from turneval.metrics.agreement import (
    agreement,
    confusion_matrix,
    judge_labels,
    judge_scores,
    occurrence_rates,
    single_labels,
    threshold_grid,
    threshold_sweep,
    tune_operating_points,
)


# A hand-labelled human-AI session: the user is A (speaker 0), the system is B (speaker 1).
# Each entry: (label, floor owner after the chunk) in the labeller's floor states.
SCENARIO = [
    ("NA", "NA"),  # 0
    ("T", "A"),  # 1  the user starts
    ("C", "A"),  # 2
    ("NA", "A"),  # 3  user pause ...
    ("NA", "A"),  # 4
    ("C", "A"),  # 5  ... the user resumes: (a) C
    ("C", "A"),  # 6
    ("BC", "A"),  # 7  the system backchannels: (b) BC
    ("C", "A"),  # 8
    ("I", "AB"),  # 9  the system comes in over the user: (c) I
    ("C", "A"),  # 10 the user keeps the floor
    ("NA", "A"),  # 11
    ("T", "B"),  # 12 the system speaks up: (a) T
    ("C", "B"),  # 13
    ("NA", "B"),  # 14 system pause ...
    ("T", "A"),  # 15 ... the user speaks up: (d) T
    ("C", "A"),  # 16
    ("NA", "A"),  # 17
    ("T", "B"),  # 18 (a) T
    ("C", "B"),  # 19
    ("I", "BA"),  # 20 the user interrupts the system ...
    ("I", "BA"),  # 21
    ("T", "A"),  # 22 ... and takes the floor: (e) T
    ("NA", "A"),  # 23
    ("T", "B"),  # 24 (a) T
    ("C", "B"),  # 25
    ("I", "BA"),  # 26 the user interrupts again ...
    ("C", "B"),  # 27 ... the system keeps the floor: (e) C
    ("NA", "B"),  # 28 system pause ...
    ("C", "B"),  # 29 ... the system resumes: (d) C
]

EXPECTED = {
    "a": [(5, "C"), (12, "T"), (18, "T"), (24, "T")],
    "b": [(2, "C"), (5, "C"), (6, "C"), (7, "BC"), (10, "C"), (16, "C")],
    "c": [(2, "C"), (6, "C"), (9, "I"), (16, "C")],
    "d": [(15, "T"), (29, "C")],
    "e": [(22, "T"), (27, "C")],
}


def _scenario_probs(n: int) -> np.ndarray:
    """Distinct rows, so that the row an instance reads identifies the chunk."""
    rng = np.random.default_rng(0)
    return rng.dirichlet(np.ones(5), size=n)


def _scenario_instances(**kwargs):
    labels = [label for label, _ in SCENARIO]
    floor = [owner for _, owner in SCENARIO]
    probs = _scenario_probs(len(SCENARIO))
    return build_agreement_instances(labels, floor, probs, system_speaker=1, session="s", **kwargs), probs


def test_instances_follow_the_rules_on_a_hand_labelled_session():
    instances, _ = _scenario_instances()
    for metric, expected in EXPECTED.items():
        got = [(inst.chunk, inst.decision) for inst in instances if inst.metric == metric]
        assert got == expected, metric


def test_instances_read_the_judge_row_of_the_previous_chunk():
    instances, probs = _scenario_instances()
    for inst in instances:
        np.testing.assert_allclose(inst.probs, probs[inst.chunk - 1])
        assert inst.time == pytest.approx(0.04 * inst.chunk)
        assert inst.session == "s"


def test_instances_with_roles_swapped_and_integer_floor():
    labels = [label for label, _ in SCENARIO]
    owners = {"NA": -1, "A": 0, "B": 1, "AB": 0, "BA": 1}
    floor = [owners[o] for _, o in SCENARIO]
    probs = _scenario_probs(len(SCENARIO))
    swapped = build_agreement_instances(labels, floor, probs, system_speaker=0, session="s")
    # With A as the system, the (a) and (d) instances trade places.
    assert [(i.chunk, i.decision) for i in swapped if i.metric == "d"] == EXPECTED["a"]
    assert [(i.chunk, i.decision) for i in swapped if i.metric == "a"] == EXPECTED["d"]


def test_instances_accept_probs_one_row_short_and_reject_wrong_shapes():
    labels = [label for label, _ in SCENARIO]
    floor = [owner for _, owner in SCENARIO]
    probs = _scenario_probs(len(SCENARIO))
    short = build_agreement_instances(labels, floor, probs[:-1], 1, "s")
    assert len(short) == len(_scenario_instances()[0])
    with pytest.raises(DialogueError, match="row t must predict chunk t\\+1"):
        build_agreement_instances(labels, floor, probs[:-2], 1, "s")
    with pytest.raises(DialogueError, match="unknown chunk labels"):
        build_agreement_instances(["X"] + labels[1:], floor, probs, 1, "s")
    with pytest.raises(DialogueError, match="unknown floor state"):
        build_agreement_instances(labels, ["Z"] + floor[1:], probs, 1, "s")
    with pytest.raises(ValueError, match="unknown agreement metrics"):
        build_agreement_instances(labels, floor, probs, 1, "s", metrics=("z",))


def test_system_decision_chunks_are_the_chunks_entered_on_the_users_floor():
    floor = [owner for _, owner in SCENARIO]
    chunks = system_decision_chunks(floor, system_speaker=1)
    entering = ["NA"] + floor[:-1]
    expected = [k for k in range(1, len(floor)) if entering[k] in ("A", "AB")]
    assert chunks.tolist() == expected


def test_dialogue_instances_find_the_system_response_after_a_user_pause():
    dialogue = Dialogue(id="d1", segments=[[(0.5, 2.0), (6.5, 7.5)], [(2.6, 6.0)]], system_speaker=1, duration=8.0)
    probs = np.full((200, 5), 0.2)
    found = dialogue_agreement_instances(dialogue, probs, metrics=("a", "d"))
    assert [(i.metric, i.decision) for i in found] == [("a", "T"), ("d", "T")]
    assert all(i.session == "d1" for i in found)
    with pytest.raises(DialogueError, match="system_speaker"):
        dialogue_agreement_instances(Dialogue(id="x", segments=[[], []], duration=1.0), probs[:25])


def test_judge_labels_use_strict_thresholds():
    probs = [[0.0, 0.1, 0.2, 0.4, 0.3], [0.0, 0.1, 0.2, 0.3, 0.4]]
    np.testing.assert_allclose(judge_scores("a", probs), [0.1, -0.1])
    assert judge_labels("a", probs).tolist() == ["T", "C"]
    assert judge_labels("a", [[0.0, 0.0, 0.5, 0.25, 0.25]]).tolist() == ["C"]  # 0 is not > th_a = 0
    assert judge_labels("e", [[0.0, 0.0, 0.5, 0.25, 0.25], [0.0, 0.0, 0.375, 0.25, 0.375]]).tolist() == ["T", "C"]
    assert judge_labels("b", [[0.9, 0.1, 0.0, 0.0, 0.0], [0.8, 0.11, 0.0, 0.0, 0.09]]).tolist() == ["C", "BC"]
    assert judge_labels("c", [[0.0, 0.0, 0.1, 0.0, 0.5], [0.0, 0.0, 0.1, 0.0, 0.6]]).tolist() == ["I", "C"]


def _instance(metric, decision, p_pos, p_c, session):
    probs = [0.0] * 5
    positive = {"a": "T", "d": "T", "e": "T", "b": "BC", "c": "I"}[metric]
    probs[LABELS.index(positive)] = p_pos
    probs[LABELS.index("C")] = p_c
    probs[0] = 1.0 - p_pos - p_c
    return {"metric": metric, "decision": decision, "probs": probs, "session": session}


def test_agreement_per_decision_with_session_interval():
    rows = [
        # session s1: T decisions 2/2 agree; C decisions 1/2 agree
        _instance("a", "T", 0.6, 0.2, "s1"),
        _instance("a", "T", 0.5, 0.3, "s1"),
        _instance("a", "C", 0.2, 0.6, "s1"),
        _instance("a", "C", 0.6, 0.2, "s1"),
        # session s2: T 0/1; C 1/1
        _instance("a", "T", 0.1, 0.8, "s2"),
        _instance("a", "C", 0.1, 0.8, "s2"),
        # session s3: C 0/1
        _instance("a", "C", 0.7, 0.1, "s3"),
    ]
    result = agreement(rows)["a"]
    t, c = result["decisions"]["T"], result["decisions"]["C"]
    assert (t["n_instances"], t["n_sessions"]) == (3, 2)
    assert t["agreement"] == pytest.approx(2 / 3)
    assert t["session_mean"] == pytest.approx(0.5)
    sd = np.std([1.0, 0.0], ddof=1)
    assert t["session_sd"] == pytest.approx(sd)
    assert t["ci95_half_width"] == pytest.approx(1.96 * sd / math.sqrt(2))
    assert (t["ci95_low"], t["ci95_high"]) == pytest.approx((0.5 - t["ci95_half_width"], 0.5 + t["ci95_half_width"]))
    assert (c["n_instances"], c["n_sessions"]) == (4, 3)
    assert c["agreement"] == pytest.approx(2 / 4)
    assert c["session_mean"] == pytest.approx(np.mean([0.5, 1.0, 0.0]))
    assert c["ci95_half_width"] == pytest.approx(1.96 * np.std([0.5, 1.0, 0.0], ddof=1) / math.sqrt(3))
    assert result["threshold"] == 0.0 and result["n_instances"] == 7


def test_agreement_thresholds_and_single_session():
    rows = [_instance("a", "T", 0.45, 0.5, "s"), _instance("d", "T", 0.45, 0.5, "s")]
    assert agreement(rows)["a"]["decisions"]["T"]["agreement"] == 0.0
    lowered = agreement(rows, thresholds={"a": -0.1})
    assert lowered["a"]["decisions"]["T"]["agreement"] == 1.0
    assert lowered["d"]["decisions"]["T"]["agreement"] == 1.0  # th_a also sets (d)
    assert lowered["a"]["decisions"]["T"]["ci95_half_width"] == 0.0  # one session: zero width
    assert math.isnan(lowered["a"]["decisions"]["C"]["session_mean"])  # no C instances
    assert agreement(rows, thresholds={"a": -0.1, "d": 0.0})["d"]["decisions"]["T"]["agreement"] == 0.0


def test_agreement_rejects_malformed_instances():
    with pytest.raises(ValueError, match="decision 'BC' is not one of"):
        agreement([_instance("a", "BC", 0.5, 0.5, "s")])
    with pytest.raises(ValueError, match="unknown metric"):
        agreement([{"metric": "f", "decision": "T", "probs": [0.2] * 5, "session": "s"}])
    with pytest.raises(ValueError, match="5 probabilities"):
        agreement([{"metric": "a", "decision": "T", "probs": [0.5, 0.5], "session": "s"}])
    with pytest.raises(ValueError, match="NaN or inf"):
        agreement([{"metric": "a", "decision": "T", "probs": [float("nan")] * 5, "session": "s"}])
    with pytest.raises(ValueError, match="thresholds"):
        agreement([_instance("a", "T", 0.5, 0.5, "s")], thresholds={"q": 0.0})


def test_occurrence_rates_are_shares_of_the_positive_decision():
    instances, _ = _scenario_instances()
    rates = occurrence_rates(instances)
    assert rates["a"] == {"decision": "T", "count": 3, "n_instances": 4, "rate": 0.75}
    assert rates["b"]["rate"] == pytest.approx(1 / 6)
    assert rates["c"]["rate"] == pytest.approx(1 / 4)
    assert rates["e"]["rate"] == pytest.approx(0.5)


def test_threshold_grid_and_sweep_shape():
    grid_a, grid_b = threshold_grid("a"), threshold_grid("b")
    assert len(grid_a) == 101 and grid_a[0] == -0.5 and grid_a[-1] == 0.5 and 0.1 in grid_a.tolist()
    assert len(grid_b) == 101 and grid_b[0] == 0.0 and grid_b[-1] == 1.0
    rng = np.random.default_rng(1)
    rows = [
        {"metric": "a", "decision": rng.choice(["T", "C"]), "probs": p, "session": f"s{i % 3}"}
        for i, p in enumerate(rng.dirichlet(np.ones(5), size=40))
    ]
    sweep = threshold_sweep(rows, "a")
    assert sweep["thresholds"] == grid_a.tolist()
    for decision in ("T", "C"):
        curve = np.asarray(sweep["agreement"][decision])
        assert curve.shape == (101,)
        assert np.all((curve >= 0) & (curve <= 1))
        assert sweep["margin_of_error"][decision] == pytest.approx(1.96 * curve.std(ddof=1) / math.sqrt(101))
        assert sweep["mean"][decision] == pytest.approx(curve.mean())
    assert np.all(np.diff(sweep["agreement"]["T"]) <= 0)  # a higher threshold says T less often
    assert np.all(np.diff(sweep["agreement"]["C"]) >= 0)
    # Each point equals the agreement at that threshold.
    at = agreement(rows, thresholds={"a": grid_a[37]})["a"]["decisions"]
    assert sweep["agreement"]["T"][37] == pytest.approx(at["T"]["agreement"])
    assert sweep["agreement"]["C"][37] == pytest.approx(at["C"]["agreement"])


def test_confusion_matrix_argmax_matches_sklearn():
    rng = np.random.default_rng(2)
    probs = rng.dirichlet(np.ones(5), size=60)
    actual = rng.choice(LABELS, size=60).tolist()
    result = confusion_matrix(actual, probs, normalize=False)
    predicted = [LABELS[i] for i in probs.argmax(axis=1)]
    expected = sk_confusion_matrix(actual, predicted, labels=list(LABELS))
    assert result["counts"] == expected.tolist()
    assert result["accuracy"] == pytest.approx(np.trace(expected) / 60)
    normalized = confusion_matrix(actual, probs)
    assert np.sum(normalized["matrix"]) == pytest.approx(100.0)


def test_operating_points_favour_a_class_above_its_point():
    probs = [[0.5, 0.2, 0.0, 0.0, 0.3]]
    assert single_labels(probs).tolist() == ["NA"]
    assert single_labels(probs, [0.6, 0.1, 0.5, 0.5, 0.5]).tolist() == ["BC"]
    with pytest.raises(ValueError, match="one value per label"):
        single_labels(probs, [0.1, 0.2])


def test_tuned_operating_points_maximise_one_vs_rest_f1():
    rng = np.random.default_rng(3)
    actual = rng.choice(LABELS, size=80)
    probs = rng.dirichlet(np.ones(5), size=80)
    probs[actual == "T", 3] += 0.3  # make T partly separable
    probs /= probs.sum(axis=1, keepdims=True)
    points = tune_operating_points(actual, probs)
    for k, name in enumerate(LABELS):
        truth = actual == name
        best = max(f1_score(truth, probs[:, k] >= th) for th in np.unique(probs[:, k]))
        assert f1_score(truth, probs[:, k] >= points[k]) == pytest.approx(best)


def test_evaluate_module_loads_by_relative_and_absolute_path(repo_root, monkeypatch):
    import evaluate

    monkeypatch.chdir(repo_root)
    relative = evaluate.load("metrics/turn_taking_agreement")
    absolute = evaluate.load(str(repo_root / "metrics" / "turn_taking_agreement"))
    instances, _ = _scenario_instances()
    columns = {k: [getattr(i, k) for i in instances] for k in ("metric", "decision", "probs", "session")}
    direct = agreement(columns)
    for module in (relative, absolute):
        result = module.compute(**columns, sweep=True)
        assert result["agreement"] == direct
        assert result["occurrence_rates"] == occurrence_rates(columns)
        assert len(result["threshold_sensitivity"]["b"]["thresholds"]) == 101
    custom = relative.compute(**columns, th_a=-0.5)
    assert custom["agreement"]["d"]["threshold"] == -0.5


def test_user_interruption_rate_swaps_the_roles_of_c():
    from turneval.dataset_scripts.agreement_instances import user_interruption_rate

    labels = [label for label, _ in SCENARIO]
    floor = [owner for _, owner in SCENARIO]
    # Chunks after a system-alone chunk that are I or C: 12->13 C, 18->19 C, 19->20 I, 24->25 C,
    # 25->26 I; 13->14 and 27->28 are NA (not counted) and 29 is the last chunk.
    rate = user_interruption_rate(labels, floor, system_speaker=1)
    assert rate == {"count": 2, "n_chunks": 5, "rate": 0.4}
    # With the roles swapped it is the (c) rate of the scenario.
    assert user_interruption_rate(labels, floor, system_speaker=0)["rate"] == pytest.approx(1 / 4)


def test_two_party_instances_take_each_speaker_as_the_system_in_turn():
    from turneval.dataset_scripts.agreement_instances import dialogue_agreement_instances, two_party_instances
    from turneval.dataset_scripts.labels import chunk_labels

    # A speaks, pauses and goes on; B takes the turn; A backchannels inside B's turn.
    d = Dialogue("hh", segments=[[(0.0, 2.0), (2.6, 4.0), (6.2, 6.5)], [(4.3, 8.0)]], duration=9.0)
    n = len(chunk_labels(d))
    probs = np.tile([0.1, 0.1, 0.1, 0.3, 0.4], (n, 1))
    both = two_party_instances(d, probs)
    expected = []
    for system in (0, 1):
        d.system_speaker = system
        expected += dialogue_agreement_instances(d, probs)
    assert [(i.metric, i.decision, i.chunk) for i in both] == [(i.metric, i.decision, i.chunk) for i in expected]
    assert {i.session for i in both} == {"hh/A", "hh/B"}
    assert {i.metric for i in both} >= {"a", "d"}


def test_tuning_over_the_whole_score_range_finds_a_judges_own_threshold():
    from turneval.metrics.agreement import tune_thresholds

    # a judge whose p_T - p_C sits far below the paper's grid (-0.5..0.5): T decisions at -0.7, C at -0.9
    rows = [{"metric": "a", "decision": d, "probs": [0.0, 0.0, 0.0, (1 + s) / 2, (1 - s) / 2], "session": "s"}
            for d, s in [("T", -0.7), ("T", -0.72), ("C", -0.9), ("C", -0.95)]]
    paper_grid = tune_thresholds(rows)["a"]
    assert paper_grid["agreement"]["T"] == 0.0 and paper_grid["agreement"]["C"] == 1.0  # nothing on the grid says T
    wide = tune_thresholds(rows, wide=True)["a"]
    assert -0.9 <= wide["threshold"] < -0.72
    assert wide["agreement"] == {"T": 1.0, "C": 1.0}
    # the middle of the flat optimum, not its lower edge
    assert wide["threshold"] == pytest.approx(-0.81, abs=0.011)


def test_judge_config_keeps_its_agreement_thresholds(tmp_path):
    from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig

    config = TurnTakingJudgeConfig(agreement_thresholds={"a": -0.3, "e": -0.2})
    config.save_pretrained(tmp_path)
    assert TurnTakingJudgeConfig.from_pretrained(tmp_path).agreement_thresholds == {"a": -0.3, "e": -0.2}
    assert TurnTakingJudgeConfig().agreement_thresholds is None
    with pytest.raises(ValueError, match="unknown metric ids"):
        TurnTakingJudgeConfig(agreement_thresholds={"f": 0.0})


def test_agreement_ceiling_finds_the_best_cut_between_any_two_scores():
    from turneval.metrics.agreement import agreement, agreement_ceiling, tune_thresholds

    # BC probabilities finer than the tuner's 0.01 steps: the best cut lies between 0.013 and 0.0152
    scores = {"BC": [0.0195, 0.017, 0.0165, 0.0152], "C": [0.0158, 0.013, 0.004, 0.002, 0.001]}
    rows = [{"metric": "b", "decision": d, "probs": [0.0, p, 0.0, 0.0, 1.0 - p], "session": "s"}
            for d, ps in scores.items() for p in ps]
    ceiling = agreement_ceiling(rows)["b"]
    assert 0.013 <= ceiling["threshold"] < 0.0152
    assert ceiling["agreement"] == {"BC": 1.0, "C": 0.8} and ceiling["lowest"] == 0.8
    assert ceiling["n_instances"] == {"BC": 4, "C": 5}
    # the ceiling's agreements are what agreement() gives at its threshold
    at = agreement(rows, {"b": ceiling["threshold"]})["b"]["decisions"]
    assert {d: s["agreement"] for d, s in at.items()} == ceiling["agreement"]
    # the tuner's grid has no cut there: at 0.01 it says BC for 2 of the 5 C decisions
    tuned = tune_thresholds(rows, wide=True)["b"]["agreement"]
    assert min(tuned.values()) == pytest.approx(0.6)
    # a metric with one decision only has no ceiling
    assert "a" not in agreement_ceiling(rows + [{"metric": "a", "decision": "T", "probs": [0, 0, 0, 1, 0], "session": "s"}])
