"""How long the lister waits before retrying: Retry-After first (seconds or an HTTP date, capped),
else exponential backoff."""

from __future__ import annotations

import email.utils
import time

import pytest

from kplan.io.kube import Lister, Reply, RetryPolicy


class NoTransport:
    server = "http://nowhere"

    def get(self, path_and_query: str, timeout: float) -> Reply:
        raise AssertionError("not called")

    def close(self) -> None:
        pass


LISTER = Lister(NoTransport(), retry=RetryPolicy(base=0.5, cap=30.0, max_retry_after=120.0))


@pytest.mark.parametrize("header, attempt, wait", [
    pytest.param("3", 0, 3.0, id="seconds"),
    pytest.param(" 0 ", 4, 0.0, id="zero seconds, blanks around"),
    pytest.param("86400", 0, 120.0, id="a day is capped"),
    pytest.param(None, 0, 0.5, id="no header: the first backoff"),
    pytest.param(None, 3, 4.0, id="no header: doubled per attempt"),
    pytest.param("soon", 1, 1.0, id="an unreadable header: backoff"),
    pytest.param(email.utils.formatdate(0, usegmt=True), 0, 0.0, id="an HTTP date in the past: at once"),
])
def test_retry_after(header: str | None, attempt: int, wait: float) -> None:
    assert LISTER._retry_after(header, attempt) == wait


def test_retry_after_as_a_future_http_date() -> None:
    header = email.utils.formatdate(time.time() + 5, usegmt=True)
    assert 3.0 <= LISTER._retry_after(header, 0) <= 5.0
