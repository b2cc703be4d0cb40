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

import hydra
from omegaconf import DictConfig

from sweep.cli.exits import BAD_INPUT, FAILED, run_with_exits
from sweep.generate.run import GenerationError
from sweep.generate import generating
from sweep.hydrakit.config import CONF_DIR, register
from sweep.hydrakit.overrides import check_command_line
from sweep.llm import LLMError
from sweep.llm.resume import stop_interrupted

register()


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="generate")
def _entry(cfg: DictConfig) -> None:
    status = run_with_exits("generate", lambda: generating.run(cfg),
                            {generating.BAD_INPUT: BAD_INPUT, (LLMError, GenerationError): FAILED})
    if status:
        raise SystemExit(status)


def main() -> None:
    check_command_line("generate", "generate")
    try:
        _entry()
    except KeyboardInterrupt:
        stop_interrupted("generate", generating.cache_root)


if __name__ == "__main__":
    main()
