"""smart-turn v3.2 into the judge: its ONNX weights as a PyTorch turn-completion cue.

smart-turn v3.2 (pipecat-ai, BSD-2-Clause) is a Whisper-tiny encoder over 8 s, attention
pooling and a small MLP, trained by its authors on real human turn ends. pipecat-ai ships it
as a statically quantized ONNX file (int8 MatMul and Conv weights with one scale per output
row; activations quantized too). This script reads the file with ``onnx`` and numpy alone,
maps every weight to :class:`~turneval.modeling.modeling_turn_taking_judge.TurnCompletionCue`
(the int8 weights and their scales kept as shipped, so the cue adds ~8.5 MB to a checkpoint),
checks the result against onnxruntime on real-looking input, and installs it into a judge
checkpoint. Nothing of ONNX is needed at run time.

    pip install --no-deps pipecat-ai==1.14.0 onnx    # the model file, and its reader
    python -m turneval.training.convert_smart_turn --install_into checkpoints/turn_taking_judge_swb_revoiced

The port runs activations in float (the ONNX file quantizes them to 8 bits between
operations, and rounds attention probabilities to steps of 1/256), so its probabilities differ
from onnxruntime's: on the 98 pause decisions of the three SpokenWOZ dev calls the mean
|difference| is 0.076 (largest 0.63, correlation 0.956), and the port ranks shifts above holds
a little better (ROC-AUC 0.848 against onnxruntime's 0.826). The check prints the mean and
largest difference on synthetic clips and refuses a port whose mean exceeds ``--tolerance``
(a wrong mapping of any weight gives differences near 0.5).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np


if TYPE_CHECKING:
    from turneval.modeling.configuration_turn_taking_judge import TurnCompletionCueConfig


PROVENANCE = (
    "smart-turn v3.2 (pipecat-ai 1.14.0, pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx, "
    "BSD-2-Clause, Daily.co), converted by training/convert_smart_turn.py; weights int8 as shipped, activations float"
)
ATTENTION_BIASES = {"q_proj", "v_proj", "out_proj", "fc1", "fc2"}


class ConversionError(RuntimeError):
    """The ONNX file does not have the layout this converter knows."""


def _quantized_weights(graph: Any) -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    """``{dequantized output name: (int8 array, scale per channel, axis)}`` for every weight
    that a DequantizeLinear node reads from an initializer."""
    from onnx import numpy_helper

    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    out = {}
    for node in graph.node:
        if node.op_type != "DequantizeLinear" or node.input[0] not in inits:
            continue
        q = inits[node.input[0]]
        if q.dtype != np.int8:
            continue  # activations and int32 biases are handled elsewhere
        scale, zero = inits[node.input[1]], inits[node.input[2]]
        if np.any(zero != 0):
            raise ConversionError(f"{node.input[0]}: non-zero zero points; only symmetric weights are supported")
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
        out[node.output[0]] = (q, np.asarray(scale, dtype=np.float32), axis)
    return out


def _float_initializers(graph: Any) -> dict[str, np.ndarray]:
    """Float initializers by name, plus int32 biases dequantized (their DequantizeLinear output
    carries the bias's own name, e.g. ``inner.encoder.conv1.bias``)."""
    from onnx import numpy_helper

    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    out = {name: a.astype(np.float32) for name, a in inits.items() if a.dtype == np.float32}
    for node in graph.node:
        if node.op_type == "DequantizeLinear" and node.input[0] in inits and inits[node.input[0]].dtype == np.int32:
            q, scale, zero = (inits[name] for name in node.input[:3])
            out[node.output[0]] = ((q.astype(np.int64) - zero.astype(np.int64)) * scale).astype(np.float32)
    return out


def _skip_quantization(graph: Any) -> dict[str, str]:
    """``{name: name after Quantize -> Dequantize}``: where an activation re-appears."""
    producer = {node.input[0]: node for node in graph.node if node.op_type == "QuantizeLinear"}
    dequant = {node.input[0]: node.output[0] for node in graph.node if node.op_type == "DequantizeLinear"}
    return {name: dequant[q.output[0]] for name, q in producer.items() if q.output[0] in dequant}


def onnx_to_cue_state(path: str | Path) -> dict[str, np.ndarray]:
    """The state dict of a :class:`TurnCompletionCue` from smart-turn's ONNX file."""
    import onnx

    graph = onnx.load(str(path)).graph
    weights = _quantized_weights(graph)
    floats = _float_initializers(graph)
    after_q = _skip_quantization(graph)
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    state: dict[str, np.ndarray] = {}

    def put_linear(prefix: str, weight_output: str, matmul: bool, bias: str | None) -> None:
        q, scale, _ = weights[weight_output]
        # MatMul weights are [in, out] with a scale per output column; Gemm (transB) and Conv are [out, ...]
        state[f"{prefix}.weight_int8"] = np.ascontiguousarray(q.T if matmul else q)
        state[f"{prefix}.weight_scale"] = scale.reshape(-1)
        if bias is not None:
            state[f"{prefix}.bias"] = floats[bias].reshape(-1)

    def bias_of(output: str) -> str | None:
        """The named bias added to a MatMul's (re-dequantized) output, if any."""
        for node in consumers.get(after_q.get(output, output), []):
            if node.op_type == "Add":
                named = [n for n in node.input if n in floats and n.startswith("inner.")]
                if named:
                    return named[0]
        return None

    pending_k: dict[str, str] = {}  # layer-norm output -> weight of the MatMul with no bias (k_proj)
    q_inputs: dict[str, int] = {}
    for node in graph.node:
        if node.op_type == "Conv":
            name = node.input[1].removesuffix("_DequantizeLinear_Output").removesuffix(".weight")
            put_linear(name.removeprefix("inner.encoder."), node.input[1], matmul=False, bias=node.input[2])
        elif node.op_type == "Gemm":
            name = node.input[1].removesuffix("_DequantizeLinear_Output").removesuffix(".weight")
            put_linear(name.removeprefix("inner."), node.input[1], matmul=False, bias=node.input[2])
        elif node.op_type == "MatMul" and node.input[1] in weights:
            bias = bias_of(node.output[0])
            if bias is None:
                pending_k[node.input[0]] = node.input[1]
                continue
            parts = bias.split(".")
            if bias.startswith("inner.encoder.layers."):
                module = parts[-2]
                if module not in ATTENTION_BIASES:
                    raise ConversionError(f"unexpected bias {bias}")
                put_linear(".".join(parts[2:-1]), node.input[1], matmul=True, bias=bias)
                if module == "q_proj":
                    q_inputs[node.input[0]] = int(parts[3])
            elif bias.startswith("inner.pool_attention."):
                put_linear(f"pool_attention.{0 if parts[2] == '0' else 1}", node.input[1], matmul=True, bias=bias)
            else:
                raise ConversionError(f"unexpected bias {bias}")
    for layer_input, weight in pending_k.items():
        if layer_input not in q_inputs:
            raise ConversionError(f"a projection without bias reads {layer_input}, which no q_proj reads")
        put_linear(f"layers.{q_inputs[layer_input]}.self_attn.k_proj", weight, matmul=True, bias=None)

    return _cue_names(state, floats)


def _cue_names(state: dict[str, np.ndarray], floats: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``state`` (the ONNX file's linears) under the cue's names, with the ONNX file's norms and
    positions added."""
    # the judge's cue names its attention projections without the "self_attn." level
    state = {k.replace(".self_attn.", ".").replace("self_attn.", ""): v for k, v in state.items()}
    for key, value in floats.items():
        if key.startswith("inner.encoder.layers.") and key.endswith(("layer_norm.weight", "layer_norm.bias")):
            state[key.removeprefix("inner.encoder.")] = value
    state["layer_norm.weight"] = floats["inner.encoder.layer_norm.weight"]
    state["layer_norm.bias"] = floats["inner.encoder.layer_norm.bias"]
    state["embed_positions"] = floats["inner.encoder.embed_positions.weight"]
    state["classifier_norm.weight"] = floats["inner.classifier.1.weight"]
    state["classifier_norm.bias"] = floats["inner.classifier.1.bias"]
    # the MLP's linears are inner.classifier.0 / .4 / .6 in the ONNX file: 0, 1, 2 here
    renamed = {}
    for key, value in state.items():
        for old, new in (("classifier.0.", "classifier.0."), ("classifier.4.", "classifier.1."), ("classifier.6.", "classifier.2.")):
            if key.startswith(old):
                key = new + key[len(old):]
                break
        renamed[key] = value
    return renamed


def load_cue(state: dict[str, np.ndarray]):
    """A :class:`TurnCompletionCue` with ``state`` loaded strictly (every weight placed)."""
    import torch

    from turneval.modeling.configuration_turn_taking_judge import TurnCompletionCueConfig
    from turneval.modeling.modeling_turn_taking_judge import TurnCompletionCue

    cue = TurnCompletionCue(TurnCompletionCueConfig())
    cue.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()}, strict=True)
    return cue.eval()


def check_against_onnx(cue: Any, onnx_path: Path, n_clips: int = 16, seed: int = 0) -> tuple[float, float]:
    """The mean and largest |P(complete)| difference between the port and onnxruntime on ``n_clips``
    clips: speech-like noise bursts of varied lengths, levels and endings (the check needs no
    data set), each through smart-turn's own feature extraction."""
    import torch

    from turneval.smart_turn import SmartTurnV3, log_mel_features, pipecat_segment

    rng = np.random.default_rng(seed)
    reference = SmartTurnV3(onnx_path)
    diffs = []
    for _ in range(n_clips):
        n = int(rng.uniform(1.0, 10.0) * 16000)
        t = np.arange(n) / 16000
        voiced = np.sin(2 * np.pi * rng.uniform(90, 250) * t * (1 + 0.1 * np.sin(2 * np.pi * 3 * t)))
        envelope = (np.sin(2 * np.pi * rng.uniform(2, 5) * t) > rng.uniform(-0.3, 0.5)).astype(float)
        clip = (0.1 * voiced * envelope + 0.01 * rng.standard_normal(n)) * rng.uniform(0.2, 1.0)
        clip[-int(0.2 * 16000):] *= 0.01  # the 200 ms of silence pipecat waits for
        features = torch.from_numpy(log_mel_features(pipecat_segment(clip))[None])
        with torch.no_grad():
            ours = float(torch.sigmoid(cue(features))[0])
        diffs.append(abs(ours - reference.probability(clip)))
    return float(np.mean(diffs)), float(np.max(diffs))


def install(judge_folder: Path, state: dict[str, np.ndarray]) -> None:
    """Add the cue to a judge checkpoint (config and weights), keeping everything else."""
    import torch

    from turneval.modeling.judge_loading import compact_checkpoint, load_judge
    from turneval.modeling.modeling_turn_taking_judge import TurnCompletionCue

    judge = load_judge(judge_folder)
    judge.config.turn_completion_cue = _cue_config()
    judge.turn_completion_cue = TurnCompletionCue(judge.config.turn_completion_cue)
    judge.turn_completion_cue.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()}, strict=True)
    judge.save_pretrained(judge_folder)
    compact_checkpoint(judge_folder)  # the fp16-exact backbone back to fp16, as it was


def _cue_config() -> TurnCompletionCueConfig:
    """smart-turn v3.2's layout (the defaults of ``TurnCompletionCueConfig``) and where it came from."""
    from turneval.modeling.configuration_turn_taking_judge import TurnCompletionCueConfig

    return TurnCompletionCueConfig(source=PROVENANCE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--onnx", help="smart-turn-v3.2-cpu.onnx (default: the one in the installed pipecat-ai)")
    parser.add_argument("--install_into", help="a judge checkpoint folder to add the cue to")
    parser.add_argument("--tolerance", type=float, default=0.1, help="largest mean |P(complete)| difference from onnxruntime allowed")
    args = parser.parse_args(argv)

    from turneval.smart_turn import model_path

    onnx_path = Path(args.onnx) if args.onnx else model_path()
    state = onnx_to_cue_state(onnx_path)
    mean, worst = check_against_onnx(load_cue(state), onnx_path)
    print(json.dumps({"onnx": str(onnx_path), "tensors": len(state), "mean_abs_probability_difference": round(mean, 4),
                      "max_abs_probability_difference": round(worst, 4)}))
    if mean > args.tolerance:
        print(f"error: the port differs from onnxruntime by {mean:.4f} on average > {args.tolerance}; not installed", file=sys.stderr)
        return 1
    if args.install_into:
        install(Path(args.install_into), state)
        print(f"installed into {args.install_into}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
