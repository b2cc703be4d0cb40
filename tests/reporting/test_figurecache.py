"""Pictures drawn before are copied, not drawn again: by exactly what they show."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.reporting import drawing, figurecache
from sweep.reporting.drawing import Cell, heatmap, length_histograms, rank_histograms
from sweep.reporting.figurecache import FigureCache, fingerprint

PNG = b"\x89PNG\r\n\x1a\n"


def _grid(shift: float = 0.0) -> list[Cell]:
    return [
        Cell("", s, o, 0.4 + 0.1 * i + 0.02 * j + shift, 0.3, 0.9)
        for i, s in enumerate((128, 256, 512))
        for j, o in enumerate((0, 64))
    ]


def _count_draws(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = drawing.heatmap_figure

    def counted(cells, *, title):
        calls.append(title)
        return real(cells, title=title)

    monkeypatch.setattr(drawing, "heatmap_figure", counted)
    return calls


# -- the hash ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b",
    [
        (1, 1.0),
        (1, "1"),
        (1, True),
        (0.1, float(np.nextafter(0.1, 1.0))),
        ((1, 2), [1, 2]),
        ((1, 2), (2, 1)),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # panel order is drawn
        (np.array([1, 2], dtype=np.int64), np.array([1, 2], dtype=np.int32)),
        (np.array([[1, 2]]), np.array([1, 2])),
        (Cell("", 128, 0, 0.5), Cell("", 128, 0, 0.5, note="x")),
        ("a", "b"),
        (None, "None"),
    ],
)
def test_different_inputs_have_different_fingerprints(a, b):
    assert fingerprint(a) != fingerprint(b)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=12,
    )
)
def test_the_fingerprint_is_a_function_of_the_value(value):
    assert fingerprint(value) == fingerprint(value)
    assert fingerprint(value) != fingerprint([value])


def test_a_value_it_cannot_hash_is_drawn_not_cached(tmp_path):
    cache = FigureCache(tmp_path / "figures")
    assert cache.key(object()) is None
    with pytest.raises(TypeError):
        fingerprint({1, 2})


# -- drawing through the cache ---------------------------------------------------------------


def test_the_same_picture_is_copied_and_another_is_drawn(tmp_path, monkeypatch):
    draws = _count_draws(monkeypatch)
    cache = FigureCache(tmp_path / "figures")
    first = heatmap(tmp_path / "a" / "h.png", _grid(), title="span recall@5", cache=cache)
    (kept,) = cache.files()
    assert draws == ["span recall@5"] and kept.read_bytes() == first.read_bytes()
    again = heatmap(tmp_path / "b" / "h.png", _grid(), title="span recall@5", cache=cache)
    assert draws == ["span recall@5"]  # not drawn again
    assert again.read_bytes() == first.read_bytes()
    assert not list(again.parent.glob("*.tmp.png"))
    # Any change of what is shown is another picture.
    heatmap(tmp_path / "c" / "h.png", _grid(), title="doc recall@5", cache=cache)
    heatmap(tmp_path / "d" / "h.png", _grid(shift=1e-9), title="span recall@5", cache=cache)
    assert len(draws) == 3 and len(cache.files()) == 3
    # Without a cache, every call draws.
    heatmap(tmp_path / "e" / "h.png", _grid(), title="span recall@5")
    assert len(draws) == 4


def test_a_changed_drawing_module_draws_anew(tmp_path, monkeypatch):
    draws = _count_draws(monkeypatch)
    cache = FigureCache(tmp_path / "figures")
    heatmap(tmp_path / "a.png", _grid(), title="t", cache=cache)
    monkeypatch.setattr(drawing, "_CODE", ("another revision",) + drawing._CODE[1:])
    heatmap(tmp_path / "b.png", _grid(), title="t", cache=cache)
    assert len(draws) == 2 and len(cache.files()) == 2


def test_arrays_and_nested_maps_are_cached_by_value(tmp_path):
    cache = FigureCache(tmp_path / "figures")
    lengths = {"size=128": np.array([120, 128, 64]), "size=256": np.array([250, 256])}
    a = length_histograms(tmp_path / "a.png", lengths, title="t", cache=cache)
    b = length_histograms(
        tmp_path / "b.png", {k: v.copy() for k, v in lengths.items()}, title="t", cache=cache
    )
    assert a.read_bytes() == b.read_bytes() and len(cache.files()) == 1
    length_histograms(
        tmp_path / "c.png", {**lengths, "size=256": np.array([250, 255])}, title="t", cache=cache
    )
    ranks = {"a": {"q1": 1, "q2": 0}, "b": {"q1": 3}}
    rank_histograms(tmp_path / "r.png", ranks, k=5, title="t", cache=cache)
    rank_histograms(tmp_path / "r2.png", ranks, k=5, title="t", cache=cache)
    assert len(cache.files()) == 3


def test_a_damaged_kept_picture_is_drawn_again(tmp_path, monkeypatch, caplog):
    draws = _count_draws(monkeypatch)
    cache = FigureCache(tmp_path / "figures")
    heatmap(tmp_path / "a.png", _grid(), title="t", cache=cache)
    (kept,) = cache.files()
    kept.write_bytes(kept.read_bytes()[:100])  # cut short
    with caplog.at_level(logging.WARNING):
        out = heatmap(tmp_path / "b.png", _grid(), title="t", cache=cache)
    assert len(draws) == 2 and out.read_bytes()[:8] == PNG
    assert "damaged cached picture" in caplog.text
    assert kept.read_bytes() == out.read_bytes()  # kept again, whole


def test_a_cache_that_cannot_be_written_still_draws(tmp_path):
    blocker = tmp_path / "figures"
    blocker.write_text("a file where the folder would be")
    out = heatmap(tmp_path / "a.png", _grid(), title="t", cache=FigureCache(blocker))
    assert out.read_bytes()[:8] == PNG and blocker.read_text().startswith("a file")


def test_nothing_to_draw_keeps_nothing(tmp_path):
    cache = FigureCache(tmp_path / "figures")
    assert heatmap(tmp_path / "h.png", [Cell("", 128, 0, 0.5)], title="t", cache=cache) is None
    assert cache.files() == [] and not (tmp_path / "h.png").exists()


def test_the_least_recently_used_pictures_go_first(tmp_path, monkeypatch):
    import os

    monkeypatch.setattr(figurecache, "MAX_FILES", 5)
    cache = FigureCache(tmp_path / "figures")
    src = tmp_path / "p.png"
    src.write_bytes(PNG + b"\0" * 8 + b"IEND\xaeB`\x82")
    keys = [fingerprint(i) for i in range(5)]
    for n, key in enumerate(keys):
        cache.keep(key, src)
        os.utime(cache.folder / f"{key}.png", (1000 + n, 1000 + n))
    assert cache.fetch(keys[0], tmp_path / "out.png")  # used now: the newest
    cache.keep(fingerprint("sixth"), src)  # 6 > 5: down to 4, oldest first
    left = {p.stem for p in cache.files()}
    assert left == {keys[0], keys[3], keys[4], fingerprint("sixth")}


def test_clear_removes_only_the_kept_pictures(tmp_path):
    cache = FigureCache(tmp_path / "figures")
    heatmap(tmp_path / "a.png", _grid(), title="t", cache=cache)
    (cache.folder / "notes.txt").write_text("mine")
    (cache.folder / "holiday.png").write_bytes(PNG)
    n, size = cache.clear()
    assert n == 1 and size > 0
    assert sorted(p.name for p in cache.folder.iterdir()) == ["holiday.png", "notes.txt"]
    assert FigureCache(tmp_path / "none").clear() == (0, 0)


def test_another_style_or_unreadable_drawing_code_draws_anew(tmp_path, monkeypatch):
    import matplotlib

    draws = _count_draws(monkeypatch)
    cache = FigureCache(tmp_path / "figures")
    heatmap(tmp_path / "a.png", _grid(), title="t", cache=cache)
    with matplotlib.rc_context({"font.size": 14}):  # a matplotlibrc of the user's, say
        heatmap(tmp_path / "b.png", _grid(), title="t", cache=cache)
    assert len(draws) == 2 and len(cache.files()) == 2
    monkeypatch.setattr(drawing, "_CODE", None)  # the module's source could not be read
    heatmap(tmp_path / "c.png", _grid(), title="t", cache=cache)
    assert len(draws) == 3 and len(cache.files()) == 2


def test_arrays_of_objects_are_not_fingerprinted(tmp_path):
    with pytest.raises(TypeError):
        fingerprint(np.array(["a", None], dtype=object))
    cache = FigureCache(tmp_path / "figures")
    assert cache.key({"s": np.array([1, None], dtype=object)}) is None


def test_temporaries_of_copies_cut_short_are_removed(tmp_path):
    import os

    cache = FigureCache(tmp_path / "figures")
    cache.folder.mkdir()
    stale = cache.folder / f".tmp-{'a' * 64}-12345678.png"
    fresh = cache.folder / f".tmp-{'b' * 64}-12345678.png"
    stale.write_bytes(PNG)
    fresh.write_bytes(PNG)
    os.utime(stale, (0, 0))
    src = tmp_path / "p.png"
    src.write_bytes(PNG + b"\0" * 8 + b"IEND\xaeB`\x82")
    cache.keep(fingerprint("x"), src)
    assert not stale.exists() and fresh.exists()  # another sweep's copy in progress stays
    assert cache.size() == (1, src.stat().st_size)
    cache.clear()
    assert not cache.folder.exists()


# -- a cache that cannot be written: read, not written, said once (issue 41, item 11) -----------
# Real filesystems (tests/mounts.py): a read-only bind mount, a tmpfs that is full.


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_read_only_cache_serves_its_pictures_and_says_once_it_is_not_written(
    tmp_path, monkeypatch, caplog
):
    from mounts import read_only

    draws = _count_draws(monkeypatch)
    cache = FigureCache(tmp_path / "figures")
    first = heatmap(tmp_path / "a.png", _grid(), title="t", cache=cache)
    with read_only(cache.folder), caplog.at_level(logging.WARNING):
        again = heatmap(tmp_path / "b.png", _grid(), title="t", cache=cache)
        assert draws == ["t"] and again.read_bytes() == first.read_bytes()  # copied, not drawn
        for shift in (0.1, 0.2):  # new pictures: drawn, not kept
            out = heatmap(tmp_path / f"{shift}.png", _grid(shift), title="t", cache=cache)
            assert out.read_bytes()[:8] == PNG
        assert len(cache.files()) == 1
    (warning,) = _warnings(caplog)
    assert warning.startswith(
        f"figure cache: cannot write {cache.folder} (Read-only file system); "
        "it is read, not written"
    )


def test_a_damaged_picture_in_a_read_only_cache_is_drawn_again(tmp_path, monkeypatch, caplog):
    from mounts import read_only

    draws = _count_draws(monkeypatch)
    cache = FigureCache(tmp_path / "figures")
    heatmap(tmp_path / "a.png", _grid(), title="t", cache=cache)
    (kept,) = cache.files()
    kept.write_bytes(kept.read_bytes()[:100])  # cut short
    with read_only(cache.folder), caplog.at_level(logging.WARNING):
        out = heatmap(tmp_path / "b.png", _grid(), title="t", cache=cache)
    assert len(draws) == 2 and out.read_bytes()[:8] == PNG
    assert "damaged cached picture" in caplog.text and len(kept.read_bytes()) == 100


def test_a_full_cache_keeps_no_half_copy(tmp_path, caplog):
    from mounts import fill, tmpfs

    drawn = heatmap(tmp_path / "a.png", _grid(), title="t")
    with tmpfs(tmp_path / "disk", "64k") as disk:
        cache = FigureCache(disk / "figures")
        cache.folder.mkdir()
        fill(disk, leave=8192)  # less than the picture
        with caplog.at_level(logging.WARNING):
            cache.keep("a" * 64, drawn)
            cache.keep("b" * 64, drawn)
        assert list(cache.folder.iterdir()) == []  # no temporary holding the last bytes
    (warning,) = _warnings(caplog)
    assert warning.startswith(
        f"figure cache: cannot write {cache.folder} (No space left on device)"
    )


def test_a_link_under_a_temporary_name_is_never_written_through(tmp_path):
    # Drawn and copied pictures went through "<name>.tmp.png": a link planted under that name
    # in a sweep's plots/ had its target overwritten. Now the temporary file is made new.
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    cache = FigureCache(tmp_path / "figures")
    for folder in ("drawn", "copied"):  # the first draws (and keeps), the second copies
        plots = tmp_path / folder
        plots.mkdir()
        (plots / "h.tmp.png").symlink_to(victim)
        assert heatmap(plots / "h.png", _grid(), title="t", cache=cache) == plots / "h.png"
        assert (plots / "h.png").read_bytes().startswith(PNG)
        assert sorted(p.name for p in plots.iterdir()) == ["h.png", "h.tmp.png"]
    assert victim.read_text() == "mine" and len(cache.files()) == 1
