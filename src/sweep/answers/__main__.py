"""``python -m sweep.answers SWEEP_DIR``: do the answers hold up?

    python -m sweep.answers outputs/sweep/2026-12-01_10-00-00 llm.base_url=http://localhost:11434/v1 \\
        llm.model=qwen2.5:7b settings=[recommended,best]

For each chosen setting of a finished sweep, every query is answered by an
LLM from exactly the chunks that setting retrieved, and every answer is judged
(faithful, relevant, correct). Writes ``SWEEP_DIR/answers/``; the LLM client,
its ``llm`` config group and its answer cache are ``sweep.generate``'s. A
setting's results stay in ``answers/`` until that setting is answered again,
so the files cover every setting answered so far.

Exit status: 0 when every request got an answer; 2 for bad input found
before any request; 1 when the endpoint failed outright (unreachable, a
rejected key, an unknown model); 3 when requests got no answer after their
retries: the results are written with those queries counted as
``no_answer`` or ``judge_failed`` (nothing is written when no question got
an answer at all), and the same command run again sends only the requests
the cache does not hold; 130 on Ctrl-C.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import hydra
from omegaconf import DictConfig
from omegaconf.errors import InterpolationResolutionError

from sweep.answers import answering
from sweep.cli.exits import BAD_INPUT, run_with_exits
from sweep.hydrakit.config import CONF_DIR, register
from sweep.hydrakit.overrides import check_command_line
from sweep.llm.resume import ResumeInfo, stop_interrupted


def _hydra_main(resume: ResumeInfo) -> Callable[[], None]:
    """Hydra's entry: one run, which tells ``resume`` where it caches its answers."""

    @hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="answers")
    def _entry(cfg: DictConfig) -> None:
        status = run_with_exits(
            "answers",
            lambda: answering.run_answers(cfg, resume),
            {InterpolationResolutionError: BAD_INPUT},
        )  # a ${...} that cannot resolve
        if status:
            raise SystemExit(status)

    return _entry


def _positional_sweep_dir(argv: list[str]) -> list[str]:
    """``SWEEP_DIR`` as the first argument without ``=`` becomes ``sweep_dir=SWEEP_DIR``."""
    out, seen = [], False
    for arg in argv:
        if not seen and not arg.startswith("-") and "=" not in arg:
            quoted = arg.replace("\\", "\\\\").replace("'", "\\'")
            out.append(f"sweep_dir='{quoted}'")
            seen = True
        else:
            out.append(arg)
    return out


def main() -> None:
    sys.argv[1:] = _positional_sweep_dir(sys.argv[1:])
    register()  # resolvers and code-defined nodes, before any config is composed
    check_command_line("answers", "answers")
    resume = ResumeInfo()
    try:
        _hydra_main(resume)()
    except KeyboardInterrupt:
        stop_interrupted("answers", resume.cache_root)


if __name__ == "__main__":
    main()
