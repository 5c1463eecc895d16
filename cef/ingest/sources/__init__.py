"""Data sources: where documents come from (local folders, S3 prefixes).

``S3Source`` needs the ``s3`` extra (boto3), imported only when one is built.
"""

from __future__ import annotations

from cef.ingest.sources.base import DataSource, ResourceInfo, glob_to_regex, guess_content_type
from cef.ingest.sources.factory import open_source
from cef.ingest.sources.filesystem import FileSystemSource
from cef.ingest.sources.s3 import S3Source

__all__ = [
    "DataSource",
    "FileSystemSource",
    "ResourceInfo",
    "S3Source",
    "glob_to_regex",
    "guess_content_type",
    "open_source",
]
