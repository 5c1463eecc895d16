"""An S3 (or S3-compatible) bucket prefix as a :class:`~cef.ingest.sources.base.DataSource`.

Needs ``boto3`` (``pip install 'cef-context[s3]'``), imported only when a source is built.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime
from typing import Any, BinaryIO, cast

from cef.errors import MissingExtraError, NotFoundError, RetryableStoreError, StoreError
from cef.ingest.sources.base import (
    ResourceInfo,
    SourceBase,
    check_prefix,
    check_relative_path,
    guess_content_type,
)

__all__ = ["S3Source"]

logger = logging.getLogger(__name__)

_NOT_FOUND = {"404", "NoSuchKey", "NotFound"}
_RETRYABLE = {"500", "502", "503", "504", "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable"}


def _import_boto3() -> Any:
    try:
        import boto3
    except ImportError as exc:
        raise MissingExtraError("Reading from S3", "s3", "boto3") from exc
    return boto3


class S3Source(SourceBase):
    """The objects of ``bucket`` under ``prefix``; paths are keys relative to the prefix.

    ``prefix`` is treated as a folder: ``docs`` and ``docs/`` both mean keys
    starting with ``docs/``. Listing follows ``list_objects_v2`` continuation
    tokens (``page_size`` keys per request), skips folder markers (keys ending
    in ``/``) and, unless ``include_hidden``, keys with a segment starting with
    ``.``. Keys holding ``..`` or ``.`` segments, empty segments or
    backslashes are never listed, and such paths are refused with
    :class:`~cef.errors.PathEscapeError`. The fingerprint is the object's ETag.

    Credentials: pass them explicitly, or leave them ``None`` for boto3's own
    chain; ``client`` accepts a ready boto3 S3 client instead (then the
    connection arguments are ignored and :meth:`close` leaves it open).
    """

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        profile: str | None = None,
        client: Any | None = None,
        page_size: int = 1000,
        include_hidden: bool = False,
    ) -> None:
        if not bucket or "/" in bucket:
            raise ValueError(f"invalid S3 bucket name {bucket!r}")
        if not 1 <= page_size <= 1000:
            raise ValueError(f"page_size must be within 1..1000, not {page_size}")
        self._bucket = bucket
        self._prefix = check_prefix(prefix.lstrip("/"), f"s3://{bucket}/")
        if self._prefix and not self._prefix.endswith("/"):
            self._prefix += "/"
        self._page_size = page_size
        self._include_hidden = include_hidden
        self._owns_client = client is None
        if client is None:
            boto3 = _import_boto3()
            session = boto3.session.Session(
                aws_access_key_id=aws_access_key_id,
                aws_secret_access_key=aws_secret_access_key,
                aws_session_token=aws_session_token,
                region_name=region,
                profile_name=profile,
            )
            client = session.client("s3", endpoint_url=endpoint_url)
        self._client = client
        self._closed = False

    @property
    def bucket(self) -> str:
        return self._bucket

    @property
    def prefix(self) -> str:
        return self._prefix

    @property
    def uri(self) -> str:
        return f"s3://{self._bucket}/{self._prefix}"

    def __repr__(self) -> str:
        return f"S3Source({self.uri!r})"

    def close(self) -> None:
        if self._owns_client and not self._closed:
            close = getattr(self._client, "close", None)
            if close is not None:
                close()
        self._closed = True

    # -- keys --------------------------------------------------------------------------------

    def _key(self, path: str) -> tuple[str, str]:
        rel = check_relative_path(path, self.uri)
        return rel, self._prefix + rel

    def _relative(self, key: str) -> str | None:
        """The path of ``key`` relative to the prefix, or ``None`` if it must not be exposed."""
        if not key.startswith(self._prefix):
            return None
        rel = key[len(self._prefix) :]
        if not rel or rel.endswith("/"):
            return None  # the prefix itself, or a folder marker
        parts = rel.split("/")
        if "\\" in rel or "\x00" in rel or any(p in ("", ".", "..") for p in parts):
            logger.warning("skipping S3 key %r: it is not a safe relative path", key)
            return None
        if not self._include_hidden and any(p.startswith(".") for p in parts):
            return None
        return rel

    def _visible(self, rel: str) -> bool:
        return self._include_hidden or not any(p.startswith(".") for p in rel.split("/"))

    # -- errors ------------------------------------------------------------------------------

    def _translate(self, exc: Exception, rel: str | None, action: str) -> Exception:
        from botocore.exceptions import BotoCoreError, ClientError, ConnectionError

        if isinstance(exc, ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            status = str(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", ""))
            if code in _NOT_FOUND or status == "404":
                if code == "NoSuchBucket":
                    return StoreError(f"S3 bucket {self._bucket!r} does not exist ({action})")
                return NotFoundError(f"no object {rel!r} in the data source {self.uri}")
            if code in _RETRYABLE or status in _RETRYABLE:
                return RetryableStoreError(f"S3 {action} failed ({code or status}), retry later: {exc}")
            return StoreError(f"S3 {action} failed ({code or status}): {exc}")
        if isinstance(exc, ConnectionError):
            return RetryableStoreError(f"S3 {action} failed: cannot reach the endpoint: {exc}")
        if isinstance(exc, BotoCoreError):
            return StoreError(f"S3 {action} failed: {exc}")
        return exc

    # -- reading -----------------------------------------------------------------------------

    def open(self, path: str) -> BinaryIO:
        rel, key = self._key(path)
        if not self._visible(rel):
            raise NotFoundError(f"{rel!r} is not in the data source {self.uri}")
        try:
            response = self._client.get_object(Bucket=self._bucket, Key=key)
        except Exception as exc:
            raise self._translate(exc, rel, f"get of {key!r}") from exc
        return cast(BinaryIO, response["Body"])

    def read_bytes(self, path: str) -> bytes:
        stream = self.open(path)
        try:
            return stream.read()
        except Exception as exc:
            raise self._translate(exc, path, f"read of {path!r}") from exc
        finally:
            stream.close()

    def _head(self, path: str) -> tuple[str, dict[str, Any] | None]:
        rel, key = self._key(path)
        if not self._visible(rel):
            return rel, None
        try:
            return rel, cast(dict[str, Any], self._client.head_object(Bucket=self._bucket, Key=key))
        except Exception as exc:
            translated = self._translate(exc, rel, f"head of {key!r}")
            if isinstance(translated, NotFoundError):
                return rel, None
            raise translated from exc

    def exists(self, path: str) -> bool:
        return self._head(path)[1] is not None

    def info(self, path: str) -> ResourceInfo:
        rel, head = self._head(path)
        if head is None:
            raise NotFoundError(f"no object {rel!r} in the data source {self.uri}")
        return self._info(rel, int(head.get("ContentLength", 0)), head.get("LastModified"), head.get("ETag"))

    @staticmethod
    def _info(rel: str, size: int, modified: datetime | None, etag: str | None) -> ResourceInfo:
        return ResourceInfo(
            path=rel,
            size=size,
            modified=modified,
            fingerprint=f"etag:{(etag or '').strip(chr(34))}",
            content_type=guess_content_type(rel),
        )

    # -- listing -----------------------------------------------------------------------------

    def list(self, prefix: str = "") -> Iterator[ResourceInfo]:
        sub = check_prefix(prefix, self.uri)
        if sub and not self._include_hidden and any(p.startswith(".") for p in sub.split("/") if p):
            return
        request: dict[str, Any] = {
            "Bucket": self._bucket,
            "Prefix": self._prefix + sub,
            "MaxKeys": self._page_size,
        }
        while True:
            try:
                page = self._client.list_objects_v2(**request)
            except Exception as exc:
                raise self._translate(exc, None, f"listing of {self.uri}{sub}") from exc
            for obj in page.get("Contents", []):
                rel = self._relative(obj["Key"])
                if rel is not None:
                    yield self._info(rel, int(obj.get("Size", 0)), obj.get("LastModified"), obj.get("ETag"))
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return
            request["ContinuationToken"] = token
