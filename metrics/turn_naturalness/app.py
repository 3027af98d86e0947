"""Gradio widget of the turn_naturalness metric (the Space's entry point)."""
from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# load the module file beside this app, so the Space works without the Hub
module = evaluate.load(str(Path(__file__).resolve().parent))
launch_gradio_widget(module)
