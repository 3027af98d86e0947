"""`turneval release`: the Hub repos, release.json, and every repo loaded by its id offline.

One release (synthetic data only, 2 question items per class, no demo Space: its wheel build is
tested by test_space_assemble) is written with ``--as-cache``; a fresh Python process that never
imports turneval then loads each model with ``AutoModel.from_pretrained(id, trust_remote_code=True)``,
each data set with ``load_dataset(id)`` and each metric with ``evaluate.load(id)``, runs each model
card's usage block as written, and its figures are compared with the package's own. Every code block of
every released model and data set card runs there, in order, with turneval unimportable.
"""
import ast
import doctest
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from turneval.cli import main
from turneval.release.dataset_sources import check_sources
from turneval.release.hub_cache import cache_env
from turneval.release.manifest import check_files, read_manifest
from turneval.release.model_index import FIGURES, model_index
from turneval.release.model_repo import check_self_contained
from turneval.release.plan import ReleaseError
from turneval.release.planning import release_plan


ORG = "test-org"
REPO = Path(__file__).resolve().parents[1]

LOADER = r'''
import doctest, json, sys
import numpy as np
import torch
from transformers import AutoModel
import datasets, evaluate

datasets.disable_progress_bars()
job = json.loads(sys.stdin.read())
out = {"models": {}, "datasets": {}, "metrics": {}, "usage": {}}
rng = np.random.default_rng(0)
audio = (0.1 * rng.standard_normal(16000 * 2)).astype(np.float32)
activity = np.zeros((300, 2), dtype=np.float32)
activity[20:120, 0] = 1
activity[130:260, 1] = 1
for repo_id in job["models"]:
    model = AutoModel.from_pretrained(repo_id, trust_remote_code=True).eval()
    with torch.no_grad():
        if model.config.model_type == "turn_taking_judge":
            figure = model.score(audio).probabilities
        else:
            figure = model(voice_activity=torch.from_numpy(model.vad_inputs(activity))[None]).logits[0]
    out["models"][repo_id] = np.asarray(figure, dtype=np.float64).tolist()
out["turneval_imported_by_models"] = "turneval" in sys.modules
kept = sys.modules.get("turneval")
sys.modules["turneval"] = None  # a card's code must run for someone who has only the Hub
for repo_id, blocks in job["usage"].items():
    namespace = {}
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"code block {number} of the card of {repo_id}", "exec"), namespace)
    out["usage"][repo_id] = len(blocks)
sys.modules.pop("turneval")
if kept is not None:
    sys.modules["turneval"] = kept
for repo_id in job["datasets"]:
    ds = datasets.load_dataset(repo_id)
    first = ds["synthetic"][0]
    out["datasets"][repo_id] = {
        "rows": {split: part.num_rows for split, part in ds.items()},
        "first": {k: first[k] for k in ("conversation_id", "labels", "pair_id", "perturbation_type", "item_id", "answer") if k in first},
    }
for repo_id, examples in job["metrics"].items():
    parsed = [doctest.Example(source, want) for source, want in examples]
    test = doctest.DocTest(parsed, {}, repo_id, None, 0, None)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(test, out=report.append)
    out["metrics"][repo_id] = {"attempted": runner.tries, "failed": runner.failures, "report": "".join(report)[-1500:]}
print("RESULT " + json.dumps(out))
'''


def docstring_examples(name: str, repo_id: str) -> list[tuple[str, str]]:
    """(source, expected output) of the examples in a metric module's docstrings, loading ``repo_id``."""
    tree = ast.parse((REPO / "metrics" / name / f"{name}.py").read_text(encoding="utf-8"))
    text = "".join(
        node.value.value for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        and ">>>" in node.value.value
    )
    examples = doctest.DocTestParser().get_examples(text)
    assert examples, f"metrics/{name}/{name}.py has no docstring example"
    return [(e.source.replace(f"metrics/{name}", repo_id), e.want) for e in examples]


def card_blocks(card: Path) -> list[str]:
    """Every fenced code block of a released card, in order; each must be Python (it runs as written)."""
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", card.read_text(encoding="utf-8"), re.S | re.M)
    assert blocks, f"{card}: no code block"
    assert all(lang == "python" for lang, _ in blocks), f"{card}: a code block that is not Python cannot run in the test"
    return [code for _, code in blocks]


def python_blocks(card: Path) -> list[str]:
    """The Python blocks of a released metric card (its other blocks are the citation's BibTeX)."""
    blocks = re.findall(r"^```python\n(.*?)^```", card.read_text(encoding="utf-8"), re.S | re.M)
    assert blocks, f"{card}: no Python block"
    return blocks


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("release")
    code = main(["release", "--org", ORG, "--out", str(root / "hub"), "--as-cache", str(root / "home"),
                 "--sources", "synthetic", "--questions-per-class", "2", "--no-demo"])
    assert code == 0
    return root


@pytest.fixture(scope="module")
def loaded(release):
    """What the fresh process found, loading every repo of release.json by its id."""
    manifest = read_manifest(release / "hub")
    by_kind = {kind: [r["repo_id"] for r in manifest["repos"] if r["kind"] == kind] for kind in ("model", "dataset", "metric")}
    snapshots = {r["repo_id"]: r for r in manifest["repos"]}
    job = {
        "models": by_kind["model"],
        "datasets": by_kind["dataset"],
        "metrics": {repo_id: docstring_examples(repo_id.split("/")[1], repo_id) for repo_id in by_kind["metric"]},
        "usage": {repo_id: card_blocks(release / "hub" / snapshots[repo_id]["folder"] / "README.md")
                  for repo_id in by_kind["model"] + by_kind["dataset"]}
        | {repo_id: python_blocks(release / "hub" / snapshots[repo_id]["folder"] / "README.md") for repo_id in by_kind["metric"]},
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TURNEVAL_"))}
    env.update(cache_env(release / "home"))
    result = subprocess.run([sys.executable, "-c", LOADER], input=json.dumps(job), capture_output=True, text=True,
                            env=env, cwd=str(release), timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))
    return manifest, json.loads(line[len("RESULT "):])


def test_every_repo_of_release_json_loads_by_id_offline(loaded):
    manifest, found = loaded
    ids = {r["repo_id"] for r in manifest["repos"]}
    assert ids == set(found["models"]) | set(found["datasets"]) | set(found["metrics"])
    assert len(found["models"]) == 3 and len(found["datasets"]) == 3 and len(found["metrics"]) == 6
    assert not found["turneval_imported_by_models"], "the models' remote code imported turneval"
    assert set(found["usage"]) == set(found["models"]) | set(found["datasets"]) | set(found["metrics"])


def test_models_by_id_give_the_package_figures(loaded):
    import torch

    from turneval.checkpoints import bundled_root
    from turneval.modeling.judge_loading import load_judge
    from turneval.naturalness_inference import load_predictor

    _, found = loaded
    rng = np.random.default_rng(0)
    audio = (0.1 * rng.standard_normal(16000 * 2)).astype(np.float32)
    activity = np.zeros((300, 2), dtype=np.float32)
    activity[20:120, 0] = 1
    activity[130:260, 1] = 1
    for repo_id, figure in found["models"].items():
        folder = bundled_root() / repo_id.split("/")[1]
        if "judge" in repo_id:
            ours = load_judge(folder).score(audio).probabilities
        else:
            model = load_predictor(str(folder))
            with torch.no_grad():
                ours = model(voice_activity=torch.from_numpy(model.vad_inputs(activity))[None]).logits[0]
        np.testing.assert_allclose(np.asarray(figure), np.asarray(ours, dtype=np.float64), atol=1e-5, err_msg=repo_id)


def test_data_sets_by_id_hold_the_package_rows(loaded):
    import tempfile

    from turneval.dataset_scripts.builders import write_dialogue_manifest
    from turneval.release.dataset_repo import build, read_sources

    _, found = loaded
    with tempfile.TemporaryDirectory() as work:
        dialogues = read_sources(("synthetic",), None, Path(work))["synthetic"]
        manifest = write_dialogue_manifest(dialogues, Path(work) / "manifest.jsonl", split="synthetic")
        for repo_id, got in found["datasets"].items():
            ours = build(repo_id.split("/")[1], manifest, Path(work) / "cache", questions_per_class=2)["synthetic"]
            assert got["rows"] == {"synthetic": ours.num_rows}, repo_id
            assert ours.num_rows > 0
            for key, value in got["first"].items():
                assert ours[0][key] == value, (repo_id, key)


def test_metrics_by_id_pass_their_docstring_examples(loaded):
    _, found = loaded
    for repo_id, run in found["metrics"].items():
        assert run["attempted"] >= 3 and run["failed"] == 0, f"{repo_id}:\n{run['report']}"


def test_release_json_lists_every_file_with_its_hash(release):
    manifest = read_manifest(release / "hub")
    check_files(release / "hub", manifest)
    judge = next(r for r in manifest["repos"] if r["repo_id"] == f"{ORG}/turn_taking_judge_swb_revoiced")
    assert {"config.json", "model.safetensors", "README.md", "LICENSE", "modeling_turn_taking_judge.py",
            "configuration_turn_taking_judge.py"} <= set(judge["files"])
    chunks = next(r for r in manifest["repos"] if r["repo_id"] == f"{ORG}/turn_taking_chunks")
    assert chunks["licence"] == "apache-2.0" and chunks["sources"] == ["synthetic"]
    licence = release / "hub" / judge["folder"] / "LICENSE"
    kept = licence.read_bytes()
    licence.write_text("changed", encoding="utf-8")
    try:
        with pytest.raises(ReleaseError, match="differ"):
            check_files(release / "hub", manifest)
    finally:
        licence.write_bytes(kept)


def test_push_creates_and_uploads_every_repo_with_the_token(release, monkeypatch):
    import huggingface_hub

    from turneval.release.push import push_release

    calls = []

    class RecordingApi:
        def __init__(self, token):
            calls.append(("token", token))

        def create_repo(self, repo_id, repo_type, exist_ok, space_sdk):
            calls.append(("create", repo_id, repo_type, space_sdk))

        def upload_folder(self, folder_path, repo_id, repo_type, commit_message):
            calls.append(("upload", repo_id, repo_type, sorted(p.name for p in Path(folder_path).iterdir())))

    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingApi)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    with pytest.raises(ReleaseError, match="HF_TOKEN"):
        push_release(release / "hub")
    assert calls == []
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: "hf_test")
    pushed = push_release(release / "hub", progress=lambda _: None)
    manifest = read_manifest(release / "hub")
    assert pushed == [r["repo_id"] for r in manifest["repos"]] and calls[0] == ("token", "hf_test")
    created = {c[1]: c for c in calls if c[0] == "create"}
    assert created[f"{ORG}/turn_naturalness"][2:] == ("space", "gradio") and created[f"{ORG}/turn_taking_chunks"][2:] == ("dataset", None)
    uploads = {c[1]: c[3] for c in calls if c[0] == "upload"}
    assert "model.safetensors" in uploads[f"{ORG}/future_activity_predictor_lookahead"] and "turn_naturalness.py" in uploads[f"{ORG}/turn_naturalness"]


def test_card_metadata_comes_from_provenance(release):
    from turneval.checkpoints import bundled_root
    from turneval.release.cards import split_front_matter

    for name in FIGURES:
        meta, _ = split_front_matter(release / "hub" / "models" / name / "README.md")
        provenance = json.loads((bundled_root() / name / "provenance.json").read_text(encoding="utf-8"))["measured"]
        values = [m["value"] for r in meta["model-index"][0]["results"] for m in r["metrics"]]
        assert values and all(v in provenance.values() for v in values), name
        assert meta["model-index"] == model_index(name, bundled_root() / name / "provenance.json")


def test_the_plan_ships_one_model_per_job_and_no_non_commercial_data(capsys):
    plans = release_plan(ORG)
    models = [p.name for p in plans if p.kind == "model"]
    assert models == ["turn_taking_judge_swb_revoiced", "future_activity_predictor_lookahead", "future_activity_predictor_words"]
    with pytest.raises(ReleaseError, match="CC BY-NC"):
        check_sources(("spokenwoz",))
    assert main(["release", "--org", ORG]) == 0
    assert "dry run: nothing written" in capsys.readouterr().out
    assert main(["release", "--org", "bad org!"]) == 1


def test_remote_code_may_not_import_turneval(tmp_path):
    bad = tmp_path / "modeling_x.py"
    bad.write_text("import torch\nfrom turneval.modeling import judge_loading\n", encoding="utf-8")
    with pytest.raises(ReleaseError, match="modeling_x.py:2: imports turneval.modeling"):
        check_self_contained(bad, {"configuration_x", "modeling_x"})
    check_self_contained(REPO / "modeling" / "modeling_turn_taking_judge.py", {"configuration_turn_taking_judge", "modeling_turn_taking_judge"})


def test_metric_spaces_carry_their_turneval_code_and_load_by_repo_id(release):
    """A metric Space holds its module with the turneval copies it imports, requirements from the
    package index only, and a card whose example loads the repo id."""
    space = release / "hub" / "spaces" / "turn_taking_agreement"
    assert sorted(p.name for p in space.glob("turneval_*.py")) == sorted(p.name for p in (REPO / "metrics" / "turn_taking_agreement").glob("turneval_*.py"))
    assert "turneval" not in (space / "requirements.txt").read_text().split()
    card = (space / "README.md").read_text()
    assert f'evaluate.load("{ORG}/turn_taking_agreement")' in card and 'evaluate.load("turn_taking_agreement")' not in card


def _released_cards(release: Path) -> dict[str, Path]:
    manifest = read_manifest(release / "hub")
    return {r["repo_id"]: release / "hub" / r["folder"] / "README.md" for r in manifest["repos"] if r["kind"] in ("model", "dataset")}


def test_released_cards_read_on_the_hub(release):
    """Absolute links only, the usage block on the first screen, front matter the Hub accepts,
    one licence name for the three models, LICENSE files citing addresses that exist."""
    from turneval.release.cards import check_card_metadata, relative_links, split_front_matter

    names = set()
    for repo_id, card in _released_cards(release).items():
        text = card.read_text(encoding="utf-8")
        assert not relative_links(text), f"{repo_id}: relative links {relative_links(text)} do not work on the Hub"
        assert "../" not in text and "/README.md" not in text, repo_id
        meta, body = split_front_matter(card)
        first = body.lstrip("\n").splitlines()
        usage = next(i for i, line in enumerate(first) if line.startswith("```python"))
        assert usage < 40 and repo_id in "\n".join(first[usage:usage + 8]), f"{repo_id}: the usage block starts at line {usage + 1}"
        check_card_metadata(text, "model" if "/datasets/" not in str(card) else "dataset", repo_id)
        if "/models/" in str(card):
            names.add(meta["license_name"])
            assert meta["license_link"] == f"https://huggingface.co/{repo_id}/blob/main/LICENSE"
            licence = (card.parent / "LICENSE").read_text(encoding="utf-8")
            cited = set(re.findall(r"https?://[^\s,;)]+", licence))
            assert cited and cited <= {"https://www.apache.org/licenses/LICENSE-2.0", "https://catalog.ldc.upenn.edu/LDC97S62",
                                       "https://isip.piconepress.com/projects/switchboard/", "https://github.com/pipecat-ai/smart-turn",
                                       "https://github.com/openai/whisper"}, cited
    assert names == {"research-use-switchboard"}


def _card_table(card: Path, header: str) -> dict[str, list[str]]:
    lines = card.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header} |"))
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_data_set_cards_say_what_each_split_holds(release):
    import pyarrow.parquet as pq

    cards = _released_cards(release)
    folder = release / "hub" / "datasets"
    questions = pq.read_table(folder / "turn_taking_questions" / "data" / "synthetic-00000-of-00001.parquet").to_pylist()
    table = _card_table(cards[f"{ORG}/turn_taking_questions"], "task")
    for task, (cell,) in table.items():
        yes = sum(q["task"] == task and q["answer"] for q in questions)
        no = sum(q["task"] == task and not q["answer"] for q in questions)
        assert cell == (f"{yes} / {no}" if yes + no else "-"), (task, cell)
        if not yes + no:  # the card says so in words too
            assert f"`{task}`" in cards[f"{ORG}/turn_taking_questions"].read_text().split("**What a split lacks.**")[1], task
    splits = _card_table(cards[f"{ORG}/turn_taking_perturbations"], "split")
    assert list(splits) == ["synthetic"] and splits["synthetic"][1:3] == ["synthetic", "apache-2.0"]
    pairs = pq.read_table(folder / "turn_taking_perturbations" / "data" / "synthetic-00000-of-00001.parquet").num_rows
    assert splits["synthetic"][3] == str(pairs)


def test_card_links_point_at_the_released_repos(tmp_path):
    from turneval.release.cards import ReleaseLinks, absolute_links
    from turneval.release.plan import REPO_ROOT

    card = REPO_ROOT / "model_cards" / "future_activity_predictor_words" / "README.md"
    body = ("[card](../future_activity_predictor_lookahead/README.md), [old](../future_activity_predictor_switchboard/README.md), "
            "[docs/validation.md](../../docs/validation.md#real), [paper](https://arxiv.org/abs/1), [x](#here)")
    with_demo = ReleaseLinks.of(release_plan(ORG))
    assert absolute_links(body, card, with_demo) == (
        f"[card](https://huggingface.co/{ORG}/future_activity_predictor_lookahead), old, "
        f"[docs/validation.md](https://huggingface.co/spaces/{ORG}/turneval/blob/main/docs/validation.md#real), "
        "[paper](https://arxiv.org/abs/1), [x](#here)")
    without_demo = ReleaseLinks.of(release_plan(ORG, demo=False))
    assert "docs/validation.md, [paper]" in absolute_links(body, card, without_demo)
    with pytest.raises(ReleaseError, match="missing.md, which does not exist"):
        absolute_links("[m](missing.md)", card, with_demo)
