"""Warm starts of a voice-activity FutureActivityPredictor that reads more than the timing.

    python -m turneval.training.warm_start --checkpoint checkpoints/future_activity_predictor_switchboard \\
        --vad_features timing+ends --end_lookahead_s 1.0 --out runs/fap_ends_init

A ``timing+words`` or ``timing+ends`` model reads two inputs per frame beside the timing features
(its own and its partner's cue). Started from a ``timing`` predictor with every weight copied and
the two new input columns at 0, it predicts exactly what that predictor predicts, so training
starts from the real-timing model and learns only what the new inputs add.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def widen_timing_predictor(checkpoint: str | Path, vad_features: str, **config: Any):
    """A ``vad_features`` predictor that starts as the ``timing`` predictor ``checkpoint``: its
    weights, the new inputs weighted 0; ``config``: other configuration fields to set (e.g.
    ``end_lookahead_s``). Returns the model and the state dict it was loaded from (to add to)."""
    import torch

    from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
    from turneval.modeling.modeling_future_activity_predictor import VAD_FEATURE_WIDTHS, FutureActivityPredictorModel

    wider = [k for k in VAD_FEATURE_WIDTHS if k.startswith("timing+")]
    if vad_features not in wider:
        raise ValueError(f"can widen a timing predictor to {', '.join(wider)}, not {vad_features!r}")
    base = FutureActivityPredictorModel.from_pretrained(str(checkpoint))
    if (base.config.input_type, base.config.vad_features) != ("vad", "timing"):
        raise ValueError(f"{checkpoint}: the warm start needs a vad_features='timing' predictor, got {base.config.vad_features!r}")
    fields = {k: v for k, v in base.config.to_dict().items() if k in FutureActivityPredictorConfig().to_dict()}
    model = FutureActivityPredictorModel(FutureActivityPredictorConfig(**{**fields, **config, "vad_features": vad_features}))
    state = base.state_dict()
    proj = state["encoder.proj.weight"]
    extra = torch.zeros(proj.shape[0], VAD_FEATURE_WIDTHS[vad_features] - VAD_FEATURE_WIDTHS["timing"], dtype=proj.dtype)
    state["encoder.proj.weight"] = torch.cat([proj, extra], dim=1)
    return model, state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="a vad_features='timing' predictor")
    parser.add_argument("--vad_features", required=True, choices=["timing+ends"],
                        help="what the new model reads (a timing+words start also needs the word cue: turneval.training.switchboard_words init)")
    parser.add_argument("--end_lookahead_s", type=float, default=1.0, help="timing+ends: how far ahead each speaker's activity is read")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    model, state = widen_timing_predictor(args.checkpoint, args.vad_features, end_lookahead_s=args.end_lookahead_s)
    model.load_state_dict(state, strict=True)
    model.save_pretrained(args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
