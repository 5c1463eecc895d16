"""``open_source(uri)``: a data source from a path or URI (the only place reading the environment)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

from cef.errors import ConfigurationError
from cef.ingest.sources.base import DataSource
from cef.ingest.sources.filesystem import FileSystemSource

__all__ = ["open_source"]


def open_source(
    uri: str | os.PathLike[str],
    *,
    endpoint_url: str | None = None,
    region: str | None = None,
    include_hidden: bool = False,
    environ: Mapping[str, str] | None = None,
) -> DataSource:
    """Open a data source.

    * a folder or file path, or ``file:///...`` → :class:`FileSystemSource`
    * ``s3://bucket`` or ``s3://bucket/prefix`` → :class:`S3Source`; the endpoint is
      ``endpoint_url``, else ``AWS_ENDPOINT_URL_S3``, else ``AWS_ENDPOINT_URL``
      (for MinIO, moto...); the region is ``region``, else ``AWS_REGION``, else
      ``AWS_DEFAULT_REGION``. Credentials come from boto3's usual chain.

    ``environ`` replaces ``os.environ`` (tests, servers with their own settings).
    """
    text = os.fspath(uri)
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme == "s3":
        from cef.ingest.sources.s3 import S3Source

        env = os.environ if environ is None else environ
        if not parts.netloc:
            raise ConfigurationError(f"S3 URI {text!r} has no bucket: use s3://bucket/prefix")
        endpoint = endpoint_url or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None
        region_name = region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None
        return S3Source(
            parts.netloc,
            unquote(parts.path).lstrip("/"),
            endpoint_url=endpoint,
            region=region_name,
            include_hidden=include_hidden,
        )
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise ConfigurationError(f"file URI {text!r} names a remote host; only local files are supported")
        return FileSystemSource(Path(unquote(parts.path)), include_hidden=include_hidden)
    if scheme and len(scheme) > 1:  # "c:" is a Windows drive, not a scheme
        raise ConfigurationError(f"unsupported data source {text!r}: use a local path, file:// or s3://")
    return FileSystemSource(Path(text), include_hidden=include_hidden)
