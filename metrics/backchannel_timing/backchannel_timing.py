"""backchannel_timing: backchannel quantity and timing of a listener (Switching Wizard of Oz,
Poppe et al. 2013). A thin face over ``turneval.metrics.swoz_backchannels``, where every rule
lives."""
from __future__ import annotations

import datasets
import evaluate

# turneval's code, copied beside this file (turneval_*.py, `make sync-metrics`) so that the module
# runs without turneval. evaluate carries only the files a script imports, so every copy is
# imported here, also those only the other copies or the Space's app.py use (noqa: F401).
from .turneval_files import (
    to_jsonable,  # noqa: F401
)
from .turneval_swoz_backchannels import (
    BAND_PER_MINUTE,
    MATCH_TOLERANCE_S,
    MIN_SPACING_S,
    SwozCriteria,
    backchannel_timing,
    pool_backchannel_timing,
)
from .turneval_widget import (
    launch_gradio_widget,  # noqa: F401
)


_CITATION = """\
@article{poppe2013swoz,
  title={Switching Wizard of Oz for the online evaluation of backchannel behavior},
  author={Poppe, Ronald and ter Maat, Mark and Heylen, Dirk},
  journal={Journal on Multimodal User Interfaces},
  year={2013}
}
"""

_DESCRIPTION = """\
Backchannel timing evaluates when and how often a listener (e.g. a spoken dialogue system)
backchannels. Following the Switching Wizard of Oz study, each dialogue is cut into segments
(60 s by default) and the number of backchannels per minute is measured per segment; listeners
judged human-like peak at 4-6 backchannels per minute, so the share of segments in that band is
reported. Against a reference listener (e.g. the human backchannels for the same speaker), a
backchannel matches when the two are at most 500 ms apart (one-to-one matching), giving
precision, recall and F1. Backchannels less than 1 s after the previous one are counted as
spacing violations. Each input row is one dialogue; results are pooled over dialogues.
"""

_KWARGS_DESCRIPTION = """
Args:
    times (`list` of `list` of `float`): per dialogue, the listener's backchannel onsets (s).
    duration (`list` of `float`): per dialogue, its length in seconds.
    reference_times (`list` of `list` of `float`): per dialogue, the reference listener's
        backchannel onsets (s) for the timing match. Load the module with
        `config_name="rate_only"` to measure without a reference (no `timing` in the result).
    segment_s (`float`, default 60.0): segment length for the per-minute rate.
    min_segment_s (`float`, default 10.0): a trailing segment shorter than this is dropped.
    band_low, band_high (`float`, default 4.0 and 6.0): the per-minute band (inclusive).
    tolerance (`float`, default 0.5): timing match tolerance in seconds.
    min_spacing (`float`, default 1.0): backchannels closer than this are violations.
Returns:
    n_dialogues, n_segments, n_backchannels (`int`),
    rate_per_minute (`list` of `float`): per segment, over all dialogues,
    mean_rate_per_minute (`float`), in_band_share (`float`), band (`list`),
    spacing (`dict`): n_violations, n_pairs, share, min_spacing_s,
    timing (`dict`, with reference_times): n_system, n_reference, n_matched, precision,
        recall, f1, tolerance_s.
Examples:
    >>> import evaluate
    >>> bc_metric = evaluate.load("metrics/backchannel_timing")
    >>> results = bc_metric.compute(
    ...     times=[[5.0, 5.6, 20.0, 40.0, 50.0]], duration=[60.0], reference_times=[[5.3, 21.0, 49.6]]
    ... )
    >>> results["rate_per_minute"], results["in_band_share"], results["spacing"]["n_violations"]
    ([5.0], 1.0, 1)
    >>> results["timing"]["precision"], results["timing"]["recall"]
    (0.4, 0.6666666666666666)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BackchannelTiming(evaluate.Metric):
    """Backchannels per minute, the 4-6/min band, timing match and spacing (SWOZ)."""

    def _info(self) -> evaluate.MetricInfo:
        times = datasets.List(datasets.Value("float64"))
        features = {"times": times, "duration": datasets.Value("float64")}
        if self.config_name != "rate_only":
            features["reference_times"] = times
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(features),
            reference_urls=["https://doi.org/10.1007/s12193-013-0131-y"],
        )

    def _compute(
        self,
        times,
        duration,
        reference_times=None,
        segment_s: float = 60.0,
        min_segment_s: float = 10.0,
        band_low: float = BAND_PER_MINUTE[0],
        band_high: float = BAND_PER_MINUTE[1],
        tolerance: float = MATCH_TOLERANCE_S,
        min_spacing: float = MIN_SPACING_S,
    ) -> dict:
        references = reference_times if reference_times is not None else [None] * len(times)
        criteria = SwozCriteria(band=(band_low, band_high), tolerance=tolerance, min_spacing=min_spacing)
        per_dialogue = [
            backchannel_timing(
                t,
                duration=d,
                reference_times=r,
                segment_s=segment_s,
                min_segment_s=min_segment_s,
                criteria=criteria,
            )
            for t, d, r in zip(times, duration, references)
        ]
        return pool_backchannel_timing(per_dialogue)
