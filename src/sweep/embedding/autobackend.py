"""``embed.backend=auto``, the default: the fastest runtime that keeps the model's rankings,
measured on this CPU with the corpus's own chunks and questions.

The first time a model runs on a CPU (with these library versions), a probe

1. embeds a sample of the chunks (up to :data:`PROBE_TEXTS`, spread over the corpus) and
   of the questions (up to :data:`PROBE_QUERIES`) with torch in float32, the reference,
   timing the chunks;
2. does the same with each candidate runtime that is installed (:data:`CANDIDATES`), its
   export made once and kept;
3. keeps a candidate only when every sampled text's vector has a cosine of at least
   :data:`MIN_COSINE` with torch's, and the sampled questions' top-10 chunks (among the
   sampled ones) overlap torch's by at least :data:`MIN_OVERLAP` on average: bfloat16
   products legitimately reorder near-ties, which a rule of "identical top 10" would
   refuse for no change in any score;
4. picks the fastest kept runtime when it beats torch by :data:`MARGIN`, else torch.

A probe costs ~10 s (the reference's sample, and the candidate's export). A sweep that
embeds fewer distinct texts than ``embed.probe_min_texts`` cannot win that back: it runs
torch, and the record of that decision keeps every job of the sweep on torch until a sweep
with more to embed measures. By default that is :func:`default_probe_min_texts`: fewer
texts where the CPU computes bfloat16, where OpenVINO was 2.2-3x torch, than elsewhere,
where it was 1.06-1.4x and a short probe barely tells it from torch.

The choice, the figures behind it and when they were measured are kept as JSON beside the
exports (``auto/<key>.json``), the key being the model's weights, ``max_seq_length``,
normalization, device, thread cap, the CPU (its name and instruction sets), the versions
of the runtimes and this probe's :data:`REVISION`: a later sweep reads the choice and loads
no model to make it, and another CPU or an upgraded runtime is probed anew.

A probe that cannot run a candidate (not installed, its export fails) leaves it out and
says why once; torch, the reference, always runs.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from sweep.core.cpu import cpu_summary, instruction_sets
from sweep.core.files import write_text_atomic
from sweep.core.messages import first_line

__all__ = [
    "AUTO",
    "CANDIDATES",
    "MARGIN",
    "MIN_COSINE",
    "MIN_OVERLAP",
    "BackendChoice",
    "Measured",
    "Probe",
    "Runtime",
    "choice_key",
    "default_probe_min_texts",
    "keep_choice",
    "kept_choice",
    "pick_runtime",
    "probe",
    "runtime_agreement",
    "say_once",
    "spread",
    "too_few",
]

log = logging.getLogger(__name__)

AUTO = "auto"
#: What ``auto`` tries besides torch. ONNX Runtime is not among them: in every measurement
#: (AVX2 EPYC, Zen 4 with AVX-512 BF16, Xeon with AMX; docs/embedding.md) it was slower
#: than OpenVINO with vectors as exact, and each candidate costs the first sweep an export.
#: ``onnx-int8`` changes the vectors by design (cosine 0.999 with torch's), below what
#: ``auto`` keeps. Either is still run when named: ``embed.backend=onnx``.
CANDIDATES = ("openvino",)
#: Every sampled text's vector stays this close to torch float32's (cosine).
MIN_COSINE = 0.9999
#: Mean share of each sampled question's top :data:`OVERLAP_K` that stays the same.
MIN_OVERLAP = 0.99
OVERLAP_K = 10
#: A runtime must be this much faster than torch to be chosen: closer than that is within
#: what a probe of a few seconds measures on a shared machine.
MARGIN = 1.05
PROBE_TEXTS = 48
#: Distinct texts a sweep must embed for a probe to pay for itself, where the CPU computes
#: bfloat16 (AVX-512 BF16, AMX): a probe costs ~10 s, and OpenVINO in bfloat16 saves ~25 ms
#: a text on 2 cores (2.2-3x torch).
PROBE_MIN_TEXTS_BF16 = 1000
#: The same elsewhere: OpenVINO in float32 saved ~3 ms a text (1.06-1.4x torch on an AVX2
#: EPYC), so a cold sweep of the bundled corpus (2,485 texts) lost as much to the probe as
#: it won (auto against torch, four interleaved pairs: +3.7, -1.9, +6.6 and, when the probe
#: measured openvino within the margin and kept torch, +17 s).
PROBE_MIN_TEXTS_OTHER = 5000
_BF16 = {"avx512_bf16", "amx_bf16"}
PROBE_QUERIES = 96
#: Texts embedded before the timed pass (the first call of a runtime allocates).
_WARMUP = 4
#: Of the probe's rule: a changed rule probes anew.
REVISION = 1
#: The packages whose versions change which runtime is fastest or what it computes.
_VERSIONED = ("torch", "openvino", "onnxruntime", "sentence-transformers", "transformers")
_FOLDER = "auto"

_LOCK = threading.Lock()
#: Choices made or read in this process, by key; and the keys whose line was said.
_CHOICES: dict[str, BackendChoice] = {}
_SAID: set[tuple[str, BackendChoice]] = set()


@dataclass(frozen=True)
class Runtime:
    """A backend the probe runs: ``load`` makes its export and loads it (raising when it
    cannot), ``encode`` embeds texts as the embedder would, ``precision`` names what it
    computes in once loaded."""

    name: str
    load: Callable[[], Any]
    encode: Callable[[list[str]], np.ndarray]
    precision: Callable[[], str]


@dataclass(frozen=True)
class Measured:
    """One runtime's figures in a probe, against torch float32: texts per second on the
    sampled chunks, the lowest cosine over every sampled text and question, the mean top-10
    overlap; ``problem`` says why it could not run or was not kept."""

    backend: str
    precision: str = "?"
    texts_per_s: float | None = None
    min_cosine: float | None = None
    overlap: float | None = None
    problem: str | None = None

    @property
    def faithful(self) -> bool:
        """Ran, and kept torch's vectors and rankings within the tolerance."""
        return (
            self.problem is None
            and self.texts_per_s is not None
            and self.min_cosine is not None
            and self.overlap is not None
            and self.min_cosine >= MIN_COSINE
            and self.overlap >= MIN_OVERLAP
        )


@dataclass(frozen=True)
class BackendChoice:
    """What ``auto`` chose and why: the chosen backend and its precision, every runtime's
    figures (torch first), how many chunks and questions the probe sampled (no questions:
    the chunks stood in for them), when, and on what CPU."""

    backend: str
    precision: str
    measured: tuple[Measured, ...]
    texts: int
    queries: int
    probed: str
    cpu: str
    #: Set when nothing was measured: the sweep embedded fewer than this many texts.
    below: int | None = None

    @property
    def measured_here(self) -> bool:
        """Whether a probe measured the runtimes (else torch ran for want of texts)."""
        return self.below is None

    @property
    def speedup(self) -> float:
        """The chosen runtime's texts per second over torch's."""
        rates = {m.backend: m.texts_per_s for m in self.measured}
        torch_rate, chosen = rates.get("torch"), rates.get(self.backend)
        if not torch_rate or not chosen:
            return 1.0
        return chosen / torch_rate

    def line(self) -> str:
        """The one line a sweep prints:
        ``backend auto → openvino (f32): 1.31× torch on this CPU, cosine ≥ 0.99999, top-10
        unchanged on 96 questions; probed 2026-12-06 02:10 UTC``."""
        asked = f"{self.queries} questions" if self.queries else f"{self.texts} chunks"
        head = f"backend auto → {self.backend} ({self.precision})"
        if self.below is not None:
            return (
                f"{head}: {self.texts} distinct texts to embed, fewer than the {self.below} "
                "a probe of the faster runtimes needs to pay for itself on this CPU "
                f"(embed.probe_min_texts); decided {self.probed}"
            )
        if self.backend != "torch":
            chosen = next(m for m in self.measured if m.backend == self.backend)
            overlap = (
                f"top-{OVERLAP_K} unchanged"
                if chosen.overlap is not None and chosen.overlap >= 1.0
                else f"top-{OVERLAP_K} overlap {chosen.overlap:.3f}"
            )
            why = (
                f"{self.speedup:.2f}× torch on this CPU, cosine ≥ {chosen.min_cosine:.5f}, "
                f"{overlap} on {asked}"
            )
        else:
            others = [m for m in self.measured if m.backend != "torch"]
            rate = self.measured[0].texts_per_s
            why = "; ".join(_why_not(m, rate) for m in others) or "no other runtime is installed"
        return f"{head}: {why}; probed {self.probed}"

    def to_json(self) -> dict[str, Any]:
        return {"format": 1, **asdict(self)}

    @classmethod
    def from_json(cls, data: Any) -> BackendChoice:
        """A kept choice; ``ValueError`` when it is not one."""
        if not isinstance(data, dict) or data.get("format") != 1:
            raise ValueError("not a kept backend choice")
        measured = tuple(
            Measured(
                backend=str(m["backend"]),
                precision=str(m["precision"]),
                texts_per_s=_number(m.get("texts_per_s")),
                min_cosine=_number(m.get("min_cosine")),
                overlap=_number(m.get("overlap")),
                problem=None if m.get("problem") is None else str(m["problem"]),
            )
            for m in data["measured"]
        )
        choice = cls(
            backend=str(data["backend"]),
            precision=str(data["precision"]),
            measured=measured,
            texts=int(data["texts"]),
            queries=int(data["queries"]),
            probed=str(data["probed"]),
            cpu=str(data["cpu"]),
            below=None if data.get("below") is None else int(data["below"]),
        )
        if choice.backend not in {m.backend for m in measured}:
            raise ValueError(f"the chosen backend {choice.backend!r} was not measured")
        return choice


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"not a number: {value!r}")
    return float(value)


def _why_not(m: Measured, torch_rate: float | None) -> str:
    """Why ``auto`` did not choose ``m`` over torch (running at ``torch_rate`` texts/s)."""
    name = f"{m.backend} ({m.precision})"
    if m.problem is not None:
        return f"{name}: {m.problem}"
    if m.min_cosine is not None and m.min_cosine < MIN_COSINE:
        return f"{name} moves vectors to a cosine of {m.min_cosine:.5f} (< {MIN_COSINE})"
    if m.overlap is not None and m.overlap < MIN_OVERLAP:
        return f"{name} changes rankings (top-{OVERLAP_K} overlap {m.overlap:.3f} < {MIN_OVERLAP})"
    ratio = (m.texts_per_s or 0) / torch_rate if torch_rate else 0.0
    return f"{name} ran at {ratio:.2f}× torch here, below the {MARGIN:.2f}× worth switching for"


def pick_runtime(measured: Sequence[Measured]) -> Measured:
    """The runtime ``auto`` runs: the fastest faithful one if it beats torch (the first of
    ``measured``) by :data:`MARGIN`, else torch."""
    reference = measured[0]
    assert reference.backend == "torch", "torch is the reference"
    best = reference
    for m in measured[1:]:
        if m.faithful and (best.texts_per_s or 0) < (m.texts_per_s or 0):
            best = m
    if best is reference or not reference.texts_per_s:
        return reference
    return best if best.texts_per_s >= MARGIN * reference.texts_per_s else reference


def spread(items: Sequence[str], limit: int) -> list[str]:
    """Up to ``limit`` of ``items``, spread evenly over them (first and last included)."""
    if len(items) <= limit:
        return list(items)
    at = np.unique(np.linspace(0, len(items) - 1, num=limit).round().astype(np.int64))
    return [items[i] for i in at]


def _unit(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float64)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def _top(queries: np.ndarray, texts: np.ndarray, k: int) -> np.ndarray:
    scores = queries @ texts.T
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def runtime_agreement(
    reference: tuple[np.ndarray, np.ndarray], candidate: tuple[np.ndarray, np.ndarray]
) -> tuple[float, float]:
    """The lowest cosine between the two runtimes' vectors of the same texts and questions,
    and the mean share of each question's top-10 texts both runtimes rank there."""
    ref_t, ref_q = (_unit(v) for v in reference)
    got_t, got_q = (_unit(v) for v in candidate)
    cosines = np.concatenate([(ref_t * got_t).sum(axis=1), (ref_q * got_q).sum(axis=1)])
    k = min(OVERLAP_K, len(ref_t))
    if k == 0 or len(ref_q) == 0:
        return float(cosines.min(initial=1.0)), 1.0
    want, got = _top(ref_q, ref_t, k), _top(got_q, got_t, k)
    shared = [len(set(a) & set(b)) / k for a, b in zip(want.tolist(), got.tolist())]
    return float(cosines.min()), float(np.mean(shared))


@dataclass(frozen=True)
class Probe:
    """A probe's choice, the texts and queries it sampled, and the chosen runtime's vectors
    of them (worth keeping: they are the corpus's own)."""

    choice: BackendChoice
    texts: list[str]
    queries: list[str]
    text_vectors: np.ndarray
    query_vectors: np.ndarray


def probe(
    reference: Runtime, candidates: Sequence[Runtime], texts: Sequence[str], queries: Sequence[str]
) -> Probe:
    """Measure ``reference`` (torch float32) and each candidate on samples of ``texts`` and
    ``queries`` (no queries: the sampled texts stand in for them)."""
    sample = spread(list(dict.fromkeys(texts)), PROBE_TEXTS)
    if not sample:
        raise ValueError("the probe needs at least one text")
    asked = spread(list(dict.fromkeys(queries)), PROBE_QUERIES)
    stand_in = asked or sample
    reference.load()
    reference.encode(sample[:_WARMUP])
    running, problems = [reference], {}
    for runtime in candidates:
        try:
            runtime.load()
            runtime.encode(sample[:_WARMUP])
        except Exception as exc:  # a runtime that cannot run here is left out, not fatal
            problems[runtime.name] = Measured(
                runtime.name, _precision_or(runtime), problem=first_line(exc)
            )
            continue
        running.append(runtime)
    # Timed in turns over two halves of the sample, so a change in the machine's load
    # while the probe runs slows every runtime alike.
    seconds = dict.fromkeys((r.name for r in running), 0.0)
    parts: dict[str, list[np.ndarray]] = {r.name: [] for r in running}
    half = (len(sample) + 1) // 2
    for part in (sample[:half], sample[half:]):
        if not part:
            continue
        for runtime in running:
            start = time.perf_counter()
            parts[runtime.name].append(runtime.encode(part))
            seconds[runtime.name] += time.perf_counter() - start
    vectors = {r.name: (np.concatenate(parts[r.name]), r.encode(stand_in)) for r in running}
    ref_vectors = vectors["torch"]
    measured = []
    for runtime in (reference, *candidates):
        if runtime.name in problems:
            measured.append(problems[runtime.name])
            continue
        rate = len(sample) / max(seconds[runtime.name], 1e-9)
        cosine, overlap = runtime_agreement(ref_vectors, vectors[runtime.name])
        measured.append(Measured(runtime.name, runtime.precision(), rate, cosine, overlap))
    chosen = pick_runtime(measured)
    choice = BackendChoice(
        chosen.backend,
        chosen.precision,
        tuple(measured),
        len(sample),
        len(asked),
        _now(),
        cpu_summary(),
    )
    vt, vq = vectors[chosen.backend]
    return Probe(choice, sample, asked, vt, vq if asked else vq[:0])


def default_probe_min_texts() -> int:
    """Distinct texts a sweep must embed before ``auto`` probes, on this CPU."""
    return PROBE_MIN_TEXTS_BF16 if _BF16 & set(instruction_sets()) else PROBE_MIN_TEXTS_OTHER


def too_few(texts: int, minimum: int) -> BackendChoice:
    """torch, decided without a probe: ``texts`` distinct texts to embed, under ``minimum``."""
    return BackendChoice(
        "torch", "fp32", (Measured("torch", "fp32"),), texts, 0, _now(), cpu_summary(), minimum
    )


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _precision_or(runtime: Runtime) -> str:
    try:
        return runtime.precision()
    except Exception:
        return "?"


@functools.lru_cache(maxsize=1)
def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in _VERSIONED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def choice_key(facts: Mapping[str, Any]) -> str:
    """The key a choice is kept under: ``facts`` (the model's weights, max_seq_length,
    normalization, device, thread cap) with the CPU, the runtimes' versions, the
    candidates and the probe's revision."""
    from sweep.core.cpu import cpu_name

    material = {
        **facts,
        "cpu": cpu_name(),
        "instruction_sets": list(instruction_sets()),
        "versions": dict(_versions()),
        "candidates": list(CANDIDATES),
        "revision": REVISION,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:32]


def kept_choice(folder: Path | None, key: str) -> BackendChoice | None:
    """The choice made for ``key`` in this process, else kept in ``folder``; None when
    there is none (a damaged file is none: the probe runs again and replaces it)."""
    with _LOCK:
        found = _CHOICES.get(key)
    if found is not None or folder is None:
        return found
    path = folder / _FOLDER / f"{key}.json"
    try:
        found = BackendChoice.from_json(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("%s: %s; the backends are probed again", path, first_line(exc))
        return None
    with _LOCK:
        _CHOICES.setdefault(key, found)
    return found


def keep_choice(folder: Path | None, key: str, choice: BackendChoice) -> None:
    """Remember ``choice`` in this process and, when ``folder`` is given, on disk (a disk
    that refuses it costs the next sweep a probe, nothing else)."""
    with _LOCK:
        _CHOICES[key] = choice
    if folder is None:
        return
    try:
        (folder / _FOLDER).mkdir(parents=True, exist_ok=True)
        write_text_atomic(
            folder / _FOLDER / f"{key}.json", json.dumps(choice.to_json(), indent=2) + "\n"
        )
    except OSError as exc:
        log.warning("cannot keep the backend choice in %s: %s", folder, first_line(exc))


def say_once(key: str, choice: BackendChoice) -> None:
    """Log the choice's line, once per process, key and choice."""
    with _LOCK:
        if (key, choice) in _SAID:
            return
        _SAID.add((key, choice))
    log.info("%s", choice.line())
