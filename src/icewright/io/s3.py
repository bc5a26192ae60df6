"""FileIO on Amazon S3 (and S3-compatible stores) through boto3.

Configuration uses Iceberg's FileIO property names:

=========================  ===================================================
``s3.endpoint``            endpoint URL (MinIO, moto, a VPC endpoint ...)
``s3.region``              region; ``client.region`` is the fallback key
``s3.access-key-id``       static credentials; without them boto3's default
``s3.secret-access-key``   chain is used (env, profile, instance role ...)
``s3.session-token``
``s3.path-style-access``   ``true``: ``endpoint/bucket/key`` addressing
=========================  ===================================================

The create-if-absent primitive is a conditional ``PutObject`` with
``If-None-Match: *``: S3 answers ``412 Precondition Failed`` when the key
exists (and ``409 ConditionalRequestConflict`` while a competing conditional
write is in flight), so of several racing creators exactly one wins.
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO, cast

from icewright.errors import FileAlreadyExists, MissingDependency, NoSuchFile, ValidationError
from icewright.io.base import S3_SCHEMES, ArrowFileSystem, FileInfo, FileIO, uri_scheme

__all__ = ["S3FileIO", "split_s3_uri"]

S3_ENDPOINT = "s3.endpoint"
S3_REGION = "s3.region"
CLIENT_REGION = "client.region"
S3_ACCESS_KEY_ID = "s3.access-key-id"
S3_SECRET_ACCESS_KEY = "s3.secret-access-key"
S3_SESSION_TOKEN = "s3.session-token"
S3_PATH_STYLE_ACCESS = "s3.path-style-access"

# S3's DeleteObjects takes at most 1000 keys per request.
_DELETE_BATCH = 1000
_MAX_DELETE_THREADS = 8
# open_input fetches this much per ranged GET.
_READ_BLOCK = 4 * 1024 * 1024
_NOT_FOUND_CODES = frozenset({"404", "NoSuchKey", "NotFound", "NoSuchBucket"})
_CREATE_CONFLICT_CODES = frozenset(
    {"412", "PreconditionFailed", "409", "ConditionalRequestConflict"}
)


def split_s3_uri(path: str) -> tuple[str, str, str]:
    """Split ``s3://bucket/key`` into ``(scheme, bucket, key)``; ``key`` may be empty.

    >>> split_s3_uri("s3a://warehouse/db/t/metadata/v1.metadata.json")
    ('s3a', 'warehouse', 'db/t/metadata/v1.metadata.json')
    """
    scheme = uri_scheme(path)
    if scheme not in S3_SCHEMES or not path[len(scheme) + 1 :].startswith("//"):
        raise ValidationError(
            f"S3FileIO cannot handle {path!r}: expected s3://bucket/key "
            "(or s3a://, s3n://); use load_file_io(path) for other locations."
        )
    bucket, _, key = path[len(scheme) + 3 :].partition("/")
    if not bucket:
        raise ValidationError(f"S3 location {path!r} names no bucket: write s3://bucket/key.")
    return scheme, bucket, key


def _split_object(path: str) -> tuple[str, str]:
    _, bucket, key = split_s3_uri(path)
    if not key:
        raise ValidationError(f"S3 location {path!r} names no object key: write s3://bucket/key.")
    return bucket, key


def _import_boto3() -> Any:
    try:
        import boto3
    except ImportError as e:
        raise MissingDependency(
            "S3 locations need boto3, which is not installed: pip install 'icewright[aws]'"
        ) from e
    return boto3


def _error_code(err: Exception) -> str:
    response = getattr(err, "response", None)
    if not isinstance(response, dict):
        return ""
    return str(response.get("Error", {}).get("Code", ""))


def _path_style(properties: Mapping[str, str]) -> bool | None:
    raw = properties.get(S3_PATH_STYLE_ACCESS)
    if raw is None:
        return None
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise ValidationError(f"{S3_PATH_STYLE_ACCESS} must be 'true' or 'false', not {raw!r}.")
    return value == "true"


class S3FileIO(FileIO):
    """FileIO for ``s3://``, ``s3a://`` and ``s3n://`` locations (boto3).

    One boto3 client is built lazily per instance and shared by all threads
    (boto3 clients are thread-safe; their sessions are not, so the session is
    used once, under a lock).
    """

    def __init__(self, properties: Mapping[str, str] | None = None) -> None:
        super().__init__(properties)
        props = self.properties
        self._path_style = _path_style(props)
        if (S3_ACCESS_KEY_ID in props) != (S3_SECRET_ACCESS_KEY in props):
            raise ValidationError(
                f"Give both {S3_ACCESS_KEY_ID} and {S3_SECRET_ACCESS_KEY}, or neither "
                "(then boto3's default credential chain is used)."
            )
        self._client: Any = None
        self._lock = threading.Lock()

    # --- client ---------------------------------------------------------------

    @property
    def region(self) -> str | None:
        """The configured region (``s3.region``, else ``client.region``), if any."""
        return self.properties.get(S3_REGION) or self.properties.get(CLIENT_REGION)

    @property
    def client(self) -> Any:
        """The boto3 S3 client of this FileIO (built on first use)."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = self._make_client()
        return self._client

    def _make_client(self) -> Any:
        boto3 = _import_boto3()
        from botocore.config import Config

        props = self.properties
        style = {None: "auto", True: "path", False: "virtual"}[self._path_style]
        config = Config(
            s3={"addressing_style": style},
            # Enough connections for delete_many's parallel batches and for
            # callers that share one FileIO between threads.
            max_pool_connections=32,
            retries={"mode": "standard", "max_attempts": 5},
        )
        session = boto3.session.Session(
            aws_access_key_id=props.get(S3_ACCESS_KEY_ID),
            aws_secret_access_key=props.get(S3_SECRET_ACCESS_KEY),
            aws_session_token=props.get(S3_SESSION_TOKEN),
            region_name=self.region,
        )
        return session.client("s3", endpoint_url=props.get(S3_ENDPOINT), config=config)

    # --- reading --------------------------------------------------------------

    def read(self, path: str) -> bytes:
        """Return the object's bytes; ``NoSuchFile`` if it is missing."""
        bucket, key = _split_object(path)
        try:
            response = self.client.get_object(Bucket=bucket, Key=key)
        except Exception as e:
            raise self._not_found_or(e, path) from None
        return cast(bytes, response["Body"].read())

    def open_input(self, path: str) -> BinaryIO:
        """A seekable, buffered reader doing ranged GETs; ``NoSuchFile`` if missing.

        The reader is pinned to the object's ETag, so an object replaced while
        it is read fails loudly instead of mixing two versions.
        """
        bucket, key = _split_object(path)
        head = self._head(path, bucket, key)
        raw = _RangedReader(self.client, bucket, key, int(head["ContentLength"]), head["ETag"])
        return cast(BinaryIO, io.BufferedReader(raw, buffer_size=_READ_BLOCK))

    def exists(self, path: str) -> bool:
        """Whether the object exists (a HEAD request)."""
        bucket, key = _split_object(path)
        try:
            self.client.head_object(Bucket=bucket, Key=key)
        except Exception as e:
            if _error_code(e) in _NOT_FOUND_CODES:
                return False
            raise
        return True

    def first_existing(self, paths: Sequence[str]) -> str | None:
        """The first of ``paths`` that exists, or None. Paths in one "directory" that
        share a longer key prefix (``v7.metadata.json``, ``v7.gz.metadata.json``,
        ``v7.metadata.json.gz``) are answered by one LIST of that prefix instead of a
        HEAD each (S3's listings are strongly consistent); other paths by HEADs."""
        objects = [_split_object(path) for path in paths]
        keys = [key for _, key in objects]
        prefix = os.path.commonprefix(keys)  # noqa: RUF071 - a key prefix, not a path
        directory = prefix.rpartition("/")[0]
        if (
            len(paths) < 2
            or len({bucket for bucket, _ in objects}) != 1
            or any(key.rpartition("/")[0] != directory for key in keys)
            or len(prefix) <= len(directory) + 1
        ):
            return super().first_existing(paths)
        try:
            page = self.client.list_objects_v2(Bucket=objects[0][0], Prefix=prefix)
        except Exception as e:
            if _error_code(e) in _NOT_FOUND_CODES:
                return None
            raise
        if page.get("IsTruncated"):
            return super().first_existing(paths)
        listed = {obj["Key"] for obj in page.get("Contents", ())}
        return next((path for path, key in zip(paths, keys, strict=True) if key in listed), None)

    def size(self, path: str) -> int:
        """The object's size in bytes; ``NoSuchFile`` if it is missing."""
        bucket, key = _split_object(path)
        return int(self._head(path, bucket, key)["ContentLength"])

    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        """List the objects under the "directory" ``prefix`` (paginated).

        A ``/`` is appended to a non-empty key prefix so that ``.../data`` does
        not list ``.../data2/...``; zero-byte ``.../`` directory markers are
        skipped. Paths keep the scheme of ``prefix``.
        """
        scheme, bucket, key = split_s3_uri(prefix)
        if key and not key.endswith("/"):
            key += "/"
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=bucket, Prefix=key):
            for obj in page.get("Contents", ()):
                name = obj["Key"]
                if name.endswith("/"):
                    continue
                modified_ms = int(obj["LastModified"].timestamp() * 1000)
                yield FileInfo(f"{scheme}://{bucket}/{name}", int(obj["Size"]), modified_ms)

    # --- writing --------------------------------------------------------------

    def write(self, path: str, data: bytes) -> None:
        """Put the object, replacing any existing one (S3 puts are atomic)."""
        bucket, key = _split_object(path)
        self.client.put_object(Bucket=bucket, Key=key, Body=data)

    def create(self, path: str, data: bytes) -> None:
        """Put the object only if absent (``If-None-Match: *``).

        Raises ``FileAlreadyExists`` on 412 PreconditionFailed or 409
        ConditionalRequestConflict; other errors propagate unchanged.
        """
        bucket, key = _split_object(path)
        try:
            self.client.put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
        except Exception as e:
            if _error_code(e) not in _CREATE_CONFLICT_CODES:
                raise
            if _retried(e) and self._holds(bucket, key, data):
                # botocore retried the PUT: an earlier attempt may have landed and
                # its response been lost, so the 412 can be about our own write.
                return
            raise FileAlreadyExists(f"File already exists: {path}") from e

    def _holds(self, bucket: str, key: str, data: bytes) -> bool:
        try:
            response = self.client.get_object(Bucket=bucket, Key=key)
        except Exception as e:
            if _error_code(e) in _NOT_FOUND_CODES:
                return False
            raise
        return bool(response["Body"].read() == data)

    def delete(self, path: str) -> None:
        """Delete the object; a missing object (or bucket) is not an error."""
        bucket, key = _split_object(path)
        try:
            self.client.delete_object(Bucket=bucket, Key=key)
        except Exception as e:
            if _error_code(e) not in _NOT_FOUND_CODES:
                raise

    def delete_many(self, paths: Iterable[str]) -> list[tuple[str, Exception]]:
        """Delete with ``DeleteObjects`` in batches of 1000, batches in parallel.

        Returns ``(path, error)`` per path that was not deleted; per-key errors
        reported by S3 come back as ``botocore.exceptions.ClientError``.
        """
        failures: list[tuple[str, Exception]] = []
        # bucket -> key -> the caller's spellings of it (s3:// and s3a:// may both occur)
        by_bucket: dict[str, dict[str, list[str]]] = {}
        for path in paths:
            try:
                bucket, key = _split_object(path)
            except ValidationError as e:
                failures.append((path, e))
                continue
            by_bucket.setdefault(bucket, {}).setdefault(key, []).append(path)

        batches: list[tuple[str, dict[str, list[str]]]] = []
        for bucket, keys in by_bucket.items():
            items = list(keys.items())
            for start in range(0, len(items), _DELETE_BATCH):
                batches.append((bucket, dict(items[start : start + _DELETE_BATCH])))
        if not batches:
            return failures

        with ThreadPoolExecutor(max_workers=min(_MAX_DELETE_THREADS, len(batches))) as pool:
            for batch_failures in pool.map(lambda b: self._delete_batch(*b), batches):
                failures.extend(batch_failures)
        return failures

    def _delete_batch(self, bucket: str, keys: dict[str, list[str]]) -> list[tuple[str, Exception]]:
        try:
            response = self.client.delete_objects(
                Bucket=bucket,
                Delete={"Objects": [{"Key": k} for k in keys], "Quiet": True},
            )
        except Exception as e:
            if _error_code(e) == "NoSuchBucket":
                return []  # nothing to delete: every object is already missing
            return [(p, e) for paths in keys.values() for p in paths]
        from botocore.exceptions import ClientError

        failures: list[tuple[str, Exception]] = []
        for err in response.get("Errors", ()):
            code, message = err.get("Code", ""), err.get("Message", "")
            if code == "NoSuchKey":
                continue
            exc = ClientError({"Error": {"Code": code, "Message": message}}, "DeleteObjects")
            failures.extend((p, exc) for p in keys.get(err.get("Key", ""), ()))
        return failures

    # --- pyarrow --------------------------------------------------------------

    def to_pyarrow_filesystem(self) -> ArrowFileSystem:
        """``pyarrow.fs.S3FileSystem`` with the same endpoint, region, credentials
        and addressing; the normalizer maps ``s3://bucket/key`` to ``bucket/key``."""
        import pyarrow.fs

        props = self.properties
        kwargs: dict[str, Any] = {}
        if S3_ACCESS_KEY_ID in props:
            kwargs["access_key"] = props[S3_ACCESS_KEY_ID]
            kwargs["secret_key"] = props[S3_SECRET_ACCESS_KEY]
            if S3_SESSION_TOKEN in props:
                kwargs["session_token"] = props[S3_SESSION_TOKEN]
        if self.region:
            kwargs["region"] = self.region
        endpoint = props.get(S3_ENDPOINT)
        if endpoint:
            scheme, sep, rest = endpoint.partition("://")
            if sep:
                kwargs["scheme"] = scheme
                kwargs["endpoint_override"] = rest.rstrip("/")
            else:
                kwargs["endpoint_override"] = endpoint.rstrip("/")
        if self._path_style is False:
            # pyarrow addresses path-style by default; opt in to virtual hosts.
            kwargs["force_virtual_addressing"] = True
        fs = pyarrow.fs.S3FileSystem(**kwargs)

        def normalize(path: str) -> str:
            _, bucket, key = split_s3_uri(path)
            return f"{bucket}/{key}" if key else bucket

        return ArrowFileSystem(fs, normalize)

    # --- helpers --------------------------------------------------------------

    def _head(self, path: str, bucket: str, key: str) -> dict[str, Any]:
        try:
            return cast(dict[str, Any], self.client.head_object(Bucket=bucket, Key=key))
        except Exception as e:
            raise self._not_found_or(e, path) from None

    @staticmethod
    def _not_found_or(err: Exception, path: str) -> Exception:
        """``NoSuchFile`` for a missing object or bucket, else ``err`` itself."""
        code = _error_code(err)
        if code in _NOT_FOUND_CODES:
            what = "Bucket" if code == "NoSuchBucket" else "File"
            return NoSuchFile(f"{what} does not exist: {path}")
        return err

    def __repr__(self) -> str:
        endpoint = self.properties.get(S3_ENDPOINT)
        return f"S3FileIO(endpoint={endpoint!r}, region={self.region!r})"


def _retried(err: Exception) -> bool:
    response = getattr(err, "response", None)
    if not isinstance(response, dict):
        return True  # unknown: be careful and check the content
    attempts = response.get("ResponseMetadata", {}).get("RetryAttempts")
    return attempts is None or int(attempts) > 0


class _RangedReader(io.RawIOBase):
    """Raw, seekable access to one S3 object version through ranged GETs."""

    def __init__(self, client: Any, bucket: str, key: str, size: int, etag: str) -> None:
        super().__init__()
        self._client = client
        self._bucket = bucket
        self._key = key
        self._size = size
        self._etag = etag
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            pos = offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        elif whence == io.SEEK_END:
            pos = self._size + offset
        else:
            raise ValueError(f"invalid whence {whence}")
        if pos < 0:
            raise ValueError(f"negative seek position {pos}")
        self._pos = pos
        return pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self._size - self._pos)
        if want <= 0:
            return 0
        end = self._pos + want - 1
        response = self._client.get_object(
            Bucket=self._bucket, Key=self._key, Range=f"bytes={self._pos}-{end}", IfMatch=self._etag
        )
        data = response["Body"].read()
        n = len(data)
        view[:n] = data
        self._pos += n
        return n
