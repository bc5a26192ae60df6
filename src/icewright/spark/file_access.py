"""How Spark's own readers reach a table's files with the table's FileIO settings.

icewright's Spark tasks write through the table's FileIO, but reads of data and delete
files (a rewrite, a copy-on-write replace, a view's analysis, ``read_table``) go through
Spark's Parquet reader, that is through Hadoop's file systems. A table's FileIO may hold
credentials of its own (keys a REST catalog vends for that table, ``s3.*`` properties of
the catalog), which the cluster's Hadoop configuration does not know. :func:`hadoop_options`
turns them into S3A settings given to each read as data source options (Spark puts them
into that read's Hadoop configuration only; nothing global changes). Spark redacts option
values whose keys match ``spark.redaction.regex`` (``secret``, ``token``, ``access.key``)
in plans and logs.

The Spark side still needs S3A (``hadoop-aws``) on its class path and, for ``s3://``
locations, ``fs.s3.impl`` pointing at it; icewright does not choose the cluster's file
system classes.
"""

from __future__ import annotations

from icewright.io.base import FileIO
from icewright.io.s3 import (
    CLIENT_REGION,
    S3_ACCESS_KEY_ID,
    S3_ENDPOINT,
    S3_PATH_STYLE_ACCESS,
    S3_REGION,
    S3_SECRET_ACCESS_KEY,
    S3_SESSION_TOKEN,
    S3FileIO,
)

__all__ = ["hadoop_options"]

# FileIO property -> Hadoop S3A setting (hadoop-aws's names).
_S3A = {
    S3_ACCESS_KEY_ID: "fs.s3a.access.key",
    S3_SECRET_ACCESS_KEY: "fs.s3a.secret.key",
    S3_SESSION_TOKEN: "fs.s3a.session.token",
    S3_ENDPOINT: "fs.s3a.endpoint",
    S3_PATH_STYLE_ACCESS: "fs.s3a.path.style.access",
}
_PROVIDER = "fs.s3a.aws.credentials.provider"
_SESSION_PROVIDER = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
_KEY_PROVIDER = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"


def hadoop_options(io: FileIO) -> dict[str, str]:
    """The Hadoop settings a Spark read of ``io``'s files needs (empty for a FileIO
    without settings Hadoop lacks).

    >>> from icewright.io.s3 import S3FileIO
    >>> hadoop_options(S3FileIO({"s3.endpoint": "http://127.0.0.1:9000", "s3.region": "eu"}))
    {'fs.s3a.endpoint': 'http://127.0.0.1:9000', 'fs.s3a.endpoint.region': 'eu'}
    """
    if not isinstance(io, S3FileIO):
        return {}
    props = io.properties
    options = {_S3A[k]: v for k, v in props.items() if k in _S3A}
    region = props.get(S3_REGION) or props.get(CLIENT_REGION)
    if region:
        options["fs.s3a.endpoint.region"] = region
    # Keys of the table's own replace the cluster's credential chain for this read only.
    if S3_SESSION_TOKEN in props:
        options[_PROVIDER] = _SESSION_PROVIDER
    elif S3_ACCESS_KEY_ID in props:
        options[_PROVIDER] = _KEY_PROVIDER
    return options
