"""``python -m sweep.generate``: write an evaluation set for a corpus with an LLM.

    python -m sweep.generate dataset.path=my-docs llm.base_url=http://localhost:11434/v1 \\
        llm.model=qwen2.5:7b generate.n=200 generate.out=my-set-synth

Hydra composes ``conf/generate.yaml`` (groups ``dataset``, ``embed``, ``llm``
and the ``generate`` node); this module builds the plain objects and hands
them to :func:`sweep.generate.run.generate`.

Exit status: 0 when the set is written (also when the filters left it short
of ``generate.n``: a rerun would not change it); 1 when no question was kept
or the endpoint failed outright (unreachable, a rejected key, an unknown
model); 2 for bad input found before any request; 3 when requests got no
answer after their retries and the set is short for that reason: it is
written as incomplete, and the same command run again sends only what the
answer cache does not hold; 130 on Ctrl-C.
"""

from __future__ import annotations

from collections.abc import Callable

import hydra
from omegaconf import DictConfig
from omegaconf.errors import InterpolationResolutionError

from sweep.cli.exits import BAD_INPUT, run_with_exits
from sweep.generate import generating
from sweep.hydrakit.config import CONF_DIR, register
from sweep.hydrakit.overrides import check_command_line
from sweep.llm.resume import ResumeInfo, stop_interrupted


def _hydra_main(resume: ResumeInfo) -> Callable[[], None]:
    """Hydra's entry: one run, which tells ``resume`` where it caches its answers."""

    @hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="generate")
    def _entry(cfg: DictConfig) -> None:
        # a ${...} in the config that cannot resolve is bad input
        status = run_with_exits(
            "generate",
            lambda: generating.run_generate(cfg, resume),
            {InterpolationResolutionError: BAD_INPUT},
        )
        if status:
            raise SystemExit(status)

    return _entry


def main() -> None:
    register()  # resolvers and code-defined nodes, before any config is composed
    check_command_line("generate", "generate")
    resume = ResumeInfo()
    try:
        _hydra_main(resume)()
    except KeyboardInterrupt:
        stop_interrupted("generate", resume.cache_root)


if __name__ == "__main__":
    main()
