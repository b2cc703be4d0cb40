"""``python -m sweep.export SWEEP_DIR --recommended --to langchain splitter.py``: take a
sweep's setting home.

``--to chunks OUT.jsonl`` writes every chunk of the setting with its exact offsets;
``--to langchain|llamaindex|chonkie|semchunk OUT.py`` a module defining ``splitter``
(the framework's closest equivalent of a sweep strategy, with its agreement measured
on the sweep's documents in the header); ``--to sweep OUT.py`` a module running
sweep's own chunker; ``--to hydra OUT.yaml`` the setting's config, to rerun it.
"""

from __future__ import annotations

import runpy
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from pathlib import Path

from sweep.chunking.frameworks import FRAMEWORKS, install_hint
from sweep.cli.commands import CommandParser
from sweep.cli.exits import BAD_INPUT, log_warnings, run_with_exits
from sweep.core.files import write_text_atomic
from sweep.core.messages import visible
from sweep.core.types import Dataset
from sweep.datasets.loading import load_dataset
from sweep.export.agreement import measure_agreement
from sweep.export.chunks import check_offsets, chunk_records, to_jsonl
from sweep.export.hydrafile import hydra_yaml, rerun_notes, sweep_configs
from sweep.export.modules import EXPORT_FRAMEWORKS, render_module, sweep_command
from sweep.hydrakit.config import CONF_DIR
from sweep.reporting.selection import ChosenJob, ExportError, choose_job
from sweep.store.chunkfile import CHUNKS_NAME, ChunkFileError, read_chunk_offsets
from sweep.store.row import DatasetInfo

KINDS = ("chunks", "hydra", *EXPORT_FRAMEWORKS)
#: The one dataset loader export calls. A sweep folder is untrusted input: its config may
#: name any ``_target_``, and export builds none of them (the loader is called, not
#: instantiated, so a node among its arguments stays data).
DATASET_LOADER = "sweep.datasets.loading.load_dataset"


def _dataset(chosen: ChosenJob) -> Dataset:
    node = chosen.config["dataset"]
    if node.get("_target_") != DATASET_LOADER:
        raise ExportError(
            f"{chosen.job_dir / 'resolved_config.yaml'}: dataset._target_ is "
            f"{node.get('_target_')!r}; export reads a dataset with sweep's own "
            f"loader only ({DATASET_LOADER}) and runs nothing a sweep folder names"
        )
    arguments = {k: v for k, v in node.items() if k != "_target_"}
    try:
        dataset = load_dataset(**arguments)
    except TypeError as e:  # a key the loader does not take
        raise ExportError(f"{chosen.job_dir / 'resolved_config.yaml'}: dataset: {e}") from None
    except (OSError, ValueError) as e:
        raise ExportError(f"job {chosen.row.job}'s dataset cannot be read: {e}") from None
    if chosen.row.dataset is not None and (
        DatasetInfo.of(dataset).fingerprint != chosen.row.dataset.fingerprint
    ):
        raise ExportError(
            f"the documents or questions of {chosen.row.dataset.name} changed "
            f"since job {chosen.row.job} ran (its fingerprint differs), so its "
            "chunks may no longer fit them; rerun the sweep"
        )
    return dataset


def _header(chosen: ChosenJob) -> list[str]:
    """The opening comment's lines (the writer escapes what they quote from the folder)."""
    row = chosen.row
    primary = row.eval.primary_metric
    mean = row.mean(primary.level, primary.measure)
    score = f"; {primary.label} {mean:.3f}" if mean is not None else ""
    return [
        f"Exported by sweep.export from job {row.job} of {chosen.sweep_dir.resolve()}",
        f"({chosen.label}{score}).",
    ]


def _comment(paragraphs: list[str]) -> str:
    """Python comment lines of ``paragraphs``, each wrapped; a line break or control
    character in one (a folder's name, a setting's value) is escaped, never a new line."""
    return "".join(
        f"# {line}\n" for paragraph in paragraphs for line in textwrap.wrap(visible(paragraph), 86)
    )


def _check_config_name(out: Path) -> None:
    """The rerun names ``out`` as a Hydra config beside sweep's own: it must not hide one."""
    if out.suffix != ".yaml":
        raise ExportError(
            f"{out}: a Hydra config's name ends in .yaml (Hydra looks for "
            f"{out.stem}.yaml when asked for {out.stem!r})"
        )
    taken = sorted({p.stem for p in CONF_DIR.iterdir() if not p.name.startswith((".", "_"))})
    if out.stem in taken:
        raise ExportError(
            f"{out}: {out.stem!r} is the name of one of sweep's own configs "
            f"({', '.join(taken)}), which the rerun would read instead; name "
            f"the file otherwise, e.g. {out.with_name('chosen.yaml')}"
        )


def _offsets(chosen: ChosenJob) -> list:
    """The setting's chunks as the job kept them, all of them."""
    path = chosen.job_dir / CHUNKS_NAME
    if chosen.file(CHUNKS_NAME) is None:  # nor a FIFO, nor a link out of the sweep folder
        raise ExportError(
            f"{path}: missing (the job ran before sweep kept its chunks); rerun the sweep"
        )
    try:
        offsets = read_chunk_offsets(path)
    except ChunkFileError as e:
        raise ExportError(str(e)) from None
    expected = chosen.row.stats.n_chunks
    if expected and len(offsets) != expected:
        raise ExportError(
            f"{path}: {len(offsets)} chunks, but job {chosen.row.job} made "
            f"{expected}; the file is incomplete, rerun the sweep"
        )
    return offsets


def _prefix(chosen: ChosenJob) -> str:
    """The title/heading prefix the setting embedded its chunks after (``none``)."""
    return str(chosen.config["chunk"].get("prefix", "none"))


def _prefix_warning(chosen: ChosenJob, kind: str) -> list[str]:
    prefix = _prefix(chosen)
    if prefix == "none":
        return []
    how = (
        "split_for_embedding(text) gives them"
        if kind == "sweep"
        else "this module reproduces the cuts only"
    )
    return [
        f"NOTE: this setting embedded each chunk after its {prefix} prefix (the "
        f"document's title and headings, then a blank line) and was scored so; {how}. "
        "sweep.export --to chunks writes each chunk's embed_text."
    ]


def _design_warning(chosen: ChosenJob) -> list[str]:
    """What the setting did besides cutting text, which a splitter cannot carry."""
    # (a damaged config's section that is no mapping says nothing)
    parents, context, embed = (
        (v if isinstance(v, dict) else {})
        for v in (chosen.config.get(k) for k in ("parent", "context", "embed"))
    )
    done = []
    parent = str(parents.get("mode") or "none")
    if parent != "none":
        done.append(
            f"handed the LLM each hit's parent ({parent}, parent.size="
            f"{parents.get('size')}) and was scored so"
        )
    if str(context.get("mode") or "none") != "none":
        done.append("searched each chunk with an LLM-written context before it (context.mode=llm)")
    if embed.get("late") is True:
        done.append(
            "embedded documents whole and pooled each chunk's token vectors (embed.late=true)"
        )
    if not done:
        return []
    return [
        f"NOTE: this setting also {'; '.join(done)}. This export reproduces the chunks "
        "only; deploy those steps beside it (docs/retrieval-designs.md)."
    ]


def export(sweep_dir: Path, job: int | None, kind: str, out: Path, force: bool) -> int:
    if out.is_dir():
        raise ExportError(f"{out}: is a folder; name a file to write")
    if (out.exists() or out.is_symlink()) and not force:
        raise ExportError(f"{out}: file exists; name a new file (or pass --force)")
    if not out.parent.is_dir():
        raise ExportError(f"{out}: no folder {out.parent}")
    if kind == "hydra":
        _check_config_name(out)
    chosen = choose_job(sweep_dir, job)
    if kind == "hydra":
        if not chosen.choices:
            raise ExportError(
                f"{chosen.job_dir / '.hydra' / 'hydra.yaml'}: missing; the rerun "
                "needs the job's Hydra group choices (chunk=..., embed=...)"
            )
        deleted = [o.split("=", 1)[0] for o in chosen.row.overrides if o.startswith("~")]
        # only what sweep's own configs hold: the header prints the command that runs it
        own = sweep_configs(CONF_DIR)
        write_text_atomic(
            out,
            hydra_yaml(
                chosen.config,
                chosen.choices,
                out,
                _header(chosen),
                own,
                deleted,
                config_file=chosen.job_dir / "resolved_config.yaml",
                choices_file=chosen.job_dir / ".hydra" / "hydra.yaml",
            ),
        )
        print(f"wrote {visible(out)}: job {chosen.row.job}'s config")
        for line in rerun_notes(chosen.config):
            print(visible(line), file=sys.stderr)
        return 0
    offsets = _offsets(chosen)
    dataset = _dataset(chosen)
    documents = {d.doc_id: d for d in dataset.documents}
    problem = check_offsets(documents, offsets)
    if problem is not None:
        raise ExportError(f"job {chosen.row.job}: {problem}; rerun the sweep")
    if kind == "chunks":
        write_text_atomic(out, to_jsonl(chunk_records(documents, offsets, _prefix(chosen))))
        print(
            f"wrote {visible(out)}: {len(offsets)} chunks of job {chosen.row.job} "
            f"({visible(chosen.label)})"
        )
        for line in _design_warning(chosen):
            print(visible(line), file=sys.stderr)
        return 0
    try:  # only an allow-listed splitter with literal arguments, checked on its syntax tree
        rendered = render_module(chosen.config, kind)
    except ValueError as e:
        raise ExportError(
            f"{chosen.job_dir / 'resolved_config.yaml'}: job {chosen.row.job}: {e}"
        ) from None
    # Measured by running the very module the user gets.
    with tempfile.TemporaryDirectory() as tmp:
        trial = Path(tmp) / "exported_splitter.py"
        trial.write_text(rendered.source, encoding="utf-8")
        try:
            splitter = runpy.run_path(str(trial))["splitter"]
        except ImportError as e:
            hint = f": {install_hint(FRAMEWORKS[kind])}" if FRAMEWORKS.get(kind) else ""
            raise ExportError(
                f"--to {kind} needs {e.name or e}, which is not installed{hint}"
            ) from None
        except (Exception, SystemExit) as e:  # it cannot build the splitter the setting names
            raise ExportError(
                f"job {chosen.row.job}: the {kind} module fails to build its "
                f"splitter: {type(e).__name__}: {e}"
            ) from None
    agreement = measure_agreement(
        splitter,
        rendered.framework,
        rendered.call,
        dataset.documents,
        offsets,
        takes_pages=rendered.takes_pages,
    )
    name = "this splitter"
    warning = []
    if not agreement.close:
        # the preset that builds this very splitter class (TokenTextSplitter is
        # chunk=langchain_token, not chunk=langchain)
        score = (
            ""
            if rendered.target is None
            else "; to score this splitter, sweep it: python -m sweep "
            f"{sweep_command(CONF_DIR / 'chunk', rendered.framework, rendered.target)} "
            "with its arguments as chunk.splitter.* overrides"
        )
        warning = [
            f"WARNING: this is not the chunking sweep scored ({100 * agreement.share:.0f}% "
            "of its chunks are the same), so the sweep's numbers do not carry over. To "
            f"deploy what was scored, export --to sweep (sweep's own chunker){score}."
        ]
    warning += _prefix_warning(chosen, kind) + _design_warning(chosen)
    header = [
        *_header(chosen),
        f"It defines `splitter`: {rendered.what}.",
        *agreement.lines(name),
        *rendered.notes,
        *warning,
    ]
    write_text_atomic(out, _comment(header) + rendered.source)
    print(
        f"wrote {visible(out)}: {rendered.what}; identical chunks on {agreement.identical} of "
        f"{agreement.n_documents} documents, {100 * agreement.share:.0f}% of chunks the same"
    )
    for line in warning:
        print(visible(line), file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser("sweep.export")
    parser.add_argument("sweep_dir", type=Path, metavar="SWEEP_DIR", help="a sweep's folder")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--job", type=int, metavar="N", help="the job to export")
    which.add_argument(
        "--recommended", action="store_true", help="the setting the sweep's report recommends"
    )
    parser.add_argument(
        "--to",
        nargs=2,
        required=True,
        metavar=("KIND", "OUT"),
        help=f"what to write, and where: KIND is one of {', '.join(KINDS)}",
    )
    parser.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    args = parser.parse_args(argv)
    kind, out = args.to
    if kind not in KINDS:
        parser.error(f"--to {kind}: unknown; choose one of {', '.join(KINDS)}")
    log_warnings("sweep.export")
    return run_with_exits(
        "sweep.export",
        lambda: export(args.sweep_dir, args.job, kind, Path(out), args.force),
        {OSError: BAD_INPUT},
    )


if __name__ == "__main__":
    sys.exit(main())
