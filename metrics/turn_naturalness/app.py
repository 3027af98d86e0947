"""Gradio widget of the turn_naturalness metric (the app of its Hugging Face Space)."""
import sys
from pathlib import Path

import evaluate


HERE = Path(__file__).resolve().parent
# the module file beside this app (the Space works without the Hub), and with it the widget it
# carries (turneval_widget.py, which the module imports so that evaluate copies it along)
metric = evaluate.load(str(HERE))
sys.modules[type(metric).__module__].launch_gradio_widget(metric, card=HERE / "README.md")
