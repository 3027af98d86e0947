"""Cards (README.md with YAML front matter): read, change the metadata, write back."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .plan import DATASET_REPOS, MODEL_REPOS, REPO_ROOT, ReleaseError


def split_front_matter(card: Path) -> tuple[dict[str, Any], str]:
    """(the YAML metadata as a dict, the Markdown body) of a card; raises naming the file."""
    import yaml

    try:
        text = card.read_text(encoding="utf-8")
    except OSError as err:
        raise ReleaseError(f"{card}: cannot read the card ({err.strerror}); the release runs from a source checkout") from None
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 4)
    if end < 0:
        raise ReleaseError(f"{card}: the YAML front matter opened by '---' is never closed")
    try:
        meta = yaml.safe_load(text[4:end]) or {}
    except yaml.YAMLError as err:
        raise ReleaseError(f"{card}: the YAML front matter does not parse: {err}") from None
    return dict(meta), text[end + len("\n---\n"):]


def card_licence(card: Path) -> str:
    """The ``license`` of a card's YAML front matter (``other:<license_name>`` for custom ones)."""
    meta, _ = split_front_matter(card)
    licence = str(meta.get("license", "")).strip()
    if not licence:
        raise ReleaseError(f"{card}: the card's front matter has no 'license'; add one")
    return f"other:{meta['license_name']}" if licence == "other" and meta.get("license_name") else licence


def join_front_matter(meta: dict[str, Any], body: str) -> str:
    """A card's text from its metadata and body (keys in the order given)."""
    import yaml

    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{head}---\n{body if body.startswith(chr(10)) else chr(10) + body}"


def insert_after_title(body: str, section: str) -> str:
    """``section`` placed after the card's first '# ' title line (or at the top when there is none)."""
    lines = body.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return "".join(lines[: i + 1]) + "\n" + section.rstrip("\n") + "\n" + "".join(lines[i + 1:])
    return section.rstrip("\n") + "\n\n" + body


HUB_URL = "https://huggingface.co"
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def hub_url(repo_id: str, repo_type: str, path: str = "") -> str:
    """The Hub page of a repo (``repo_type`` model, dataset or space), or of ``path`` inside it."""
    prefix = {"model": "", "dataset": "datasets/", "space": "spaces/"}[repo_type]
    return f"{HUB_URL}/{prefix}{repo_id}" + (f"/blob/main/{path}" if path else "")


@dataclass(frozen=True)
class ReleaseLinks:
    """Where a card's relative link points once the card is on the Hub.

    A card of a released model or data set becomes that repo's page; a page of ``docs/``
    becomes the copy the demo Space carries (when the release holds it). Anything else (a
    model that is not released, a source file) has no address on the Hub: the link is dropped
    and its text kept.
    """

    org: str
    cards: dict[str, str]  # repo path of a card -> the Hub URL of its repo
    docs_space: str | None  # repo id of the demo Space that carries docs/, if released

    @classmethod
    def of(cls, plans: list[Any]) -> "ReleaseLinks":
        """The links of the release whose repos are ``plans`` (RepoPlan objects)."""
        org = plans[0].repo_id.split("/")[0] if plans else ""
        cards: dict[str, str] = {}
        docs_space = None
        for plan in plans:
            if plan.kind == "model":
                cards[f"model_cards/{MODEL_REPOS[plan.name]}/README.md"] = hub_url(plan.repo_id, "model")
            elif plan.kind == "dataset" and plan.name in DATASET_REPOS:
                cards[f"model_cards/datasets/{plan.name}/README.md"] = hub_url(plan.repo_id, "dataset")
            elif plan.kind == "demo":
                docs_space = plan.repo_id
        return cls(org, cards, docs_space)

    def url(self, repo_path: str) -> str | None:
        """The absolute address of ``repo_path`` (a file of the source checkout), or None."""
        if repo_path in self.cards:
            return self.cards[repo_path]
        if self.docs_space and repo_path.startswith("docs/") and repo_path.endswith(".md"):
            return hub_url(self.docs_space, "space", repo_path)
        return None


def absolute_links(body: str, card: Path, links: ReleaseLinks) -> str:
    """``body`` of the card at ``card`` with every relative Markdown link made absolute by ``links``
    (a link without a Hub address keeps its text only). Raises ReleaseError naming a link whose
    file does not exist in the checkout."""
    def rewrite(match: re.Match) -> str:
        text, target = match.group(1), match.group(2)
        if not _is_relative(target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        source = (card.parent / path).resolve()
        if not source.exists():
            raise ReleaseError(f"{card}: links to {target}, which does not exist; fix the link")
        try:
            repo_path = source.relative_to(REPO_ROOT.resolve()).as_posix()
        except ValueError:
            raise ReleaseError(f"{card}: links to {target}, outside the repository") from None
        url = links.url(repo_path)
        if url is None:
            return text
        return f"[{text}]({url}{'#' + anchor if anchor else ''})"

    return _LINK.sub(rewrite, body)


def _is_relative(target: str) -> bool:
    """A link target that names a file of the checkout (not an address, an in-page anchor or a mail)."""
    return "://" not in target and not target.startswith(("#", "mailto:"))


def relative_links(text: str) -> list[str]:
    """The link targets of a Markdown text that are not absolute addresses (nor in-page anchors)."""
    return [t for _, t in _LINK.findall(text) if _is_relative(t)]


HUB_LICENCES = frozenset({"apache-2.0", "mit", "bsd-2-clause", "cc-by-4.0", "cc-by-nc-4.0", "other"})
"""The licence identifiers of the Hub (https://huggingface.co/docs/hub/repositories-licenses) that
turneval's repos may name; anything else is ``other`` with a ``license_name`` and ``license_link``."""
SIZE_CATEGORIES = ("n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "other")


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` value for a data set of ``rows`` rows."""
    for category, bound in zip(SIZE_CATEGORIES, (10**3, 10**4, 10**5, 10**6, 10**7)):
        if rows < bound:
            return category
    return "other"


def check_card_metadata(text: str, repo_type: str, where: str) -> None:
    """Raise ReleaseError unless the card ``text`` of a ``repo_type`` repo passes the checks the Hub
    makes offline: huggingface_hub parses its front matter (the ``model-index`` into eval results),
    datasets reads its ``configs`` and ``dataset_info``, and its licence is an identifier the Hub
    knows (``other`` with a lowercase ``license_name`` and an absolute ``license_link``)."""
    from huggingface_hub import DatasetCard, ModelCard

    try:
        card = (ModelCard if repo_type == "model" else DatasetCard)(text, ignore_metadata_errors=False)
    except Exception as err:  # huggingface_hub raises ValueError and friends for a malformed model-index
        raise ReleaseError(f"{where}: huggingface_hub rejects the card's front matter: {err}") from None
    meta = card.data.to_dict()
    licences = meta.get("license")
    licences = licences if isinstance(licences, list) else [licences]
    unknown = [name for name in licences if name not in HUB_LICENCES]
    if unknown:
        raise ReleaseError(f"{where}: license {unknown} is not a Hub licence identifier; use one of {sorted(HUB_LICENCES)}")
    if "other" in licences:
        if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*", str(meta.get("license_name", ""))):
            raise ReleaseError(f"{where}: 'license: other' needs a license_name of lowercase letters, digits, '-' and '.'")
        if not str(meta.get("license_link", "")).startswith("https://"):
            raise ReleaseError(f"{where}: 'license: other' needs an absolute license_link")
    if repo_type == "model" and "model-index" in meta and not card.data.eval_results:
        raise ReleaseError(f"{where}: the model-index gives no result")
    if repo_type == "dataset":
        _check_dataset_metadata(card, where)


def _check_dataset_metadata(card: Any, where: str) -> None:
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs

    sizes = card.data.size_categories or []
    if any(size not in SIZE_CATEGORIES for size in (sizes if isinstance(sizes, list) else [sizes])):
        raise ReleaseError(f"{where}: size_categories {sizes} outside {SIZE_CATEGORIES}")
    try:
        configs = MetadataConfigs.from_dataset_card_data(card.data)
        infos = DatasetInfosDict.from_dataset_card_data(card.data)
    except Exception as err:  # datasets raises ValueError/TypeError/KeyError on a malformed block
        raise ReleaseError(f"{where}: datasets cannot read the card's configs or dataset_info: {err}") from None
    if not configs or not infos:
        raise ReleaseError(f"{where}: no 'configs' or 'dataset_info'; load_dataset would need a script")
