"""Progress output: rich bars on a terminal, plain lines every few seconds elsewhere, counting records."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from cef.cli.progress import PlainProgress, format_duration, progress_bar, progress_mode


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_come_every_interval_with_count_rate_and_eta() -> None:
    out, clock = io.StringIO(), Clock()
    report = PlainProgress(out, interval=5.0, clock=clock)
    report("embedding chunks", 0, 10_000)
    for done in range(1000, 4001, 1000):  # one update a second: only the one 5 s on is printed
        clock.now += 1
        report("embedding chunks", done, 10_000)
    clock.now += 1
    report("embedding chunks", 5000, 10_000)
    lines = out.getvalue().splitlines()
    assert lines[0] == "embedding chunks: 0/10,000 (0%) · elapsed 0s"
    assert lines[1] == "embedding chunks: 5,000/10,000 (50%) · 1,000.0/s · ETA 5s"
    assert len(lines) == 2


def test_plain_progress_prints_the_end_once_and_restarts_when_the_count_goes_back() -> None:
    out, clock = io.StringIO(), Clock()
    report = PlainProgress(out, interval=60.0, clock=clock)
    report("extracting entities (passages)", 256, 512)
    clock.now += 2
    report("extracting entities (passages)", 512, 512)
    report("extracting entities (passages)", 512, 512)
    clock.now += 1
    report("extracting entities (passages)", 100, 300)  # the next file
    lines = out.getvalue().splitlines()
    assert lines == [
        "extracting entities (passages): 256/512 (50%) · elapsed 0s",
        "extracting entities (passages): 512/512 (100%) · 128.0/s · done in 2s",
        "extracting entities (passages): 100/300 (33%) · elapsed 1s",  # since the last report
    ]


def test_a_silent_step_gets_a_heartbeat_and_its_real_duration() -> None:
    """A step that reports only when it ends is not silent meanwhile, and does not say 'done in 0s'."""
    out, clock = io.StringIO(), Clock()
    report = PlainProgress(out, interval=5.0, clock=clock)
    report("ingesting files", 1, 1)
    for _ in range(17):  # 85 s of a step that says nothing (the beat thread calls heartbeat)
        clock.now += 5
        report.heartbeat()
    report("embedding chunks", 1500, 1500)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 + 17 + 1
    assert lines[1] == "working · elapsed 5s (last: ingesting files)"
    assert lines[-2] == "working · elapsed 1m25s (last: ingesting files)"
    assert lines[-1].startswith("embedding chunks: 1,500/1,500 (100%)") and lines[-1].endswith(
        "done in 1m25s"
    )


def test_the_heartbeat_repeats_an_open_task_and_stays_quiet_while_it_reports() -> None:
    out, clock = io.StringIO(), Clock()
    report = PlainProgress(out, interval=5.0, clock=clock)
    report("extracting entities (passages)", 10, 100)
    clock.now += 3
    report.heartbeat()  # printed 3 s ago: nothing to say
    clock.now += 3
    report.heartbeat()
    assert out.getvalue().splitlines()[-1].startswith("extracting entities (passages): 10/100 (10%)")
    assert len(out.getvalue().splitlines()) == 2


def test_the_beat_thread_prints_within_the_interval() -> None:
    import time

    out = io.StringIO()
    report = PlainProgress(out, interval=0.2)
    report.start()
    try:
        report("ingesting files", 0, 3)
        time.sleep(0.7)
    finally:
        report.stop()
    assert len(out.getvalue().splitlines()) >= 2


def test_modes_follow_the_stream_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CEF_PROGRESS", raising=False)
    assert progress_mode(True, io.StringIO()) == "plain"
    assert progress_mode(True, Tty()) == "bar"
    assert progress_mode(False, Tty()) == "off"
    for value, mode in (("off", "off"), ("0", "off"), ("plain", "plain"), ("bar", "bar"), ("1", "bar")):
        monkeypatch.setenv("CEF_PROGRESS", value)
        assert progress_mode(True, Tty() if mode == "plain" else io.StringIO()) == mode


def test_progress_bar_plain_on_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CEF_PROGRESS", raising=False)
    monkeypatch.setenv("CEF_PROGRESS_INTERVAL", "0")
    out = io.StringIO()
    with progress_bar(stream=out) as report:
        for done in (10, 20, 30):
            report("exporting nodes", done, 30)
    lines = out.getvalue().splitlines()
    assert [line.split(" · ")[0] for line in lines] == [
        "exporting nodes: 10/30 (33%)",
        "exporting nodes: 20/30 (67%)",
        "exporting nodes: 30/30 (100%)",
    ]
    off = io.StringIO()
    with progress_bar(False, stream=off) as report:
        report("exporting nodes", 1, 2)
    assert off.getvalue() == ""


def test_progress_bar_on_a_terminal_shows_count_rate_and_eta(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CEF_PROGRESS", raising=False)
    out = Tty()
    console = Console(file=out, force_terminal=True, width=160, color_system=None)
    with progress_bar(console=console, stream=out) as report:
        for done in range(0, 10_001, 2000):
            report("embedding chunks", done, 10_000)
    text = out.getvalue()
    assert "embedding chunks" in text and "10000/10000" in text and "100%" in text
    assert "/s" in text and "ETA" in text


@given(st.floats(min_value=0, max_value=10 * 86400, allow_nan=False))
def test_durations_read_back(seconds: float) -> None:
    text = format_duration(seconds)
    total = 0
    for value, unit in __import__("re").findall(r"(\d+)([hms])", text):
        total += int(value) * {"h": 3600, "m": 60, "s": 1}[unit]
    assert abs(total - seconds) <= (60 if "h" in text else 0.5 + 1e-9)
