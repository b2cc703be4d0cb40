"""One query's end-to-end trace under one setting: ``answers/answers.jsonl``.

The question, its gold evidence, the chunks the setting retrieved (the
context the model read, each with how much gold it holds), the answer, every
verdict with its reason, and the diagnosis.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sweep.answers.replies import JudgeVerdict
from sweep.store.traces import Evidence, Retrieved

__all__ = ["JUDGES", "AnswerTrace", "read_answers", "write_answers"]

#: judge name -> the key of its verdict in answers.jsonl and its reply contract.
JUDGES = ("faithful", "relevant", "correct")


@dataclass(frozen=True)
class AnswerTrace:
    job: int
    setting: str
    query_id: str
    query: str
    type: str | None
    reference: str | None  # the evaluation set's answer, when it has one
    gold: tuple[Evidence, ...]
    context: tuple[Retrieved, ...]  # the chunks handed to the model, in rank order
    context_relevance: str  # complete / partial / none / unanswerable
    answer: str | None  # None: no readable answer
    declined: bool | None
    verdicts: Mapping[str, JudgeVerdict] = field(default_factory=dict)
    #: step -> why its reply is missing (answer, faithful, relevant, correct)
    failures: Mapping[str, str] = field(default_factory=dict)
    diagnosis: str = ""
    prompt_version: str = ""
    k: int = 0  # chunks the setting could hand over (context may hold fewer)
    model: str = ""  # the model that answered

    @property
    def setup(self) -> tuple[str, int, str]:
        """What the answer was made with: settings of another setup are not compared."""
        return (self.model, self.k, self.prompt_version)

    @property
    def answerable(self) -> bool:
        return bool(self.gold)

    def passed(self, judge: str) -> bool | None:
        v = self.verdicts.get(judge)
        return None if v is None else v.passed

    def to_json(self) -> str:
        data = asdict(self)
        data["gold"] = [vars(g) for g in self.gold]
        data["context"] = [vars(c) for c in self.context]
        data["verdicts"] = {k: asdict(v) for k, v in self.verdicts.items()}
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> AnswerTrace:
        return cls(
            job=int(obj["job"]),
            setting=str(obj["setting"]),
            query_id=str(obj["query_id"]),
            query=str(obj["query"]),
            type=obj.get("type"),
            reference=obj.get("reference"),
            gold=tuple(Evidence(**g) for g in obj.get("gold", ())),
            context=tuple(Retrieved(**c) for c in obj.get("context", ())),
            context_relevance=str(obj["context_relevance"]),
            answer=obj.get("answer"),
            declined=obj.get("declined"),
            verdicts={k: JudgeVerdict(**v) for k, v in (obj.get("verdicts") or {}).items()},
            failures=dict(obj.get("failures") or {}),
            diagnosis=str(obj.get("diagnosis", "")),
            prompt_version=str(obj.get("prompt_version", "")),
            # Traces from before k was recorded: 0, unknown, the same for every query of a
            # setting (its context length would differ where a query had fewer hits).
            k=int(obj.get("k") or 0),
            model=str(obj.get("model") or ""),
        )


def write_answers(path: Path, traces: Iterable[AnswerTrace]) -> None:
    from sweep.core.files import write_text_atomic

    write_text_atomic(path, "".join(t.to_json() + "\n" for t in traces))


def read_answers(path: Path) -> list[AnswerTrace]:
    out = []
    with open(path, encoding="utf-8") as f:
        for line, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                out.append(AnswerTrace.from_json(json.loads(text)))
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{line}: not an answer trace ({e})") from None
    return out
