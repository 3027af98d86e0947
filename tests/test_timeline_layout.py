"""The timeline plot (report.html and the Space) keeps its title, legend and unit labels clear of
the plots and of each other (issue 12 item 11: '#4#1#2' labels, a legend over the curves, the
title over the first plot)."""
from __future__ import annotations

import copy
import re

import pytest
import torch

from turneval.dataset_scripts.synthetic import generate_dialogue
from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge
from turneval.reporting import report
from turneval.reporting.html_report import timeline_figure, timeline_png, unit_labels


TINY_WHISPER = {"d_model": 64, "encoder_layers": 2, "encoder_attention_heads": 4, "encoder_ffn_dim": 128, "max_source_positions": 1500}
TINY_PREDICTOR = dict(hidden_size=32, num_attention_heads=2, intermediate_size=64, num_mel_bins=32, num_channel_layers=1, num_cross_layers=1)


def test_close_units_share_one_label():
    labels = unit_labels([(1, 10.0), (4, 10.05), (2, 10.1), (3, 30.0)], char_s=0.05)
    assert labels == [(10.0, "#1/#2/#4"), (30.0, "#3")]
    assert unit_labels([(1, 10.0), (2, 11.0)], char_s=0.05) == [(10.0, "#1"), (11.0, "#2")]


@pytest.fixture(scope="module")
def rep():
    torch.manual_seed(0)
    judge = TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, context_mode="causal", context_s=4.0)).eval()
    predictor = FutureActivityPredictorModel(FutureActivityPredictorConfig(**TINY_PREDICTOR)).eval()
    dialogue = generate_dialogue(3, duration_s=20.0, style="eager_duplex", system_speaker=1)
    result = report(dialogue, system_channel=1, judge=judge, predictor=predictor, progress=False)
    # crowd the worst units onto one moment: their labels must not be drawn over each other
    worst = result.naturalness["worst_units"]
    assert len(worst) >= 3
    result.naturalness = copy.deepcopy(result.naturalness)
    for k, unit in enumerate(worst[:3]):
        unit["window"] = [8.0 + 0.05 * k, 10.0 + 0.05 * k]
    return result


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_title_legend_and_labels_keep_clear(rep):
    import matplotlib.pyplot as plt

    fig = timeline_figure(rep)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes = [ax.get_window_extent(renderer) for ax in fig.axes]
    title = fig._suptitle.get_window_extent(renderer)
    assert not any(_overlap(title, ax) for ax in axes), "the title is drawn over a plot"
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legends, "the judge panel has a legend"
    for legend in legends:
        box = legend.get_window_extent(renderer)
        assert not any(_overlap(box, ax) for ax in axes), "the legend covers a plot"
    labels = [t for t in fig.axes[0].texts if t.get_text().startswith("#")]
    assert any("/" in t.get_text() for t in labels), "crowded units share one label"
    boxes = [t.get_window_extent(renderer) for t in labels]
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert not _overlap(boxes[i], boxes[j]), f"labels {labels[i].get_text()} and {labels[j].get_text()} overlap"
    plt.close(fig)
    assert timeline_png(rep)[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_page_inlines_the_timeline_as_svg_with_measurable_labels(rep):
    from turneval.reporting.html_report import render_html, timeline_svg

    svg = timeline_svg(rep)
    assert svg.startswith("<svg") and 'class="timeline"' in svg and "viewBox" in svg
    assert 'width="' not in svg[: svg.index(">")], "the inline SVG scales to the page's width"
    labels = re.findall(r'<g id="(unit-label-\d+)"', svg)
    assert labels and len(labels) == len(set(labels))
    assert "<image" in svg, "curves and markers are rasterised"
    page = render_html(rep)
    assert page.count('<g id="unit-label-') == len(labels) and "<metadata>" not in page
