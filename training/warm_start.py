"""Warm starts of a voice-activity FutureActivityPredictor that reads more than the timing.

    python -m turneval.training.warm_start --checkpoint benchmarks/baselines/future_activity_predictor_switchboard \\
        --vad_features timing+ends --end_lookahead_s 1.0 --out runs/fap_ends_init

A ``timing+words`` or ``timing+ends`` model reads two inputs per frame beside the timing features
(its own and its partner's cue); ``timing+words+ends`` reads both pairs. Started from a predictor
that reads fewer of them, with every weight copied and the new input columns at 0, it predicts
exactly what that predictor predicts, so training starts from the real-timing model and learns
only what the new inputs add.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


CUE_ORDER = ("words", "ends")
"""The cues a ``timing+`` reading may add, in the order the model reads them."""


def reading_cues(vad_features: str) -> list[str]:
    """The cues a ``timing+...`` reading adds after the timing features, in input order:
    ``"timing+words+ends"`` -> ``["words", "ends"]``."""
    return vad_features.split("+")[1:]


def reading_with(vad_features: str, cue: str) -> str:
    """The reading of ``vad_features`` with ``cue`` added in its place:
    ``reading_with("timing+ends", "words")`` -> ``"timing+words+ends"``."""
    cues = {*reading_cues(vad_features), cue}
    return "+".join(["timing", *(c for c in CUE_ORDER if c in cues)])


def widen_timing_predictor(checkpoint: str | Path, vad_features: str, **config: Any):
    """A ``vad_features`` predictor that starts as the predictor ``checkpoint`` (``timing`` or a
    ``timing+`` reading with fewer cues): its weights, the new cue inputs weighted 0; ``config``:
    other configuration fields to set (e.g. ``end_lookahead_s``). Returns the model and the state
    dict it was loaded from (to add to, e.g. a word cue's weights)."""
    import torch

    from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
    from turneval.modeling.modeling_future_activity_predictor import VAD_FEATURE_WIDTHS, FutureActivityPredictorModel

    wider = [k for k in VAD_FEATURE_WIDTHS if k.startswith("timing+")]
    if vad_features not in wider:
        raise ValueError(f"can widen a timing predictor to {', '.join(wider)}, not {vad_features!r}")
    base = FutureActivityPredictorModel.from_pretrained(str(checkpoint))
    old, new = reading_cues(base.config.vad_features), reading_cues(vad_features)
    if base.config.input_type != "vad" or not base.config.vad_features.startswith("timing") or not set(old) < set(new):
        raise ValueError(f"{checkpoint}: the warm start to {vad_features!r} needs a 'timing' predictor or one that reads fewer "
                         f"of its cues, got vad_features={base.config.vad_features!r}")
    fields = {k: v for k, v in base.config.to_dict().items() if k in FutureActivityPredictorConfig().to_dict()}
    model = FutureActivityPredictorModel(FutureActivityPredictorConfig(**{**fields, **config, "vad_features": vad_features}))
    state = base.state_dict()
    proj = state["encoder.proj.weight"]
    timing = VAD_FEATURE_WIDTHS["timing"]
    wide = torch.zeros(proj.shape[0], VAD_FEATURE_WIDTHS[vad_features], dtype=proj.dtype)
    wide[:, :timing] = proj[:, :timing]
    for i, cue in enumerate(old):  # each cue is two columns (own, partner), in the reading's order
        j = new.index(cue)
        wide[:, timing + 2 * j : timing + 2 * j + 2] = proj[:, timing + 2 * i : timing + 2 * i + 2]
    state["encoder.proj.weight"] = wide
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
