"""Gradio widget of the backchannel_timing metric (the app of its Hugging Face Space)."""
from pathlib import Path

import evaluate

from turneval.metrics.widget import launch_gradio_widget


HERE = Path(__file__).resolve().parent
# load the module file beside this app, so the Space works without the Hub
launch_gradio_widget(evaluate.load(str(HERE)), card=HERE / "README.md")
