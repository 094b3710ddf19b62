"""rankhouse.lazy: work on a thread whose value, or exception, the caller collects."""

from __future__ import annotations

import threading

import pytest

from rankhouse.lazy import Background


def test_the_value_of_the_work_is_its_result():
    ran_on: list[str] = []

    def work():
        ran_on.append(threading.current_thread().name)
        return 42

    assert Background(work, "worker").result() == 42
    assert ran_on == ["worker"]


def test_what_the_work_raised_is_raised_by_result():
    def work():
        raise KeyError("missing")

    background = Background(work, "worker")
    assert background.wait()  # waiting does not raise
    with pytest.raises(KeyError, match="missing"):
        background.result()


def test_wait_says_whether_the_work_has_ended():
    release = threading.Event()
    background = Background(lambda: release.wait(10), "worker")
    assert background.wait(0.01) is False
    release.set()
    assert background.wait() is True
    assert background.result() is True


@pytest.mark.parametrize("daemon", [False, True])
def test_the_thread_is_a_daemon_only_when_asked(monkeypatch, daemon):
    started: list[threading.Thread] = []
    start = threading.Thread.start

    def spied(thread):
        started.append(thread)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", spied)
    Background(lambda: None, "worker", daemon=daemon).result()
    assert [thread.daemon for thread in started] == [daemon]
