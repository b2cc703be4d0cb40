"""Messages are one line each and show what a name or a line of data holds, escaped: no line
break, ANSI escape or bidi override from data reaches the terminal raw."""

from __future__ import annotations

import io
import logging
import logging.config

import pytest
import yaml

from paths import ROOT
from sweep.core.messages import VisibleFormatter, first_line, one_line, visible

# A name a trial fed the commands: a line break, an ANSI "clear screen", a right-to-left
# override that shows "gpj.exe" as "exe.jpg", a NUL and a lone surrogate.
HOSTILE = "a\nb\x1b[2J\u202egpj.exe\x00\ud800"


def test_a_name_is_shown_with_every_control_escaped():
    assert visible(HOSTILE) == "a\\nb\\x1b[2J\\u202egpj.exe\\x00\\ud800"
    assert visible("Übersicht\tcafé 東京") == "Übersicht\\tcafé 東京"  # scripts unchanged


@pytest.mark.parametrize(
    "char",
    [
        "\x07",
        "\x1b",
        "\x7f",
        "\x9b",
        "\u200e",
        "\u200f",
        "\u202a",
        "\u202b",
        "\u202c",
        "\u202d",
        "\u202e",
        "\u2066",
        "\u2067",
        "\u2068",
        "\u2069",
    ],
)
def test_every_control_and_bidi_character_is_escaped(char):
    for render in (visible, one_line, lambda t: first_line(ValueError(t))):
        shown = render(f"x{char}y")
        assert char not in shown and shown.isprintable(), (render, shown)


def test_a_message_is_one_line_with_its_data_escaped():
    assert (
        one_line(f"{HOSTILE}: bad\n  value") == "a b\\x1b[2J\\u202egpj.exe\\x00\\ud800: bad value"
    )
    assert one_line("quote 'a  b'\nnext", squeeze=False) == "quote 'a  b' next"
    assert first_line(OSError("\x1b[31mred\nsecond line")) == "\\x1b[31mred"


def _log(formatter: logging.Formatter, msg: str, *args) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    log = logging.getLogger("test.visible")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning(msg, *args)
    finally:
        log.removeHandler(handler)
    return stream.getvalue()


def test_a_log_line_shows_its_data_escaped_and_stays_one_line():
    text = _log(
        VisibleFormatter("%(levelname)s %(message)s"), "%s: looks like HTML (%d)", HOSTILE, 3
    )
    assert text == "WARNING a\\nb\\x1b[2J\\u202egpj.exe\\x00\\ud800: looks like HTML (3)\n"


def test_every_command_logs_through_the_escaping_format():
    # The formatter of the logging config Hydra gives a sweep's jobs and its launching
    # process, built as logging.config.dictConfig builds it.
    config = yaml.safe_load((ROOT / "src/sweep/conf/hydra/job_logging/console.yaml").read_text())
    formatter = logging.config.DictConfigurator(config).configure_formatter(
        config["formatters"]["simple"]
    )
    assert isinstance(formatter, VisibleFormatter)
    assert _log(formatter, "%s: skipped", "docs/a\nb.md").endswith("docs/a\\nb.md: skipped\n")
