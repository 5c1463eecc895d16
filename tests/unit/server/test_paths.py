"""Ids in URL paths: routing on the raw path keeps an encoded "/" inside its segment."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cef.server.paths import _record_id, _route_path


@given(st.text(min_size=1, max_size=60))
def test_an_encoded_id_is_one_segment_and_decodes_to_itself(record_id: str) -> None:
    for encoded in (quote(record_id, safe=""), quote(record_id, safe=":@!$&'()*+,;=")):
        routed = _route_path(encoded)
        assert "/" not in routed
        assert _record_id(routed) == record_id


def test_the_length_bound_applies_to_the_decoded_id() -> None:
    assert _record_id(_route_path(quote("a/" * 256, safe=""))) == "a/" * 256
    with pytest.raises(ValueError, match="at most 512 characters, this one has 513"):
        _record_id(quote("x" * 513))
