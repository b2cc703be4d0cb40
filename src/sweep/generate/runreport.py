"""What a generation run did: requested, tried, kept, rejected and why, requests and tokens."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from sweep.generate.config import KINDS

__all__ = ["REASONS", "TOOL", "GenerationReport"]

#: Marks a folder's generation_report.json as written by this tool.
TOOL = "sweep.generate"

#: Every rejection reason, with the stage that gives it and what it means.
REASONS: Mapping[str, str] = {
    "request_failed": "no answer after every retry (429, 5xx, timeout); a rerun asks again",
    "bad_json": "the answer holds no JSON object",
    "bad_shape": "JSON without the keys the prompt asked for",
    "quote_not_found": "a quote is not in the passage or its document, even normalised",
    "not_two_passages": "a multi-hop question whose two quotes come from one passage",
    "distractor_has_answer": "an adversarial question whose answer is also in a distractor",
    "copies_passage": "the question repeats generate.copy_run_words or more words of a passage "
    "(2.5 Japanese, Chinese or Korean characters count as a word)",
    "unrealistic": "realism score below generate.min_realism",
    "not_answerable": "the quoted evidence alone does not answer the question",
    "answer_in_corpus": "an unanswerable question that the retrieved passages answer",
    "near_duplicate": "cosine with a kept question at or above generate.dedup_threshold",
}


@dataclass(frozen=True)
class GenerationReport:
    dataset: str
    generator: str
    endpoint: str
    prompt_version: str
    settings: Mapping[str, Any]
    n_documents: int
    n_passages: int
    requested: Mapping[str, int]
    attempted: Mapping[str, int]
    kept: Mapping[str, int]
    rejections: tuple[tuple[str, str, str, int], ...]  # (stage, reason, kind, count)
    requests: Mapping[str, int]
    quotes: Mapping[str, int]
    realism: Mapping[int, int]
    rounds: int
    seconds: float
    dry_run: bool = False
    pending: int = 0
    notes: tuple[str, ...] = ()
    llm: Mapping[str, Any] = field(default_factory=dict)  # the llm.* settings, never a key

    @property
    def incomplete(self) -> bool:
        """Short because requests got no answer: a rerun may still fill the set, so it is
        not presented as finished."""
        return (
            not self.dry_run
            and self.requests.get("failed", 0) > 0
            and sum(self.kept.values()) < sum(self.requested.values())
        )

    @property
    def status(self) -> str:
        return "dry run" if self.dry_run else "incomplete" if self.incomplete else "finished"

    @property
    def rejected(self) -> dict[str, int]:
        """Rejections per reason, all stages and kinds together."""
        out: dict[str, int] = {}
        for _, reason, _, n in self.rejections:
            out[reason] = out.get(reason, 0) + n
        return out

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tool"] = TOOL
        data["status"] = self.status
        data["requested_total"] = sum(self.requested.values())
        data["kept_total"] = sum(self.kept.values())
        data["rejected"] = self.rejected
        data["rejections"] = [
            {"stage": s, "reason": r, "kind": k, "count": n} for s, r, k, n in self.rejections
        ]
        data["realism"] = {str(k): v for k, v in self.realism.items()}
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def to_markdown(self) -> str:
        r = self.requests
        kinds = [k for k in KINDS if self.requested.get(k) or self.kept.get(k)]
        lines = [
            "# Generation report",
            "",
            f"Model `{self.generator}` at {self.endpoint}, prompt version "
            f"{self.prompt_version}, seed {self.settings.get('seed')}.",
            f"Corpus `{self.dataset}`: {self.n_documents} documents, {self.n_passages} "
            f"passages of about {self.settings.get('window_tokens')} tokens.",
            "",
        ]
        if self.incomplete:  # first, so that nobody takes the set for a finished one
            lines[2:2] = [
                f"**Incomplete**: {r.get('failed', 0)} requests got no answer after "
                f"their retries, so {sum(self.kept.values())} of "
                f"{sum(self.requested.values())} questions were kept. Run the same "
                "command again: it sends only the requests the answer cache does not "
                "hold.",
                "",
            ]
        lines += _table(
            ["kind", "requested", "tried", "kept"],
            [
                [k, self.requested.get(k, 0), self.attempted.get(k, 0), self.kept.get(k, 0)]
                for k in kinds
            ]
            + [
                [
                    "**total**",
                    sum(self.requested.values()),
                    sum(self.attempted.values()),
                    sum(self.kept.values()),
                ]
            ],
        )
        lines += ["", "## Rejected", ""]
        if self.rejections:
            by_reason: dict[tuple[str, str], dict[str, int]] = {}
            for stage, reason, kind, n in self.rejections:
                by_reason.setdefault((stage, reason), {})[kind] = n
            stages = ("draft", "realism", "check", "dedup")
            order = sorted(
                by_reason,
                key=lambda sr: (stages.index(sr[0]) if sr[0] in stages else len(stages), sr[1]),
            )
            lines += _table(
                ["reason", "stage", *kinds, "total"],
                [
                    [
                        f"`{reason}`",
                        stage,
                        *(by_reason[(stage, reason)].get(k, 0) for k in kinds),
                        sum(by_reason[(stage, reason)].values()),
                    ]
                    for stage, reason in order
                ],
            )
            lines += [""] + [
                f"- `{reason}`: {REASONS.get(reason, '')}"
                for reason in dict.fromkeys(reason for _, reason in order)
            ]
        else:
            lines.append("Nothing was rejected.")
        lines += ["", "## Requests", ""]
        lines += _table(
            ["sent", "from cache", "failed", "retries", "prompt tokens", "completion tokens"],
            [
                [
                    r.get("sent", 0),
                    r.get("cached", 0),
                    r.get("failed", 0),
                    r.get("retries", 0),
                    f"{r.get('prompt_tokens', 0):,}",
                    f"{r.get('completion_tokens', 0):,}",
                ]
            ],
        )
        lines += [
            "",
            "Token counts are the API's `usage` of the answers received in this run. "
            f"Answers from the cache had cost {r.get('cached_prompt_tokens', 0):,} prompt "
            f"and {r.get('cached_completion_tokens', 0):,} completion tokens when first asked.",
        ]
        if r.get("usage_missing"):
            lines.append(f"{r['usage_missing']} answers came without a usage field (counted as 0).")
        if self.dry_run:
            lines += [
                "",
                f"Dry run: {r.get('would_send', 0)} requests would be sent now, about "
                f"{r.get('would_send_prompt_tokens', 0):,} prompt tokens.",
            ]
        q = self.quotes
        lines += [
            "",
            "## Kept questions",
            "",
            f"Evidence quotes located: {q.get('exact', 0)} exactly, "
            f"{q.get('normalised', 0)} by the normalised match (case, whitespace, "
            "quote marks, emphasis).",
            "Realism of kept questions: "
            + (", ".join(f"{score}: {n}" for score, n in self.realism.items()) or "none")
            + ".",
            f"Rounds: {self.rounds}; {self.seconds:.1f} s.",
        ]
        if self.notes:
            lines += ["", "## Notes", ""] + [f"- {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out
