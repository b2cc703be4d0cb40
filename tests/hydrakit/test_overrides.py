"""``sweep.hydrakit.overrides``: unknown keys and group options on the command line, before Hydra."""

import pytest

from sweep.hydrakit.config import CONF_DIR, register
from sweep.hydrakit.overrides import UnknownKey, check_overrides, command_overrides, expand_grid

register()


def _check(*args: str) -> None:
    check_overrides(str(CONF_DIR), "config", list(args))


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ("chunk.sise=128",),
            "unknown setting chunk.sise (did you mean chunk.size?); "
            "chunk has: breakpoint_percentile, buffer_size, min_unit_tokens, overlap",
        ),
        (
            ("chunks.size=3",),
            "unknown setting chunks (did you mean chunk.size?); "
            "the top-level keys are: chunk, context, dataset",
        ),
        (("eval.kk=3,5",), "unknown setting eval.kk (did you mean eval.k?)"),
        (
            ("chunk=token,sematic",),
            "unknown chunk option 'sematic' (did you mean chunk=semantic?); "
            "the options are: callable, chonkie, langchain",
        ),
        (
            ("hydra/launcher=jobilb",),
            "unknown hydra/launcher option 'jobilb' (did you mean hydra/launcher=joblib?)",
        ),
        (("experiment=gird",), "unknown experiment option 'gird' (did you mean experiment=grid?)"),
    ],
)
def test_a_typo_is_named_with_the_closest_key(args, message):
    with pytest.raises(UnknownKey) as err:
        _check(*args)
    assert str(err.value).startswith(message)
    assert "_target_" not in str(err.value)


@pytest.mark.parametrize(
    "config, old, new",
    [
        ("config", "embed.cache_dir=off", "runtime.cache_dir"),
        ("config", "embed.show_progress=false", "runtime.show_progress"),
        ("config", "embed.prewarm=true", "runtime.prewarm"),
        ("generate", "embed.cache_dir=/tmp/x", "runtime.cache_dir"),
        # issue 43: contextual headers and parent retrieval are nodes of their own
        ("config", "chunk.context=llm", "context.mode"),
        ("config", "chunk.context_prompt='{document} {chunk}'", "context.prompt"),
        ("config", "chunk.context_max_tokens=100", "context.max_tokens"),
        ("config", "chunk.context_confirm=true", "context.confirm"),
        ("config", "chunk.context_confirm_above=5", "context.confirm_above"),
        ("config", "retrieve.parent=section", "parent.mode"),
        ("config", "retrieve.parent_size=256", "parent.size"),
    ],
)
def test_a_key_that_moved_is_told_its_new_place(config, old, new):
    with pytest.raises(UnknownKey) as err:
        check_overrides(str(CONF_DIR), config, [old])
    assert str(err.value).startswith(f"{old.split('=')[0]} is now {new}")
    check_overrides(str(CONF_DIR), config, [f"{new}={old.split('=')[1]}"])


def test_a_moved_key_is_told_in_one_line_whichever_retriever_or_chunker():
    for args in (
        ("retrieve=bm25", "retrieve.parent_size=3"),
        ("chunk=langchain", "chunk.context=llm"),
    ):
        with pytest.raises(UnknownKey) as err:
            _check(*args)
        assert " is now " in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "args, says",
    [
        (
            ("rerank=none,cross_encoder", "rerank.model=/models/ce"),
            "rerank.model is a setting of rerank=cross_encoder, which rerank=none does not have; a key "
            "on the command line is set for every rerank option swept, so give it in a preset of your "
            "own instead",
        ),
        (
            ("rerank.top_n=50",),
            "rerank.top_n is a setting of rerank=cross_encoder, which rerank's "
            "default option does not have: choose rerank=cross_encoder",
        ),
    ],
)
def test_rerank_none_has_no_settings_and_says_whose_they_are(args, says):
    # rerank=none used to carry cross_encoder's keys, unused, so that they could be set on
    # both arms; it has none now, and the key is named with the option that has it.
    with pytest.raises(UnknownKey) as err:
        _check(*args)
    assert str(err.value).startswith(says)
    _check("rerank=cross_encoder", "rerank.model=/models/ce", "rerank.top_n=50")


@pytest.mark.parametrize(
    "args, says",
    [
        (
            ("chunk=langchain", "chunk.splitter.chunk_size=800,1600"),
            "chunk.splitter.chunk_size is set through chunk.size (the config hands chunk.size to "
            "it): write chunk.size=... instead",
        ),
        (
            ("chunk=langchain_token", "chunk.splitter.chunk_overlap=32"),
            "chunk.splitter.chunk_overlap is set through chunk.overlap",
        ),
        (
            ("chunk=semchunk", "chunk.call.overlap=32"),
            "chunk.call.overlap is set through chunk.overlap",
        ),
    ],
)
def test_a_splitters_size_is_set_through_chunk_size(args, says):
    with pytest.raises(UnknownKey) as err:
        _check(*args)
    assert str(err.value).startswith(says)


@pytest.mark.parametrize(
    "args",
    [
        ("chunk.size=128,256", "chunk.overlap=0,64"),
        ("chunk=token,langchain", "chunk.size=128,256"),
        ("chunk=semantic", "chunk.breakpoint_percentile=80"),
        ("experiment=grid",),
        ("+chunk.extra=1",),  # adding a key on purpose is Hydra's business
        ("~chunk.buffer_size",),
        ("hydra.sweep.dir=/tmp/x", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"),
        ("eval=default", "eval.k=[1,5]"),
        ("chunk.size=",),  # syntax and empty values: Hydra says what is wrong
        ("--help",),
        ("--cfg", "job", "chunk.sise=1"),  # not a run: nothing to check
    ],
)
def test_valid_and_not_ours_to_check_pass(args):
    _check(*args)


def test_flags_are_not_overrides():
    assert command_overrides(["-m", "chunk.size=1"]) == ["chunk.size=1"]
    assert command_overrides(["--hydra-help"]) is None
    assert command_overrides(["--config-name=other", "x=1"]) is None


@pytest.mark.parametrize(
    "config, args, message",
    [
        ("generate", ("generate.nn=3",), "unknown setting generate.nn (did you mean generate.n?)"),
        (
            "answers",
            ("sweep_dir=x", "answers.kk=3"),
            "unknown setting answers.kk (did you mean answers.k?)",
        ),
        ("answers", ("llm=locl",), "unknown llm option 'locl' (did you mean llm=local?)"),
    ],
)
def test_generate_and_answers_check_their_own_keys(config, args, message):
    with pytest.raises(UnknownKey) as err:
        check_overrides(str(CONF_DIR), config, list(args))
    assert str(err.value).startswith(message)


@pytest.mark.parametrize(
    "command, args, line",
    [
        ("sweep.generate", ["generate.nn=3"], "generate: error: unknown setting generate.nn"),
        (
            "sweep.answers",
            ["some/sweep", "answers.kk=3"],
            "answers: error: unknown setting answers.kk",
        ),
    ],
)
def test_the_llm_commands_name_a_typo_before_hydra_runs(tmp_path, command, args, line):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", command, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(line)


def test_a_mistyped_key_never_repeats_its_value():
    # The value may be the secret itself: a URL with a password, a pasted key.
    for typo in ("llm.base_ur=https://bob:hunter2@h/v1", "llm.api_kye_env=gsk_abc123secret"):
        with pytest.raises(UnknownKey) as err:
            check_overrides(str(CONF_DIR), "generate", [typo])
        assert "hunter2" not in str(err.value) and "gsk_" not in str(err.value)


def test_configs_of_the_users_own_are_left_to_hydra(tmp_path):
    (tmp_path / "chunk").mkdir()
    (tmp_path / "chunk" / "mine.yaml").write_text("_target_: my.Chunker\nwidth: 3\n")
    _check(f"hydra.searchpath=[file://{tmp_path}]", "chunk=mine", "chunk.width=4")


def test_expand_grid_gives_every_job_its_overrides():
    jobs = expand_grid(["chunk.size=128,256,512", "chunk.overlap=0,64"])
    assert len(jobs) == 6 and jobs[0] == ["chunk.size=128", "chunk.overlap=0"]
    assert expand_grid(["chunk.size=256"]) == [["chunk.size=256"]]
    assert len(expand_grid(["chunk.size=range(100,400,100)", "eval.gain=linear"])) == 3
    assert expand_grid([]) == [[]]
