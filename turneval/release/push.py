"""Upload a release folder to the Hub: ``create_repo`` + ``upload_folder`` per repo of ``release.json``.

The token comes from the environment (``HF_TOKEN``, or what ``hf auth login`` stored); nothing
is uploaded without one. Files are checked against ``release.json`` before the first upload.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from .manifest import check_files, read_manifest
from .plan import ReleaseError


def push_release(release: str | Path, *, progress: Callable[[str], None] = print) -> list[str]:
    """Create (if needed) and upload every repo of the release folder; returns the repo ids pushed."""
    from huggingface_hub import HfApi, get_token

    release = Path(release)
    manifest = read_manifest(release)
    check_files(release, manifest)
    token = get_token()
    if not token:
        raise ReleaseError("--push needs a Hugging Face token: set HF_TOKEN (a write token) or run `hf auth login`")
    api = HfApi(token=token)
    pushed = []
    for repo in manifest["repos"]:
        space_sdk = "gradio" if repo["repo_type"] == "space" else None
        api.create_repo(repo["repo_id"], repo_type=repo["repo_type"], exist_ok=True, space_sdk=space_sdk)
        progress(f"uploading {repo['repo_type']} {repo['repo_id']} ({len(repo['files'])} files)")
        api.upload_folder(
            folder_path=str(release / repo["folder"]),
            repo_id=repo["repo_id"],
            repo_type=repo["repo_type"],
            commit_message=f"turneval release of {repo['repo_id']}",
        )
        pushed.append(repo["repo_id"])
    return pushed
