"""Loading Hugging Face models offline and quietly: the environment switches, scoped to a block."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["no_progress_bars", "offline_env"]

_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
# one load at a time changes the environment, so each restores what the process had
_ENV_LOCK = threading.Lock()


@contextmanager
def offline_env() -> Iterator[None]:
    """Hugging Face offline mode for the block only, then everything as it was.

    Sets ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` and the copy
    ``huggingface_hub`` took of them when it was imported (it reads the
    environment once, at import), and restores both afterwards.
    """
    with _ENV_LOCK:
        yield from _offline_env_locked()


def _offline_env_locked() -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in _OFFLINE_ENV}
    hub_constants: Any = None
    hub_saved: Any = None
    try:
        from huggingface_hub import constants as hub_constants

        hub_saved = hub_constants.HF_HUB_OFFLINE
        hub_constants.HF_HUB_OFFLINE = True
    except (ImportError, AttributeError):
        hub_constants = None
    os.environ.update(_OFFLINE_ENV)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if hub_constants is not None:
            hub_constants.HF_HUB_OFFLINE = hub_saved


@contextmanager
def no_progress_bars() -> Iterator[None]:
    """Silence transformers' weight-loading progress bar for the block (the library prints nothing)."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()
