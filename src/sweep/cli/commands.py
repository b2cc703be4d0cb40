"""sweep's commands, what each does and how it is called: the start of every ``--help``.

One list, so every command's help names the others the same way. Hydra commands
(``sweep``, ``sweep.generate``, ``sweep.answers``) show it through
``hydra.help.template`` (the ``${sweep_help:NAME}`` resolver); argparse commands
through :class:`CommandParser`.
"""

from __future__ import annotations

import argparse
import textwrap
from dataclasses import dataclass

__all__ = ["COMMANDS", "Command", "CommandParser", "help_text", "hydra_help_template"]


@dataclass(frozen=True)
class Command:
    name: str  # "sweep.generate"
    summary: str  # a few words, for the list of commands
    does: str  # what it is for, in a sentence or two
    examples: tuple[str, ...]  # command lines to copy

    @property
    def call(self) -> str:
        return f"python -m {self.name}"


COMMANDS = (
    Command(
        "sweep",
        "sweep chunking settings and compare them in one table",
        "Find the chunking that retrieves best on your documents and questions: every "
        "setting of the grid is chunked, embedded, searched and scored, and one table "
        "compares them with 95% intervals, paired tests against the best and a "
        "recommendation.",
        (
            "python -m sweep chunk.size=128,256,512 chunk.overlap=0,64",
            "python -m sweep dataset.path=/data/my-set chunk.strategy=token,recursive "
            "chunk.size=256,512",
            "python -m sweep experiment=grid hydra/launcher=joblib hydra.launcher.n_jobs=2",
        ),
    ),
    Command(
        "sweep.generate",
        "write evaluation questions with an LLM",
        "Write evaluation questions for your documents with an LLM (any OpenAI-compatible "
        "endpoint), each with the passage that answers it, filtered for copies, "
        "duplicates and unanswerable claims.",
        (
            "python -m sweep.generate dataset.path=my-docs generate.out=my-set "
            "llm.model=gpt-4o-mini",
            "python -m sweep.generate dataset.path=my-docs generate.out=my-set llm=local "
            "llm.model=qwen2.5:7b generate.n=200",
            "python -m sweep.generate dataset.path=my-docs generate.dry_run=true",
        ),
    ),
    Command(
        "sweep.answers",
        "answer and judge questions from a sweep's chunks with an LLM",
        "Answer each question from a finished sweep's retrieved chunks with an LLM and "
        "judge the answers, per setting: does the better retrieval give better answers?",
        (
            "python -m sweep.answers outputs/sweep/2026-12-01_10-00-00 llm.model=gpt-4o-mini",
            "python -m sweep.answers DIR llm=local llm.model=qwen2.5:7b settings=[0,3] answers.k=3",
            "python -m sweep.answers DIR settings=all answers.dry_run=true",
        ),
    ),
    Command(
        "sweep.validate",
        "check a dataset and describe it",
        "Check a dataset folder (documents and queries.jsonl, or BEIR) against every rule "
        "of its format, each problem as file:line: message; for a valid one, the lengths "
        "and split evidence that decide whether chunking matters.",
        (
            "python -m sweep.validate ~/data/my-set",
            "python -m sweep.validate corpora/kestrel",
            "python -m sweep.validate ~/data/scifact --split test",
        ),
    ),
    Command(
        "sweep.evidence",
        "propose evidence for questions without labels, no LLM",
        "For every question without evidence, propose the passages (or the one sentence) "
        "of your documents that BM25 ranks best, in a draft: mark the right ones "
        '"keep": true, and --accept writes them as a questions file, each quote checked '
        "against its document. No model, no endpoint.",
        (
            "python -m sweep.evidence ~/data/my-set",
            "python -m sweep.evidence ~/data/my-set --questions questions.txt --top 5",
            "python -m sweep.evidence ~/data/my-set --accept",
        ),
    ),
    Command(
        "sweep.report",
        "rebuild or compare sweep reports",
        "Rebuild a sweep's table, pictures and report.html from its saved rows, or put "
        "several sweeps side by side on one page.",
        (
            "python -m sweep.report outputs/sweep/2026-12-01_10-00-00",
            "python -m sweep.report outputs/sweep/A outputs/sweep/B --out compare.html",
            "python -m sweep.report outputs/sweep/2026-12-01_10-00-00 --no-html",
        ),
    ),
    Command(
        "sweep.export",
        "take a sweep's setting to the splitter you deploy",
        "Write a finished sweep's setting (the recommended one, or --job N) as what you "
        "deploy: its chunks with exact offsets, a LangChain, LlamaIndex, chonkie or "
        "semchunk module defining `splitter` (with how closely it reproduces the chunks, "
        "measured on your documents), or its Hydra config to rerun it.",
        (
            "python -m sweep.export outputs/sweep/2026-12-01_10-00-00 --recommended "
            "--to langchain splitter.py",
            "python -m sweep.export DIR --job 3 --to chunks chunks.jsonl",
            "python -m sweep.export DIR --recommended --to hydra chosen.yaml",
        ),
    ),
    Command(
        "sweep.check",
        "fail CI when retrieval got worse than a baseline sweep",
        "Compare a new sweep's recommended setting with a baseline sweep's on the primary "
        "metric, paired over the same questions: exit 1 when it is significantly worse or "
        "worse by more than --max-drop, 2 when the question sets differ, 0 otherwise.",
        (
            "python -m sweep.check outputs/sweep/new --baseline outputs/sweep/main",
            "python -m sweep.check NEW --baseline OLD --max-drop 0.02 --json",
            "python -m sweep.check NEW --baseline OLD --job 2 --baseline-job 0",
        ),
    ),
    Command(
        "sweep.score",
        "score your own retrieval's run file",
        "Score your own retrieval's ranked hits (a run file) with sweep's metrics against "
        "a corpus and its questions.",
        (
            "python -m sweep.score --corpus my-set --queries my-set --run run.jsonl",
            "python -m sweep.score --corpus my-set --queries my-set --run run.jsonl "
            "--k 1,5,10 --budgets 512,1024",
            "python -m sweep.score --corpus beir/scifact --queries beir/scifact "
            "--run bm25.jsonl --split test",
        ),
    ),
    Command(
        "sweep.extract",
        "write the text each document was read as",
        "Write the text sweep reads from every document (PDF, web page, Word file, "
        "Markdown), one file each: offsets and quotes index this text, so label "
        "against it and check what the parser did to tables, headers and hyphenation.",
        (
            "python -m sweep.extract ~/data/my-set extracted/",
            "python -m sweep.extract ~/data/my-set extracted-plumber/ --reader pdf=pdfplumber",
            "python -m sweep.extract corpora/documents extracted/",
        ),
    ),
    Command(
        "sweep.cache",
        "show or clear the embedding cache",
        "Show where sweep's embedding cache is, how many embeddings it holds per model "
        "and how big it is, or clear it (all of it, one model's namespace, or only the "
        "query encode times the latency columns keep, to have them measured again).",
        (
            "python -m sweep.cache info",
            "python -m sweep.cache clear --timings",
            "python -m sweep.cache clear --namespace NAMESPACE --yes",
        ),
    ),
    Command(
        "sweep.embedding",
        "check that an embedding model loads offline",
        "Load an embedding model the way a sweep would (the bundled all-MiniLM-L6-v2, "
        "a local folder or a Hub id already on disk), and show where it came from, its "
        "dimension, its maximum length and the identity its cached embeddings are kept under.",
        (
            "python -m sweep.embedding sentence-transformers/all-MiniLM-L6-v2",
            "python -m sweep.embedding /models/bge-small-en-v1.5 --embed 'hello world'",
            "python -m sweep.embedding --backend onnx",
        ),
    ),
)
_BY_NAME = {c.name: c for c in COMMANDS}


def help_text(name: str) -> str:
    """What ``name`` does, three examples, and the other commands, as plain text."""
    command = _BY_NAME[name]
    width = max(len(c.call) for c in COMMANDS)
    also = " (installed as the command `sweep` too)" if name == "sweep" else ""
    lines = [textwrap.fill(f"{command.call}{also}: {command.does}", 88), "", "Examples:"]
    lines += [f"  {example}" for example in command.examples]
    lines += ["", "Other commands (each has --help):"]
    lines += [f"  {c.call:<{width}}  {c.summary}" for c in COMMANDS if c.name != name]
    return "\n".join(lines)


def hydra_help_template(name: str) -> str:
    """``hydra.help.template`` for a Hydra command: our text, the config groups and the
    flags, without the full config dump (``--cfg job`` prints it)."""
    own = help_text(name).replace("$", "$$")  # the template is a string.Template
    return (
        f"{own}\n\n"
        "Settings are key=value overrides; comma-separated values are swept.\n"
        "Config groups (group=option):\n\n$APP_CONFIG_GROUPS\n"
        "Print the composed config: --cfg job. Hydra's own help: --hydra-help.\n"
    )


class CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose help starts with :func:`help_text` of its command."""

    def __init__(self, command: str, **kwargs) -> None:
        self.command = command
        super().__init__(
            prog=_BY_NAME[command].call,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **kwargs,
        )

    def format_help(self) -> str:
        return help_text(self.command) + "\n\n" + super().format_help()
