"""``python -m sweep.cache info|clear``: show the embedding cache, or clear it.

The cache folder also keeps the report pictures drawn before (``figures/``) and the
query encode times of the latency columns (``timings/``); ``info`` counts them and
``clear`` without ``--namespace`` deletes them too. ``clear --timings`` deletes only
the encode times, so the next sweep measures them again.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from sweep.cli.commands import CommandParser
from sweep.cli.exits import BAD_INPUT, run_with_exits
from sweep.embedding.cache import (
    CacheError,
    cache_info,
    clear_cache,
    default_cache_dir,
    describe_namespace,
    human_bytes,
    namespace_dirname,
)
from sweep.embedding.encode_times import clear_timings, count_timings
from sweep.reporting.figurecache import FIGURES_DIR, FigureCache


def _info(root: Path, as_json: bool) -> int:
    info = cache_info(root)
    n_pictures, picture_bytes = FigureCache(root / FIGURES_DIR).size()
    info["figures"] = {"files": n_pictures, "bytes": picture_bytes}
    info["timings"] = count_timings(root)
    if as_json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"embedding cache: {root}")
    print(
        f"entries: {info['entries']}  size: {human_bytes(info['bytes'])}  "
        f"namespaces: {len(info['namespaces'])}"
    )
    for backend, total in info["backends"].items():
        if backend == "-":
            continue
        print(
            f"backend {backend}: {total['entries']} entries  {human_bytes(total['bytes'])}  "
            f"in {total['namespaces']} namespace(s)"
        )
    for ns in info["namespaces"]:
        print(
            f"  {ns['id']}  {ns['entries']:>8} entries  {human_bytes(ns['bytes']):>9}  "
            f"dim={ns['dim']}  {describe_namespace(ns)}"
        )
    if info["timings"]:
        print(
            f"query encode times (latency columns) kept for {info['timings']} embedder(s); "
            "`clear --timings` has them measured again"
        )
    if n_pictures:
        print(
            f"report pictures drawn before: {n_pictures}  "
            f"size: {human_bytes(info['figures']['bytes'])}  ({root / FIGURES_DIR})"
        )
    return 0


def _clear(root: Path, namespace: str | None, yes: bool) -> int:
    targets = cache_info(root)["namespaces"]
    if namespace is not None:
        targets = [ns for ns in targets if ns["id"] in {namespace, namespace_dirname(namespace)}]
        if not targets:
            raise CacheError(f"{root}: no namespace {namespace!r} (see `info`)")
    entries, size = sum(ns["entries"] for ns in targets), sum(ns["bytes"] for ns in targets)
    if not yes:
        if not sys.stdin.isatty():
            raise CacheError("refusing to clear without --yes (stdin is not a terminal)")
        pictures, picture_bytes = (
            FigureCache(root / FIGURES_DIR).size() if namespace is None else (0, 0)
        )
        also = f" and {pictures} report pictures ({human_bytes(picture_bytes)})" if pictures else ""
        if input(
            f"delete {entries} cached embeddings ({human_bytes(size)}){also} from {root}? [y/N] "
        ).strip().lower() not in ("y", "yes"):
            print("nothing deleted")
            return 1
    removed = clear_cache(root, namespace)
    print(f"cleared {removed['entries']} entries ({human_bytes(removed['bytes'])}) from {root}")
    if namespace is None:
        timed = clear_timings(root)
        if timed:
            print(f"cleared the query encode times of {timed} embedder(s)")
        files, size = FigureCache(root / FIGURES_DIR).clear()
        if files:
            print(f"cleared {files} report pictures ({human_bytes(size)})")
    return 0


def _clear_timings(root: Path) -> int:
    n = clear_timings(root)
    if n:
        print(
            f"cleared the query encode times of {n} embedder(s): the next sweep measures them again"
        )
    else:
        print(f"no query encode times kept in {root}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = CommandParser("sweep.cache")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=argparse.ArgumentParser)
    info = sub.add_parser("info", help="show location, entries and size")
    info.add_argument("--json", action="store_true", help="print JSON")
    clear = sub.add_parser("clear", help="delete cached embeddings")
    clear.add_argument("--namespace", help="only this namespace (id shown by `info`)")
    clear.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    clear.add_argument(
        "--timings",
        action="store_true",
        help="only the query encode times of the latency columns: the next "
        "sweep measures them again (no confirmation asked)",
    )
    for p in (info, clear):
        p.add_argument(
            "--dir", default=str(default_cache_dir()), help="cache directory (default: %(default)s)"
        )
    a = ap.parse_args(argv)
    root = Path(os.path.expanduser(a.dir))

    def call() -> int:
        if root.exists() and not root.is_dir():
            raise CacheError(f"{root}: not a directory")
        if a.command == "info":
            return _info(root, a.json)
        if a.timings:
            if a.namespace is not None:
                raise CacheError("--timings and --namespace cannot be combined")
            return _clear_timings(root)
        return _clear(root, a.namespace, a.yes)

    return run_with_exits("sweep.cache", call, {OSError: BAD_INPUT})


if __name__ == "__main__":
    sys.exit(main())
