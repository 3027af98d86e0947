"""Synthetic dyadic conversations spoken by eSpeak NG, with ground-truth timing (docs/synthetic_corpus.md).

Two distinct eSpeak voices talk with human-like timing (gaps near 200 ms, some overlapping
starts, pauses longer than gaps, about 4 backchannels per minute, rare interruptions of
which about 60 % take the floor) and prosodic cues (',' continuation vs '.'/'?' turn ends).
The system styles act out a cascaded or an eager full-duplex spoken dialogue system.

    from turneval.dataset_scripts.synthetic import CorpusRecipe, generate_dialogue, generate_corpus
    dialogue = generate_dialogue(0, duration_s=60, style="human")
    generate_corpus("synth_corpus", n=10, seed=0, recipe=CorpusRecipe(duration_s=120))
"""
from .corpus import CorpusRecipe, conversation_seed, generate_corpus, load_dialogue, write_dialogue
from .espeak import EspeakError, Utterance, Voice, synthesize
from .generator import add_noise, draw_voices, generate_dialogue
from .material import BACKCHANNELS
from .timing import STYLES, SpeakerBehaviour, style_behaviours


__all__ = [
    "BACKCHANNELS",
    "CorpusRecipe",
    "EspeakError",
    "STYLES",
    "SpeakerBehaviour",
    "Utterance",
    "Voice",
    "add_noise",
    "conversation_seed",
    "draw_voices",
    "generate_corpus",
    "generate_dialogue",
    "load_dialogue",
    "style_behaviours",
    "synthesize",
    "write_dialogue",
]
