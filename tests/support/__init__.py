"""Servers and helpers the tests start; :data:`STARTED` lists the servers, for the session summary."""

from __future__ import annotations

#: servers started in this test session (printed at the end by tests/conftest.py)
STARTED: list[str] = []
