"""`turneval release`: the Hugging Face release, one repo per model, data set, metric and the demo Space.

    turneval release --org ORG                        # the plan: every repo id, kind and licence
    turneval release --org ORG --out hub/             # write the repos and hub/release.json (no upload)
    turneval release --org ORG --out hub/ --push      # ... and upload them (token: $HF_TOKEN)
    turneval release --org ORG --as-cache DIR         # ... as a Hugging Face home: loads by repo id offline

Runs from a source checkout (it reads model_cards/, space/ and examples/). What each repo holds:
docs/release.md and turneval/release/.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from turneval.cli import UserError


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "release",
        help="write (and upload) the Hub repos: models, data sets, metric Spaces, the demo Space",
        description="The Hugging Face release. Without --out, --as-cache or --push it prints the plan and writes nothing.",
    )
    parser.add_argument("--org", required=True, help="the Hub user or organisation the repos belong to")
    parser.add_argument("--out", default=None, help="write one folder per repo here, and release.json")
    parser.add_argument("--push", action="store_true", help="upload every repo (create_repo + upload_folder; token from $HF_TOKEN)")
    parser.add_argument("--as-cache", default=None, metavar="DIR",
                        help="also lay the repos out as a Hugging Face home folder (HF_HOME=DIR) that loads them by repo id offline")
    parser.add_argument("--sources", nargs="+", default=None,
                        help="conversations the data sets are built from (default: synthetic harper_valley)")
    parser.add_argument("--real-root", default=None, help="folder of the real recordings (default: $TURNEVAL_REAL_ROOT or ../shared/real)")
    parser.add_argument("--questions-per-class", type=int, default=None, help="yes (and no) items per task of turn_taking_questions (default 5)")
    parser.add_argument("--no-demo", action="store_true", help="leave out the demo Space (it builds turneval's wheel)")
    return parser


def _print_plan(plans) -> None:
    width = max(len(p.repo_id) for p in plans)
    for plan in plans:
        built = f"  from {', '.join(plan.sources)}" if plan.sources else ""
        print(f"{plan.repo_type:<8} {plan.repo_id:<{width}}  {plan.kind:<7} {plan.licence}{built}")


def run(args: argparse.Namespace) -> int:
    from turneval.release.plan import ReleaseError
    from turneval.release.planning import release_plan

    try:
        plans = release_plan(args.org, sources=args.sources, demo=not args.no_demo)
        _print_plan(plans)
        if not (args.out or args.as_cache or args.push):
            print("dry run: nothing written; --out DIR writes the repos, --push uploads them")
            return 0
        import datasets

        from turneval.release.build import write_release

        datasets.disable_progress_bars()
        with tempfile.TemporaryDirectory(prefix="turneval-release-") as scratch:
            out = Path(args.out) if args.out else Path(scratch) / "hub"
            manifest = write_release(plans, out, real_root=args.real_root, questions_per_class=args.questions_per_class, progress=print)
            files = sum(len(r["files"]) for r in manifest["repos"])
            size = sum(f["size"] for r in manifest["repos"] for f in r["files"].values()) / 2**20
            print(f"wrote {len(manifest['repos'])} repos ({files} files, {size:.0f} MB)" + (f" and {out / 'release.json'}" if args.out else ""))
            if args.as_cache:
                from turneval.release.hub_cache import cache_env, write_cache

                write_cache(out, args.as_cache)
                env = " ".join(f"{k}={v}" for k, v in cache_env(args.as_cache).items() if k != "HF_HUB_CACHE")
                print(f"Hugging Face home with every repo in {args.as_cache}; load them offline with: {env}")
            if args.push:
                from turneval.release.push import push_release

                push_release(out)
            else:
                print("not uploaded: --push uploads the repos")
    except ReleaseError as err:
        raise UserError(str(err)) from None
    return 0
