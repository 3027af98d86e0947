"""Real meeting speech for the benchmarks: the AMI excerpts of ``../shared/real/ami``.

The folder (``--ami-root``, ``$TURNEVAL_AMI_ROOT``, default ``<repository>/../shared/real/ami``)
holds sub-folders of 16 kHz recordings with ground-truth speaker segments in RTTM files:

* ``openings/``: 30 s mono mixtures ``<id>.flac`` of AMI meeting openings, their segments in
  ``debug.{train,development,test}.rttm`` (file id = audio stem; the ``.lst``/``.uem`` files
  are not needed);
* ``ES2004a_excerpt/``: 60 s of one meeting, ``mixture.flac`` with ``mixture.rttm``, and one
  channel per speaker (``source<k>.flac``; ``SPEAKER_MAP_inferred.txt`` names whose channel
  is whose).

Meetings have up to four speakers; turneval's dialogues have two. A meeting is read as one
two-party *view* per speaker: that speaker (channel 0) against everyone else together
(channel 1). Speaker names are folded to ASCII (``MÉO069`` and ``MEO069`` are one person);
a file id that matches no audio file by name is matched after the same folding.
"""
from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


SAMPLE_RATE = 16000
ENV_VAR = "TURNEVAL_AMI_ROOT"
AUDIO_SUFFIXES = (".flac", ".wav")


class AmiDataMissing(FileNotFoundError):
    """No AMI recordings where they were looked for; the message says where and how to point at them."""


def default_root() -> Path:
    """``$TURNEVAL_AMI_ROOT``, else ``<repository>/../shared/real/ami``."""
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "real" / "ami"


def fold(name: str) -> str:
    """ASCII folding of a name (``MÉO069`` -> ``MEO069``, ``trñ00`` -> ``trn00``)."""
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")


def merge(segments: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Sorted, overlapping or touching segments merged (a speaker's RTTM lines may overlap)."""
    out: list[list[float]] = []
    for start, end in sorted(segments):
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


@dataclass
class Recording:
    """One meeting recording: the mono mixture, every speaker's segments and own channel."""

    id: str
    mixture: np.ndarray  # float32 [n] at 16 kHz
    speakers: dict[str, list[tuple[float, float]]]  # folded name -> merged segments (s)
    sources: dict[str, np.ndarray] = field(default_factory=dict)  # folded name -> own channel
    folder: str = ""

    @property
    def duration(self) -> float:
        return self.mixture.shape[0] / SAMPLE_RATE

    def rest(self, speaker: str) -> list[tuple[float, float]]:
        """Everyone but ``speaker``, as one speaker's segments."""
        return merge([seg for name, segs in self.speakers.items() if name != speaker for seg in segs])

    def view(self, speaker: str, system_speaker: int = 1, stereo: bool = False):
        """A two-party Dialogue: ``speaker`` on channel 0, everyone else on channel 1.

        ``stereo``: audio ``[speaker's own channel, sum of the others' channels]`` (needs the
        per-speaker sources); else no audio (the judge reads :attr:`mixture` itself).
        """
        from turneval.dataset_scripts.dialogue import Dialogue

        audio = None
        if stereo:
            if speaker not in self.sources or len(self.sources) < 2:
                raise ValueError(f"{self.id}: no per-speaker channels for a stereo view of {speaker}")
            own = self.sources[speaker]
            others = np.sum([a for name, a in self.sources.items() if name != speaker], axis=0)
            audio = np.stack([own, others]).astype(np.float32)
        return Dialogue(
            id=f"{self.id}:{speaker}",
            segments=[self.speakers[speaker], self.rest(speaker)],
            audio=audio,
            system_speaker=system_speaker,
            duration=self.duration,
            metadata={"recording": self.id, "focus_speaker": speaker},
        )


def _read_audio(path: Path) -> np.ndarray:
    import soundfile as sf

    data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    if rate != SAMPLE_RATE:
        raise ValueError(f"{path}: {rate} Hz; the AMI benchmark expects {SAMPLE_RATE} Hz audio")
    return data.mean(axis=1)


def _rttm_segments(path: Path) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """file id -> folded speaker name -> segments, from the SPEAKER lines of an RTTM file."""
    out: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0] != "SPEAKER":
            continue
        if len(fields) < 8:
            raise ValueError(f"{path}:{number}: a SPEAKER line needs at least 8 fields, got {len(fields)}")
        start, duration = float(fields[3]), float(fields[4])
        out.setdefault(fields[1], {}).setdefault(fold(fields[7]), []).append((start, start + duration))
    return out


def _audio_file(folder: Path, file_id: str) -> Path | None:
    files = {p.stem: p for p in folder.iterdir() if p.suffix.lower() in AUDIO_SUFFIXES}
    if file_id in files:
        return files[file_id]
    folded = {fold(stem): p for stem, p in files.items()}
    return folded.get(fold(file_id))


def _source_map(folder: Path) -> dict[str, str]:
    """Audio stem -> folded speaker name, from ``SPEAKER_MAP*.txt`` (``source0.wav MEO015 ...``)."""
    out = {}
    for path in sorted(folder.glob("SPEAKER_MAP*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            fields = line.split()
            if len(fields) >= 2 and not fields[0].startswith("#"):
                out[Path(fields[0]).stem] = fold(fields[1])
    return out


def load_recordings(root: str | os.PathLike | None = None, limit: int | None = None) -> list[Recording]:
    """Every recording under ``root`` that has audio and segments, in name order.

    Raises AmiDataMissing (saying where it looked and how to point elsewhere) when there is none.
    """
    root = Path(root) if root is not None else default_root()
    hint = f"pass --ami-root PATH or set ${ENV_VAR} to the folder of ../shared/real/ami"
    if not root.is_dir():
        raise AmiDataMissing(f"no AMI data: {root} is not a folder; {hint}")
    recordings = []
    for folder in sorted(p for p in [root, *root.iterdir()] if p.is_dir()):
        sources = {}
        for stem, speaker in _source_map(folder).items():
            path = _audio_file(folder, stem)
            if path is not None:
                sources[speaker] = _read_audio(path)
        for rttm in sorted(folder.glob("*.rttm")):
            for file_id, speakers in _rttm_segments(rttm).items():
                path = _audio_file(folder, file_id)
                if path is None:
                    continue  # segments without audio: nothing to hear
                rec_id = folder.name if file_id == "mixture" else fold(file_id)
                mixture = _read_audio(path)
                duration = mixture.shape[0] / SAMPLE_RATE
                merged = {name: merge([(max(0.0, s), min(duration, e)) for s, e in segs]) for name, segs in speakers.items()}
                own = {name: a[: mixture.shape[0]] for name, a in sources.items() if name in merged} if file_id == "mixture" else {}
                recordings.append(Recording(rec_id, mixture, merged, own, folder.name))
    if not recordings:
        raise AmiDataMissing(f"no AMI data: no RTTM file with matching audio under {root}; {hint}")
    recordings.sort(key=lambda r: (r.folder != "ES2004a_excerpt", r.id))  # the two-channel excerpt first
    return recordings[:limit] if limit else recordings


def focus_instances(view, probs: np.ndarray, labels=None) -> list:
    """Agreement instances of one speaker-against-the-rest view, each metric where it is clean.

    In a meeting "the rest" is several people, so only some decisions of a view are decisions
    of one listener: with the focus speaker as the *user* (the rest as the system), (a) "the
    rest takes the turn or the focus speaker resumes", (b) "the rest backchannels" and (c) "the
    rest interrupts"; with the focus speaker as the *system*, (d) (the focus speaker pauses:
    the rest takes the turn or the focus speaker resumes) and (e) (the rest breaks in: does it
    take the floor). The other combinations would count one member of the rest resuming after
    another's pause as "the system resumes". For two speakers the union over both views is
    exactly the usual "each speaker as the system in turn".
    """
    from turneval.dataset_scripts.agreement_instances import build_agreement_instances
    from turneval.dataset_scripts.labels import chunk_labels

    labels = chunk_labels(view) if labels is None else labels
    n = min(len(labels), probs.shape[0])
    out = []
    for system, metrics in ((1, ("a", "b", "c")), (0, ("d", "e"))):
        out += build_agreement_instances(list(labels.labels[:n]), list(labels.floor[:n]), probs[:n], system,
                                         view.id, chunk_starts=labels.chunk_starts[:n], metrics=metrics)
    return out
