"""Inputs a new user might try, and what turneval answers (issue 12): one table, two uses.

``tests/test_bad_inputs.py`` runs every case through ``turneval.cli.main`` (exit code, message
naming the file and the problem, no traceback, nothing written) and checks that docs/inputs.md
holds exactly the table this module renders from those runs. After changing a message,
regenerate the page::

    HF_HUB_OFFLINE=1 python tests/bad_inputs.py docs/inputs.md

Every case runs in a fresh folder holding the files of :func:`make_inputs`, so the messages
carry short relative names.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf


REPO_ROOT = Path(__file__).resolve().parents[1]
SR = 16000


@dataclass(frozen=True)
class Case:
    """One command line and what must come back.

    ``expect`` are substrings of the answer (stderr, else the last stdout line); ``outputs``
    are paths that must not exist afterwards when the command fails (nothing half-written).
    """

    input: str
    argv: tuple[str, ...]
    code: int
    expect: tuple[str, ...]
    outputs: tuple[str, ...] = ()
    setup: str | None = None
    answer_from: str = "stderr"


def _speechy(seconds: float, seed: int) -> np.ndarray:
    """The first ``seconds`` of the bundled human-like example (real speech timing)."""
    audio, sr = sf.read(REPO_ROOT / "examples" / "human_like.wav", dtype="float32")
    assert sr == SR
    return audio[: int(seconds * SR)]


def _annotation(segments, **extra) -> str:
    return json.dumps({"id": "call", "segments": segments, **extra})


def make_inputs(root: Path) -> None:
    """The files the cases name, written into ``root``."""
    call = _speechy(20.0, 0)
    sf.write(root / "call.wav", call, SR)
    sf.write(root / "call.mp3", call, SR)
    truth = json.loads((REPO_ROOT / "examples" / "human_like.json").read_text())
    cropped = [[[s, min(e, 20.0)] for s, e in spk if s < 20.0] for spk in truth["segments"]]
    (root / "call.json").write_text(_annotation(cropped, audio_path="call.wav"))
    (root / "system2.json").write_text(_annotation(cropped, audio_path="call.wav", system_speaker=2))
    (root / "late.json").write_text(_annotation([cropped[0] + [[100.0, 130.0]], cropped[1]], audio_path="call.wav"))
    (root / "overlap.json").write_text(_annotation([cropped[0] + [[1.0, 3.0], [2.0, 4.0]], cropped[1]], audio_path="call.wav"))
    (root / "abc.json").write_text(_annotation("abc", audio_path="call.wav"))
    (root / "badword.json").write_text(_annotation(cropped, audio_path="call.wav", words=[[["x", 1.0, "hello"]], []]))
    (root / "noaudio.json").write_text(_annotation(cropped, audio_path="gone.wav"))
    (root / "call.csv").write_text("speaker,start,end\n" + "".join(f"{'AB'[k]},{s:.3f},{e:.3f}\n" for k, spk in enumerate(cropped) for s, e in spk))
    short = call[int(2.0 * SR) : int(2.5 * SR)]
    sf.write(root / "short.wav", short, SR)
    (root / "short.json").write_text(_annotation([[[0.0, 0.5]], [[0.1, 0.3]]], audio_path="short.wav"))
    sf.write(root / "user.wav", call[:, 0], SR)
    sf.write(root / "system_5s.wav", call[: 5 * SR, 1], SR)
    sf.write(root / "mono.wav", call[:, 0], SR)
    sf.write(root / "three.wav", np.stack([call[:, 0], call[:, 1], call[:, 0]], 1), SR)
    sf.write(root / "six.wav", np.repeat(call, 3, axis=1), SR)
    (root / "notes.wav").write_text("these are my notes, not audio\n")
    (root / "words.csv").write_text("speaker,start,end\nA,x,1.0\n")
    sw = root / "sw"
    sw.mkdir()
    (sw / "sw0001A-ms98-a-word.text").write_text("sw0001A-ms98-a-0001 0.000000 0.500000 [silence]\nsw0001A-ms98-a-0002 x 0.850000 so\n")
    (sw / "sw0001B-ms98-a-word.text").write_text("sw0001B-ms98-a-0001 0.000000 0.900000 yeah\n")
    (root / "a_file").write_text("not a folder\n")
    reports = root / "reports"
    (reports / "a").mkdir(parents=True)
    (reports / "b").mkdir(parents=True)
    for name in ("a", "b"):
        (reports / name / "report.json").write_text(json.dumps({"summary": [{"key": "k", "label": "K", "unit": "", "value": 1.0}]}))
    (root / "manifest.csv").write_text("path\ncall.json\nmissing.json\n")
    (root / "batch").mkdir()
    (root / "batch" / "call.json").write_text(_annotation(cropped, audio_path="../call.wav"))
    (root / "batch" / "broken.json").write_text(_annotation("abc", audio_path="../call.wav"))


UNWRITABLE = "/proc/turneval-robust-test"
"""A place nobody can write into, not even root (the kernel's /proc)."""

CASES: tuple[Case, ...] = (
    # -- annotations (item 3) --
    Case("annotation JSON with `system_speaker: 2`", ("report", "system2.json", "--no-judge", "--no-predictor", "--out", "out"), 1, ("system2.json", "system_speaker must be 0 or 1"), ("out",)),
    Case("a segment at 100-130 s in 20 s of audio", ("report", "late.json", "--no-judge", "--no-predictor", "--out", "out"), 1, ("late.json", "ends at 130.00 s", "only 20.00 s long"), ("out",)),
    Case("overlapping segments of one speaker", ("report", "overlap.json", "--no-judge", "--no-predictor", "--out", "out"), 0, ("overlap.json", "merged")),
    Case('`"segments": "abc"`', ("report", "abc.json", "--no-judge", "--no-predictor", "--out", "out"), 1, ("abc.json", "'segments' must be two lists"), ("out",)),
    Case("`--user` 20 s and `--system` 5 s", ("report", "--user", "user.wav", "--system", "system_5s.wav", "--no-judge", "--no-predictor", "--out", "out"), 0, ("system_5s.wav", "padded")),
    Case("`--max-seconds 0`", ("report", "call.wav", "--max-seconds", "0", "--out", "out"), 2, ("--max-seconds", "above 0"), ("out",)),
    Case("`--max-seconds -5`", ("report", "call.wav", "--max-seconds=-5", "--out", "out"), 2, ("--max-seconds", "above 0"), ("out",)),
    Case("`--max-seconds nan`", ("report", "call.wav", "--max-seconds", "nan", "--out", "out"), 2, ("--max-seconds", "above 0"), ("out",)),
    Case("`--max-seconds 5` on 20 s", ("report", "call.wav", "--max-seconds", "5", "--out", "out"), 1, ("call.wav", "more than the limit of 5 s"), ("out",)),
    # -- tracebacks (item 4) --
    Case("`score` on a 0.5 s dialogue", ("score", "short.json", "--out", "scores.json"), 0, ("short", "naturalness undefined"), answer_from="stdout"),
    Case("`stats` on a word with time `x`", ("stats", "sw/sw0001A-ms98-a-word.text"), 1, ("sw0001A-ms98-a-word.text:2", "'x'")),
    Case("`stats` on an annotation JSON with a word time `x`", ("stats", "badword.json"), 1, ("badword.json", "'x'")),
    Case("`report` on an annotation JSON with a word time `x`", ("report", "badword.json", "--no-judge", "--no-predictor", "--out", "out"), 1, ("badword.json", "'x'"), ("out",)),
    Case("`stats` on a VAD CSV with time `x`", ("stats", "words.csv"), 1, ("words.csv:2", "'x'")),
    Case("`vad --out` into an unwritable folder", ("vad", "call.wav", "--out", f"{UNWRITABLE}/call.csv"), 1, ("--out", "cannot write into /proc")),
    Case("`score --out` into an unwritable folder", ("score", "call.json", "--out", f"{UNWRITABLE}/s.json"), 1, ("--out", "cannot write into /proc")),
    Case("`stats --json` into an unwritable folder", ("stats", "call.json", "--json", f"{UNWRITABLE}/s.json"), 1, ("--json", "cannot write into /proc")),
    Case("`compare --out` into an unwritable folder", ("compare", "reports/a", "reports/b", "--out", f"{UNWRITABLE}/c.json"), 1, ("--out", "cannot write into /proc")),
    Case("`compare --out` under a file", ("compare", "reports/a", "reports/b", "--out", "a_file/c.json"), 1, ("a_file", "which is a file")),
    Case("`report --out` under a file", ("report", "call.wav", "--out", "a_file/rep"), 1, ("a_file", "which is a file")),
    # -- unclear errors (item 5) --
    Case("0.5 s conversation with both models", ("report", "short.wav", "--annotations", "short.json", "--out", "out"), 0, ("Naturalness undefined",), answer_from="stdout"),
    Case("annotation JSON naming a missing audio file", ("report", "noaudio.json", "--no-judge", "--no-predictor", "--out", "out"), 1, ("noaudio.json", "gone.wav", "does not exist"), ("out",)),
    Case("3-channel file", ("report", "three.wav", "--out", "out"), 1, ("three.wav", "found 3", "ffmpeg", "--user"), ("out",)),
    Case("6-channel file", ("vad", "six.wav", "--out", "six.csv"), 1, ("six.wav", "found 6", "ffmpeg"), ("six.csv",)),
    Case("mono file", ("report", "mono.wav", "--out", "out"), 1, ("mono.wav", "found 1", "--user"), ("out",)),
    Case("a text file named .wav", ("report", "notes.wav", "--out", "out"), 1, ("notes.wav", "not a readable audio file", "mp3"), ("out",)),
    Case("stereo MP3", ("vad", "call.mp3"), 0, ("channel 1",), answer_from="stdout"),
    # -- vad CSV as annotations (item 6) --
    Case("`turneval vad` CSV as `--annotations`", ("report", "call.wav", "--annotations", "call.csv", "--no-judge", "--no-predictor", "--out", "out"), 0, ("wrote out/report.json",), answer_from="stdout"),
    # -- score batches (item 7) --
    Case("`score` batch with one broken file", ("score", "batch", "--out", "s.json"), 1, ("broken.json", "'segments' must be two lists"), ("s.json",)),
    Case("`score --skip-errors` batch with one broken file", ("score", "batch", "--skip-errors", "--out", "s.json"), 0, ("not scored: batch/broken.json",), answer_from="stdout"),
    Case("manifest row naming a missing file", ("score", "manifest.csv"), 1, ("manifest.csv:3", "missing.json: file not found")),
)


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    traceback: str | None = None
    leftovers: list[str] = field(default_factory=list)

    def answer(self, case: Case) -> str:
        text = self.stderr if case.answer_from == "stderr" else self.stdout
        lines = [line for line in text.splitlines() if line.strip() and "%|" not in line]
        if case.answer_from == "stderr":  # argparse prints its usage first; the answer is the error line
            lines = [line for line in lines if "error:" in line or "warning:" in line] or lines
        if case.answer_from == "stdout":
            wanted = [line for line in lines if any(e in line for e in case.expect)]
            lines = wanted or lines
        return lines[-1].strip() if case.answer_from == "stdout" and lines else " ".join(lines)


def run_case(case: Case, root: Path) -> Outcome:
    """Run one case in ``root`` (holding :func:`make_inputs`' files) with ``turneval.cli.main``."""
    from turneval.cli import main

    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(case.argv))
            except SystemExit as exit_:  # argparse errors
                code = int(exit_.code or 0)
            except BaseException:  # noqa: BLE001 - a traceback is the failure we look for
                return Outcome(-1, out.getvalue(), err.getvalue(), traceback.format_exc())
        leftovers = [p for p in case.outputs if code != 0 and Path(p).exists()]
        return Outcome(code, out.getvalue(), err.getvalue(), None, leftovers)
    finally:
        os.chdir(cwd)


def render_table(rows: list[tuple[Case, Outcome]]) -> str:
    """docs/inputs.md from the outcomes."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = [
        "# Inputs tried, and what turneval answers",
        "",
        "Every row is run by `tests/test_bad_inputs.py` (exit code, message naming the file and the",
        "problem, no traceback, nothing written on failure), which also checks that this page matches",
        "the answers; regenerate it with `HF_HUB_OFFLINE=1 python tests/bad_inputs.py docs/inputs.md`.",
        "The files are made by `tests/bad_inputs.py:make_inputs` (20 s of `examples/human_like.wav`",
        "and variations); exit code 1 is an error, 2 a usage error, 0 success (warnings included).",
        "",
        "| input | command | exit | answer |",
        "|---|---|---|---|",
    ]
    notes = []  # answers too long for a cell (docs/ keeps cells under 250 characters)
    for case, outcome in rows:
        command = "turneval " + " ".join(case.argv)
        answer = outcome.answer(case).replace("\n", " ")
        if len(cell(answer)) > 200:
            notes.append(answer)
            answer = f"note {len(notes)}"
        lines.append(f"| {cell(case.input)} | `{cell(command)}` | {outcome.code} | {cell(answer)} |")
    if notes:
        lines += ["", "Answers too long for the table:", ""]
        lines += [f"{n}. {text}" for n, text in enumerate(notes, start=1)]
    return "\n".join(lines) + "\n"


def run_all(work: Path) -> list[tuple[Case, Outcome]]:
    """Every case, each in its own copy of the inputs."""
    import shutil

    template = work / "inputs"
    template.mkdir(parents=True)
    make_inputs(template)
    rows = []
    for k, case in enumerate(CASES):
        root = work / f"case{k:02d}"
        shutil.copytree(template, root)
        rows.append((case, run_case(case, root)))
    return rows


if __name__ == "__main__":
    import tempfile

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory() as tmp:
        table = render_table(run_all(Path(tmp)))
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(table, encoding="utf-8")
    else:
        print(table)
