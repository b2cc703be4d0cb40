"""One ``sweep.answers`` run: answer and judge the chosen settings of a finished sweep.

The command (``python -m sweep.answers``) composes the config and maps errors to exit
statuses; everything it does is here. Exit statuses: 0 answered, 3 incomplete (some
requests got no answer; a rerun retries them).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from sweep.answers.config import AnswersConfig, JudgeConfig
from sweep.answers.humancheck import (
    agreement_text,
    export_sample,
    judge_agreement,
    read_labels,
)
from sweep.answers.output import write_outputs
from sweep.answers.records import AnswerTrace, read_answers
from sweep.answers.run import AnswersError, answer_settings, choose_settings
from sweep.answers.summary import pair_tests, summarize_answers
from sweep.core.files import NotRegularFile, folder_inside, regular_file
from sweep.hydrakit.config import build_node
from sweep.llm import LLMClient, LLMConfig
from sweep.llm.resume import ResumeInfo, failure_counts, rerun_hint

log = logging.getLogger("sweep.answers")

__all__ = ["INCOMPLETE", "run_answers"]
#: Requests got no answer: the results are incomplete until a rerun.
INCOMPLETE = 3


def _sweep_report(cfg: DictConfig):
    from sweep.reporting.sweepreport import build_report
    from sweep.reporting.write import ReportError

    if not cfg.sweep_dir:
        raise AnswersError(
            "name the sweep folder: python -m sweep.answers outputs/sweep/<time> "
            "llm.base_url=... llm.model=..."
        )
    sweep_dir = Path(str(cfg.sweep_dir))
    if not sweep_dir.is_dir():
        raise AnswersError(f"{sweep_dir}: not a directory")
    try:
        rep = build_report(sweep_dir)
    except ValueError as e:
        raise AnswersError(str(ReportError(str(e)))) from None
    if rep is None:
        raise AnswersError(f"{sweep_dir}: no finished rows (is it a sweep folder?)")
    return rep


def _answers_folder(sweep_dir: Path) -> Path:
    """``answers/`` of the sweep folder, checked before anything is read or sent: a link
    (wherever it leads) or a file in its place is refused, never followed nor deleted."""
    out = sweep_dir / "answers"
    try:
        return folder_inside(out, sweep_dir, make=False)
    except NotRegularFile as e:
        raise AnswersError(str(e)) from None


def _kept(path: Path) -> Path | None:
    """A file of ``answers/`` when it is there; a FIFO, a device or a link leading out of
    the sweep folder is refused in one line (a sweep folder is untrusted input)."""
    try:
        return regular_file(path, inside=path.parent.parent)
    except NotRegularFile as e:
        raise AnswersError(str(e)) from None


def _answered_before(out: Path) -> list[AnswerTrace]:
    """The traces already in ``answers/``: every setting keeps its own until it is
    answered again."""
    path = out / "answers.jsonl"
    if _kept(path) is None:
        return []
    try:
        return read_answers(path)
    except (OSError, ValueError) as e:  # never dropped unread: it is paid-for work
        raise AnswersError(f"{e}; move {path} away to start afresh") from None


def _keep_labels(path: Path) -> None:
    """Refuse to draw a new sample over one a person has labelled: their labels are work
    no rerun gives back. Checked before any request is sent."""
    if _kept(path) is None:
        return
    n = len(read_labels(path))
    if n:
        raise AnswersError(
            f"{path} holds {n} label(s); a new judge.export would replace them: "
            f"measure them first (judge.agreement={path}), then move the file "
            "away to draw a new sample"
        )


def run_answers(cfg: DictConfig, resume: ResumeInfo | None = None) -> int:
    """One answers run; returns the exit status. ``resume`` learns where the replies are
    cached, for the command's Ctrl-C message."""
    conf: AnswersConfig = build_node(cfg.answers)
    judge: JudgeConfig = build_node(cfg.judge)
    rep = _sweep_report(cfg)
    out = _answers_folder(rep.sweep_dir)
    if judge.agreement:
        if _kept(out / "answers.jsonl") is None:
            raise AnswersError(
                f"{out / 'answers.jsonl'} is missing: run sweep.answers on this "
                "sweep first, then label its judge_sample.csv"
            )
        print(
            agreement_text(
                judge_agreement(Path(judge.agreement), read_answers(out / "answers.jsonl"))
            )
        )
        return 0
    if judge.export and not conf.dry_run:
        _keep_labels(out / "judge_sample.csv")
    llm: LLMConfig = build_node(cfg.llm)
    spec = (
        OmegaConf.to_container(cfg.settings) if OmegaConf.is_config(cfg.settings) else cfg.settings
    )
    chosen = choose_settings(rep, spec)
    earlier = [] if conf.dry_run else _answered_before(out)
    k = conf.k or rep.decision.of(chosen[0].job).group.eval.cost_k
    client = LLMClient.open(llm, dry_run=conf.dry_run, show_progress=conf.show_progress)
    cache_root = client.cache.root if client.cache is not None else None
    if resume is not None:  # what the command says after a Ctrl-C
        resume.cache_root = cache_root
    log.info(
        "answering with %s at %s for %s; replies cached in %s",
        llm.model,
        llm.endpoint,
        ", ".join(f"{c.label} ({c.why})" for c in chosen),
        cache_root or "(cache off)",
    )
    result = answer_settings(rep, chosen, k, client)
    stats = client.stats.to_dict()
    if conf.dry_run:
        print(
            f"answers: dry run, nothing sent. {stats['would_send']} requests would be sent "
            f"(about {stats['would_send_prompt_tokens']:,} prompt tokens), {stats['cached']} are "
            f"answered by the cache; the {result.pending_judges} answers not cached yet would "
            f"then need up to {3 * result.pending_judges} judge requests."
        )
        return 0
    again = rerun_hint(cache_root)
    if stats["failed"] and not result.answered:
        kept = f"; the results already in {out} stay as they were" if earlier else ""
        print(
            f"answers: error: none of the {stats['failed']} requests got an answer "
            f"({failure_counts(result.failed_requests)}), so nothing was written{kept}. "
            f"Run the same command again to retry them: {again}",
            file=sys.stderr,
        )
        return INCOMPLETE
    answered = {c.job for c in chosen}
    traces = sorted(
        [t for t in earlier if t.job not in answered] + list(result.traces), key=lambda t: t.job
    )
    labels = {t.job: t.setting for t in traces}
    summaries = summarize_answers(traces, n_boot=conf.n_boot, seed=conf.seed)
    tests = pair_tests(traces, n_perm=conf.n_perm, seed=conf.seed)
    files = write_outputs(out, traces, summaries, tests, labels, stats=stats)
    print((out / "answers.md").read_text(encoding="utf-8"))
    if judge.export:
        n = export_sample(out / "judge_sample.csv", result.traces, judge.export, conf.seed)
        print(
            f"answers: {n} verdicts to label in {out / 'judge_sample.csv'} (fill the label "
            f"column with yes or no, then: judge.agreement={out / 'judge_sample.csv'})"
        )
    try:  # report.html links the answers page
        from sweep.reporting.write import write_report

        write_report(rep.sweep_dir, quiet=True, html=True)
    except Exception as e:  # the answers are written; the link can wait for sweep.report
        log.warning("could not rebuild %s/report.html: %s", rep.sweep_dir, e)
    kept = sorted({t.job for t in traces} - answered)
    print(
        f"answers: files in {out}/ ({', '.join(p.name for p in files)})"
        + (
            f"; they also hold the settings answered before: {', '.join(labels[j] for j in kept)}"
            if kept
            else ""
        )
    )
    if result.unreadable:
        print(
            f"answers: {result.unreadable} replies could not be read (not the JSON asked for); "
            "they are counted in the diagnosis (no_answer, judge_failed), and a rerun gets the "
            "same replies from the cache"
        )
    if stats["failed"]:
        print(
            f"answers: incomplete: {stats['failed']} of {stats['sent'] + stats['cached']} "
            f"requests got no answer ({failure_counts(result.failed_requests)}); their "
            "queries count as no_answer or judge_failed. Run the same command again to retry "
            f"them: {again}",
            file=sys.stderr,
        )
        return INCOMPLETE
    return 0
