"""A report's files: ``report.json`` and the self-contained ``report.html``, each written atomically."""
from __future__ import annotations

from pathlib import Path

from turneval.dataset_scripts.files import atomic_write_text

from .result import Report


def save_report(rep: Report, out_dir: str | Path, html: bool = True) -> dict[str, Path]:
    """Write ``report.json`` (and ``report.html``) into ``out_dir``, each atomically.

    Both documents are rendered before either file is written, so a failure leaves no
    half-written pair behind. Without ``html`` a ``report.html`` left by an earlier run is
    removed, so the folder never pairs a new report.json with an old page.
    """
    out_dir = Path(out_dir)
    documents = {"report.json": rep.to_json()}
    if html:
        from .html_report import render_html  # matplotlib and the page: only when a page is written

        documents["report.html"] = render_html(rep)
    written = {}
    for name, text in documents.items():
        atomic_write_text(out_dir / name, text)
        written[name] = out_dir / name
    stale = out_dir / "report.html"
    if not html and stale.is_file():
        stale.unlink()  # an older run's page would no longer describe this report.json
    return written
