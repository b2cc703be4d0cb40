"""How well sweep's sentence rules find sentence ends, per language, next to the old rule.

    python bench/sentence_accuracy.py [--show-errors]

Each file ``tests/fixtures/sentences/LANG.txt`` holds a labelled sample: one sentence a
line, joined into a text the way the language writes it (Japanese and Chinese without a
space, Russian and English with one). A line starting with a list mark (``・``, ``- ``)
is a list item: a line break comes before and after it. A blank line is a paragraph
break. The true boundaries are where each sentence but the first starts.

Printed per language: precision, recall and F1 of the cuts of ``sentence_cuts`` with
the language's rule (``sentence_rule``, the language as ``detect_language`` tells it
from the text) and with the old rule every language was cut by (:data:`SENTENCE_ENDS`).
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

from sweep.core.text.languages import detect_language
from sweep.core.text.sentences import SENTENCE_ENDS, SentenceEnds, sentence_cuts, sentence_rule

SAMPLES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "sentences"
LANGUAGES = ("ja", "zh", "ru", "en")
_ITEM = re.compile(r"(?:[・•]|- )")
_UNSPACED = ("ja", "zh")


@dataclass(frozen=True)
class Sample:
    language: str
    text: str
    boundaries: frozenset[int]


@dataclass(frozen=True)
class Score:
    precision: float
    recall: float
    f1: float
    false_cuts: tuple[int, ...]
    missed: tuple[int, ...]


def sample(language: str) -> Sample:
    """The labelled text of ``language``: the joined sentences and where each starts."""
    lines = (SAMPLES / f"{language}.txt").read_text(encoding="utf-8").split("\n")
    space = "" if language in _UNSPACED else " "
    text = ""
    starts: list[int] = []
    previous_item = False
    paragraph = False
    for line in lines:
        if not line.strip():
            paragraph = bool(text)
            continue
        item = _ITEM.match(line) is not None
        if text:
            text += "\n\n" if paragraph else "\n" if item or previous_item else space
            starts.append(len(text))
        text += line
        previous_item, paragraph = item, False
    return Sample(language, text, frozenset(starts))


def score(found: list[int], sample: Sample) -> Score:
    # A cut before the line break that ends a sentence and one after it are one boundary.
    cuts = {len(sample.text[:c]) + _gap(sample.text, c) for c in found}
    hits = len(cuts & sample.boundaries)
    precision = hits / len(cuts) if cuts else 1.0
    recall = hits / len(sample.boundaries) if sample.boundaries else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Score(
        precision,
        recall,
        f1,
        tuple(sorted(cuts - sample.boundaries)),
        tuple(sorted(sample.boundaries - cuts)),
    )


def _gap(text: str, pos: int) -> int:
    return len(text[pos:]) - len(text[pos:].lstrip())


def measure(sample: Sample, rule: SentenceEnds) -> Score:
    return score(sentence_cuts(sample.text, 0, len(sample.text), rule), sample)


def _context(text: str, pos: int) -> str:
    return (text[max(0, pos - 25) : pos] + "‖" + text[pos : pos + 15]).replace("\n", "⏎")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show-errors", action="store_true", help="print every wrong cut")
    args = parser.parse_args()
    print(f"{'lang':<5}{'detected':<10}{'sentences':>10}  {'rule':<5}{'P':>7}{'R':>7}{'F1':>7}")
    for language in LANGUAGES:
        s = sample(language)
        detected = detect_language(s.text)
        for name, rule in (("new", sentence_rule(s.text)), ("old", SENTENCE_ENDS)):
            r = measure(s, rule)
            print(
                f"{language:<5}{detected:<10}{len(s.boundaries) + 1:>10}  {name:<5}"
                f"{r.precision:>7.3f}{r.recall:>7.3f}{r.f1:>7.3f}"
            )
            if args.show_errors:
                for pos in r.false_cuts:
                    print(f"      false cut: {_context(s.text, pos)}")
                for pos in r.missed:
                    print(f"      missed:    {_context(s.text, pos)}")


if __name__ == "__main__":
    main()
