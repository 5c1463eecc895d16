"""The ONNX Runtime all-MiniLM-L6-v2 against the sentence-transformers reference, and its offline export."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cef.config import CefConfig, EmbedderSettings
from cef.embed import MiniLMEmbedder, make_embedder
from cef.embed.minilm import resolve_runtime
from cef.errors import ConfigurationError
from cef.wiring import open_embedder

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _varied_sentences() -> list[str]:
    """A few hundred texts unlike each other: example documents split into sentences, questions,
    lower case, numbers, unicode, single words and texts past the 256 word pieces read."""
    out: list[str] = []
    for path in sorted(EXAMPLES.rglob("*")):
        if path.suffix in {".md", ".yaml", ".jsonl", ".csv"}:
            for line in path.read_text(encoding="utf-8").splitlines():
                line = line.strip(" -#*>\t")
                if 12 <= len(line) <= 400:
                    out.append(line)
    out = list(dict.fromkeys(out))[:220]
    subjects = ["warfarin", "the Eiffel Tower", "Marie Curie", "photosynthesis", "the 1998 World Cup"]
    asks = ["Who discovered {}?", "what is {} used for", "When was {} first described?", "{}: pros and cons"]
    out += [a.format(s) for a in asks for s in subjects]
    out += ["ok", "Paris", "42", "naïve café résumé", "Ünïcödé – “quotes” and emoji 🚀", "C'est la vie."]
    out += ["Kidney function affects drug clearance. " * 70, "token " * 400]
    out += [f"Item {i}: {i * 37 % 1000} mg every {i % 12 + 1} hours" for i in range(40)]
    return out


@pytest.fixture(scope="module")
def sentences() -> list[str]:
    texts = _varied_sentences()
    assert len(texts) >= 250
    return texts


@pytest.fixture(scope="module")
def reference(sentences: list[str]) -> np.ndarray:
    return MiniLMEmbedder(runtime="torch").embed(sentences)


@pytest.mark.parametrize(("precision", "floor"), [("int8", 0.99), ("float32", 0.9999)])
def test_onnx_matches_the_reference_embeddings(
    sentences: list[str], reference: np.ndarray, precision: str, floor: float
) -> None:
    fast = MiniLMEmbedder(runtime="onnx", precision=precision)
    got = fast.embed(sentences)
    assert got.shape == reference.shape and got.dtype == np.float32
    cos = (got * reference).sum(axis=1)
    worst = int(np.argmin(cos))
    assert cos[worst] >= floor, f"cosine {cos[worst]:.4f} on {sentences[worst][:80]!r}"
    single = np.stack([fast.embed_query(t) for t in sentences[:50]])
    assert ((single * reference[:50]).sum(axis=1) >= floor).all()  # the query path, one text a run


def test_onnx_ranks_like_the_reference(sentences: list[str], reference: np.ndarray) -> None:
    fast = MiniLMEmbedder(runtime="onnx").embed(sentences)
    queries = list(range(0, len(sentences), 10))
    agree = 0
    for q in queries:
        ref_top = set(np.argsort(-(reference @ reference[q]))[1:6].tolist())
        fast_top = set(np.argsort(-(fast @ fast[q]))[1:6].tolist())
        agree += len(ref_top & fast_top)
    assert agree / (5 * len(queries)) >= 0.85


def test_length_sorted_batches_keep_the_input_order() -> None:
    texts = [("word " * (i * 7 % 23 + 1)).strip() + f" number {i}" for i in range(30)]
    emb = MiniLMEmbedder(runtime="onnx", precision="float32", batch_size=4)
    seen: list[tuple[int, int]] = []
    batched = emb.embed(texts, progress=lambda done, total: seen.append((done, total)))
    one_by_one = np.stack([emb.embed_query(t) for t in texts])
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
    assert seen[-1] == (30, 30) and len(seen) == len(emb._length_bounds(sorted(map(len, texts)))) - 1


def test_runtime_choice() -> None:
    assert resolve_runtime("auto") == "onnx"  # onnxruntime is a dependency of the embeddings extra
    assert resolve_runtime("TORCH") == "torch"
    assert resolve_runtime("auto", device="cuda") == "torch"
    with pytest.raises(ConfigurationError, match="unknown embedder runtime 'tensorrt'"):
        MiniLMEmbedder(runtime="tensorrt")
    with pytest.raises(ConfigurationError, match="CPU only"):
        MiniLMEmbedder(runtime="onnx", device="cuda")
    with pytest.raises(ConfigurationError, match="unknown embedder precision 'int4'"):
        MiniLMEmbedder(precision="int4")
    emb = make_embedder("minilm", runtime="torch")
    assert isinstance(emb, MiniLMEmbedder) and emb.runtime == "torch"


def test_the_runtime_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CEF_EMBEDDER__RUNTIME", "torch")
    monkeypatch.setenv("CEF_EMBEDDER__PRECISION", "float32")
    cfg = CefConfig()
    assert cfg.embedder == EmbedderSettings(runtime="torch", precision="float32")
    emb = open_embedder(cfg.embedder)
    assert isinstance(emb, MiniLMEmbedder) and emb.runtime == "torch"
    assert isinstance(d := open_embedder(EmbedderSettings()), MiniLMEmbedder) and d.runtime == "onnx"
    monkeypatch.setenv("CEF_EMBEDDER__RUNTIME", "tensorrt")
    with pytest.raises(ValueError, match="runtime"):
        CefConfig()


_NO_NETWORK = """
import json, socket, sys
def refuse(*args, **kwargs):
    raise OSError("network access attempted during the export")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from cef.embed import MiniLMEmbedder
from cef.embed.onnx import export_minilm
path = export_minilm("int8", cache_dir=__import__("pathlib").Path(sys.argv[1]))
vec = MiniLMEmbedder(runtime="onnx", cache_dir=sys.argv[1]).embed_query("offline export")
print(json.dumps({"path": str(path), "dim": int(vec.shape[0])}))
"""


def test_the_export_needs_no_network(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    cache = tmp_path / "cache"
    run = subprocess.run(
        [sys.executable, "-c", _NO_NETWORK, str(cache)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    path = Path(out["path"])
    assert out["dim"] == 384 and path.is_file() and path.parent.parent.parent == cache
    made = sorted(p.name for p in path.parent.iterdir() if p.suffix == ".onnx")
    assert made == ["model-float32.onnx", "model-int8.onnx"]  # no temporary files left behind
    assert path.stat().st_size < (path.parent / "model-float32.onnx").stat().st_size / 2
