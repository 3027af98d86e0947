"""Speed of re-voicing Switchboard, per engine: seconds of conversation per CPU second.

    python benchmarks/speed/revoice_speed.py [--swb-root PATH] [--calls 3] [--excerpt-s 60]

Re-voices ``calls`` calls with each installed engine alone (eSpeak NG always; Festival,
Flite and SVOX Pico when ``make synth-deps`` installed them) and reports "x real time": seconds of
two-channel conversation made per CPU second (this process and its children, i.e. the
Festival/Flite processes; synthesis, WSOLA fitting, augmentation and FLAC writing). Without
``--swb-root`` the calls are made-up ms98 files (random IPU lengths and gaps from a fixed
sentence list), so it runs anywhere; ``run(quick)`` does that for ``benchmarks/run_all.py``.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from turneval.dataset_scripts.synthetic.engines import available_engines
from turneval.dataset_scripts.synthetic.revoice import CallSelection, RevoiceOptions, revoice_split


SENTENCES = (
    "yeah", "uh-huh", "right", "i think that's a good idea", "well we went there last summer and it was great",
    "oh really", "so what do you do for a living", "i don't know i guess it depends on the weather",
    "um we have two kids", "that's true", "and then they moved to Texas", "[laughter]",
)


def write_made_up_calls(root: Path, n: int, minutes: float, seed: int = 0) -> None:
    """``n`` calls in the ms98 word format: alternating turns of IPUs, some backchannels, random gaps."""
    rng = np.random.default_rng(seed)
    for c in range(n):
        number = 9000 + c
        folder = root / "90" / f"{number}"
        folder.mkdir(parents=True, exist_ok=True)
        sides: dict[str, list[str]] = {"A": [], "B": []}
        last_end = {"A": 0.0, "B": 0.0}
        t, speaker = 0.5, "A"
        while t < minutes * 60:
            words = str(rng.choice(SENTENCES)).split()
            per_word = rng.uniform(0.18, 0.32)
            utt = f"sw{number}{speaker}-ms98-a-0001"
            if t > last_end[speaker]:
                sides[speaker].append(f"{utt} {last_end[speaker]:.6f} {t:.6f} [silence]")
            for w in words:
                sides[speaker].append(f"{utt} {t:.6f} {t + per_word:.6f} {w}")
                t += per_word
            last_end[speaker] = t
            t += rng.uniform(0.1, 0.8)
            if rng.random() < 0.5:
                speaker = "B" if speaker == "A" else "A"
                t = max(t, last_end[speaker] + 0.05)
        for side, lines in sides.items():
            (folder / f"sw{number}{side}-ms98-a-word.text").write_text("\n".join(lines) + "\n")


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def measure(engine: str, swb_root: Path, calls: int, excerpt_s: float, prosody: str = "units") -> dict[str, float]:
    """Seconds of conversation and CPU seconds to re-voice ``calls`` calls with one engine."""
    import json

    with tempfile.TemporaryDirectory(prefix="revoice_bench_") as tmp:
        start = _cpu()
        revoice_split(swb_root, "train", [engine], tmp, options=RevoiceOptions(excerpt_s=excerpt_s, prosody=prosody), calls=CallSelection(max_calls=calls), progress=False)
        cpu = _cpu() - start
        rows = [json.loads(line) for line in (Path(tmp) / "train" / "manifest.jsonl").read_text().splitlines()]
    audio = sum(r["duration"] for r in rows)
    return {"audio_s": audio, "cpu_s": cpu, "calls": len(rows)}


def run(quick: bool) -> list[dict]:
    """x real time per installed engine, on made-up calls (benchmarks/run_all.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness
    from _harness import figure

    calls, minutes = (1, 0.5) if quick else (3, 1.5)
    figures = []
    with tempfile.TemporaryDirectory(prefix="revoice_calls_") as tmp:
        write_made_up_calls(Path(tmp), calls, minutes)
        for engine in available_engines():
            m = measure(engine, Path(tmp), calls, excerpt_s=0)
            name = f"re-voicing with {engine}: seconds of conversation per CPU second"
            figures.append(figure(name, m["audio_s"] / m["cpu_s"], "x",
                                  note=f"{m['calls']} made-up call(s), {m['audio_s']:.0f} s, both channels, fitted, augmented, FLAC written"))
            # --prosody turns: endings planned from the words (made-up calls have no dialogue acts)
            t = measure(engine, Path(tmp), calls, excerpt_s=0, prosody="turns")
            figures.append(figure(f"re-voicing with {engine}, prosody turns: seconds of conversation per CPU second", t["audio_s"] / t["cpu_s"],
                                  "x", reference=name, note="the same calls; endings from the words"))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--swb-root", default=None, help="Switchboard ms98 word alignments (default: made-up calls)")
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--excerpt-s", type=float, default=60.0)
    parser.add_argument("--prosody", choices=("units", "turns"), default="units")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="revoice_calls_") as tmp:
        root = Path(args.swb_root) if args.swb_root else Path(tmp)
        if not args.swb_root:
            write_made_up_calls(root, args.calls, max(1.0, args.excerpt_s / 60 + 0.5))
        for engine in available_engines():
            m = measure(engine, root, args.calls, args.excerpt_s, args.prosody)
            print(f"{engine:9s} {m['calls']} calls, {m['audio_s']:7.1f} s of conversation, {m['cpu_s']:6.1f} CPU s: "
                  f"{m['audio_s'] / m['cpu_s']:6.1f} x real time")


if __name__ == "__main__":
    main()
