# A copy of turneval.metrics.widget for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""The Gradio widget of a metric module (what each ``metrics/<name>/app.py`` launches).

``evaluate.utils.launch_gradio_widget`` still builds its form with ``gr.inputs`` and
``gr.outputs``, which Gradio 4 removed; this is the same widget for the Gradio we pin: a table
with one column per input feature (numbers, strings, or JSON for lists), the card below it,
and the result as JSON. It reuses evaluate's own helpers for the type mapping and parsing.
"""
from __future__ import annotations

import json
from pathlib import Path

from evaluate.utils.gradio import infer_gradio_input_types, json_to_string_type, parse_gradio_data, parse_readme

from .turneval_files import to_jsonable


def build_gradio_widget(metric, card: str | Path | None = None):
    """A ``gr.Interface`` for ``metric`` (an ``evaluate.Metric``), not yet launched."""
    import gradio as gr

    features = metric.features[0] if isinstance(metric.features, list) else metric.features
    names, types = zip(*features.items())
    input_types = infer_gradio_input_types(types)

    def compute(table) -> str:
        return json.dumps(to_jsonable(metric.compute(**parse_gradio_data(table, input_types))), indent=1)

    card_path = Path(card) if card is not None else None
    return gr.Interface(
        fn=compute,
        inputs=gr.Dataframe(headers=list(names), col_count=len(names), row_count=1, datatype=json_to_string_type(input_types)),
        outputs=gr.Code(language="json", label=metric.name),
        title=f"Metric: {metric.name}",
        description=metric.info.description + "\nList-valued columns take JSON (e.g. [0.1, 0.2, 0.3, 0.2, 0.2]).",
        article=parse_readme(card_path) if card_path is not None else "",
    )


def launch_gradio_widget(metric, card: str | Path | None = None, **launch_kwargs) -> None:
    """Build and launch the widget (the metric card, if given, is shown under the form)."""
    build_gradio_widget(metric, card).launch(**launch_kwargs)
