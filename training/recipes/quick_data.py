"""Tiny stand-ins for the inputs of a recipe's ``--quick`` form.

The full recipes read Switchboard's ms98 word alignments (LDC-derived, not in the repository)
and start from the pretrained tiny.en encoder. The ``--quick`` form runs every stage in CI in
a minute or two without either, so it writes:

* :func:`made_up_switchboard`: a few made-up calls in the ms98 layout
  (``<root>/<2 digits>/<4 digits>/swNNNN{A,B}-ms98-a-word.text``) with VAP-style split lists
  (``splits/{train,val,test}.txt``), their words and times taken from turneval's synthetic
  conversations (seeded; more interruptions than people make, so that the interruption head
  sees both outcomes in a few calls);
* :func:`tiny_whisper`: a randomly initialised Whisper with tiny dimensions, saved as an HF
  checkpoint, which every stage takes wherever it takes ``tiny.en``.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Sequence


if TYPE_CHECKING:
    from turneval.dataset_scripts.dialogue import Word


QUICK_SPLITS = {"train": 6, "val": 2, "test": 2}
"""Made-up calls per split of the --quick corpus."""
QUICK_CALL_S = 24.0
"""Length of a made-up call (s)."""
FIRST_CALL_NUMBER = 2001
TINY_WHISPER = {"d_model": 32, "encoder_layers": 3, "encoder_attention_heads": 2, "encoder_ffn_dim": 64,
                "decoder_layers": 1, "decoder_attention_heads": 2, "decoder_ffn_dim": 64}
"""A Whisper small enough to run every stage on a CPU in seconds (3 layers: the judge's
partial training splits at layer 2)."""


def _ms98_token(text: str) -> str | None:
    """A synthetic word as an ms98 token: lower case, no punctuation but apostrophes and hyphens."""
    token = re.sub(r"[^a-z'\-]", "", text.lower())
    return token or None


def write_ms98_call(words: Sequence[Sequence[Word]], number: int, root: Path, duration_s: float) -> Path:
    """Write both sides' words as ms98 word files (``[silence]`` between words); returns side A's file."""
    folder = root / f"{number:04d}"[:2] / f"{number:04d}"
    folder.mkdir(parents=True, exist_ok=True)
    for side, side_words in zip("AB", words):
        utterance, t, lines = f"sw{number:04d}{side}-ms98-a-0001", 0.0, []
        for word in side_words:
            token = _ms98_token(word.text)
            if token is None:
                continue
            if word.start > t:
                lines.append(f"{utterance} {t:.6f} {word.start:.6f} [silence]")
            lines.append(f"{utterance} {word.start:.6f} {word.end:.6f} {token}")
            t = word.end
        lines.append(f"{utterance} {t:.6f} {max(duration_s, t):.6f} [silence]")
        (folder / f"sw{number:04d}{side}-ms98-a-word.text").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / f"sw{number:04d}A-ms98-a-word.text"


def made_up_switchboard(root: str | Path, seed: int = 0, splits: dict[str, int] = QUICK_SPLITS,
                        duration_s: float = QUICK_CALL_S) -> tuple[Path, Path]:
    """Write a made-up Switchboard-format corpus under ``root``; returns (ms98 folder, splits folder).

    Deterministic for a seed; an existing corpus is written again (it takes about a second).
    """
    from turneval.dataset_scripts.synthetic import generate_dialogue
    from turneval.dataset_scripts.synthetic.timing import SpeakerBehaviour

    root = Path(root)
    ms98, split_dir = root / "swb_ms98_transcriptions", root / "splits"
    split_dir.mkdir(parents=True, exist_ok=True)
    # interruptions in about every other long IPU, half of them taking the floor
    behaviour = SpeakerBehaviour(interruption_prob=0.4, yield_prob=0.5)
    number = FIRST_CALL_NUMBER
    for split, n_calls in splits.items():
        ids = []
        for _ in range(n_calls):
            dialogue = generate_dialogue(seed * 1000 + number, duration_s=duration_s, behaviours=(behaviour, behaviour))
            write_ms98_call(dialogue.words, number, ms98, dialogue.duration)
            ids.append(str(number))
            number += 1
        (split_dir / f"{split}.txt").write_text("\n".join(ids) + "\n", encoding="utf-8")
    return ms98, split_dir


def made_up_two_party_calls(folder: str | Path, n_calls: int = 3, seed: int = 0, duration_s: float = QUICK_CALL_S) -> list[Path]:
    """Write ``n_calls`` synthetic stereo recordings (one speaker per channel, eSpeak NG voices)
    to ``folder``: the --quick stand-ins for the real dev calls the judge's last stages read."""
    from turneval.dataset_scripts.audio import write_audio
    from turneval.dataset_scripts.synthetic import generate_dialogue

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(n_calls):
        dialogue = generate_dialogue(seed * 1000 + k, duration_s=duration_s, style="human")
        paths.append(folder / f"call{k}.wav")
        write_audio(paths[-1], dialogue.audio)
    return paths


def tiny_whisper(folder: str | Path, seed: int = 0) -> Path:
    """Save a randomly initialised tiny Whisper (safetensors) to ``folder``; returns the folder."""
    import torch
    from transformers import WhisperConfig, WhisperModel

    folder = Path(folder)
    if (folder / "config.json").is_file() and any(folder.glob("*.safetensors")):
        return folder
    torch.manual_seed(seed)
    WhisperModel(WhisperConfig(**TINY_WHISPER)).save_pretrained(folder, safe_serialization=True)
    return folder


__all__ = ["QUICK_CALL_S", "QUICK_SPLITS", "TINY_WHISPER", "made_up_switchboard", "made_up_two_party_calls", "tiny_whisper", "write_ms98_call"]
