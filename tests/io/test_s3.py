"""S3FileIO specifics, against moto's S3 server on 127.0.0.1."""

from __future__ import annotations

import sys

import pytest
from botocore.exceptions import ClientError

import icewright.io.s3 as s3_module
from icewright.errors import FileAlreadyExists, MissingDependency, NoSuchFile, ValidationError
from icewright.io import S3FileIO
from icewright.io.s3 import split_s3_uri
from tests.support.s3 import S3TestServer


def test_split_s3_uri() -> None:
    assert split_s3_uri("s3://b/k/x.json") == ("s3", "b", "k/x.json")
    assert split_s3_uri("s3a://b") == ("s3a", "b", "")
    assert split_s3_uri("S3N://b/") == ("s3n", "b", "")
    for bad in ("s3:/b/k", "gs://b/k", "/local/path", "s3:///k"):
        with pytest.raises(ValidationError):
            split_s3_uri(bad)


def test_object_operations_need_a_key(s3_server: S3TestServer) -> None:
    fio = S3FileIO(s3_server.properties)
    with pytest.raises(ValidationError, match="no object key"):
        fio.read("s3://some-bucket")


def test_hadoop_schemes_address_the_same_objects(s3_server: S3TestServer) -> None:
    bucket = s3_server.new_bucket()
    fio = S3FileIO(s3_server.properties)
    fio.write(f"s3a://{bucket}/t/x", b"via s3a")
    assert fio.read(f"s3://{bucket}/t/x") == b"via s3a"
    assert fio.read(f"s3n://{bucket}/t/x") == b"via s3a"
    assert [f.path for f in fio.list_prefix(f"s3a://{bucket}/t")] == [f"s3a://{bucket}/t/x"]


def test_create_sends_if_none_match_to_the_server(s3_server: S3TestServer) -> None:
    # The server (not the client) refuses the second create: a raw boto3 put
    # with IfNoneMatch gets the 412 that S3FileIO maps to FileAlreadyExists.
    bucket = s3_server.new_bucket()
    fio = S3FileIO(s3_server.properties)
    fio.create(f"s3://{bucket}/v1.metadata.json", b"mine")
    with pytest.raises(ClientError) as raw:
        s3_server.client().put_object(
            Bucket=bucket, Key="v1.metadata.json", Body=b"x", IfNoneMatch="*"
        )
    assert raw.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    with pytest.raises(FileAlreadyExists) as mapped:
        fio.create(f"s3://{bucket}/v1.metadata.json", b"theirs")
    assert isinstance(mapped.value.__cause__, ClientError)
    assert fio.read(f"s3://{bucket}/v1.metadata.json") == b"mine"


def test_create_whose_response_was_lost_still_succeeds(s3_server: S3TestServer) -> None:
    # The PUT lands, its response is lost, botocore retries and gets 412 for our
    # own object: that must count as success, or a committer would believe it
    # lost and might delete the metadata file that is now current.
    bucket = s3_server.new_bucket()
    fio = S3FileIO(s3_server.properties)
    s3_server.lose_next_response("PUT", bucket, "metadata/v2.metadata.json")
    fio.create(f"s3://{bucket}/metadata/v2.metadata.json", b"ours")
    assert fio.read(f"s3://{bucket}/metadata/v2.metadata.json") == b"ours"


def test_retried_create_against_someone_elses_object_fails(s3_server: S3TestServer) -> None:
    bucket = s3_server.new_bucket()
    fio = S3FileIO(s3_server.properties)
    fio.write(f"s3://{bucket}/v3.metadata.json", b"theirs")
    s3_server.lose_next_response("PUT", bucket, "v3.metadata.json")
    with pytest.raises(FileAlreadyExists):
        fio.create(f"s3://{bucket}/v3.metadata.json", b"ours")
    assert fio.read(f"s3://{bucket}/v3.metadata.json") == b"theirs"


def test_delete_many_in_batches(s3_server: S3TestServer) -> None:
    bucket = s3_server.new_bucket()
    fio = S3FileIO(s3_server.properties)
    client = s3_server.client()
    keys = [f"data/{i:05d}.parquet" for i in range(2500)]
    s3_server.put_objects(bucket, dict.fromkeys(keys, b""))  # not 2500 PUTs over HTTP
    client.put_object(Bucket=bucket, Key="keep/me", Body=b"1")
    assert sum(1 for _ in fio.list_prefix(f"s3://{bucket}/data")) == 2500  # paginated

    paths = [f"s3://{bucket}/{k}" for k in keys]
    # A duplicate spelling and a missing key are not failures; a non-S3 path is.
    failures = fio.delete_many(
        [*paths, f"s3a://{bucket}/{keys[0]}", f"s3://{bucket}/gone", "/tmp/x"]
    )
    assert [p for p, _ in failures] == ["/tmp/x"]
    assert isinstance(failures[0][1], ValidationError)
    assert [f.path for f in fio.list_prefix(f"s3://{bucket}/")] == [f"s3://{bucket}/keep/me"]


def test_missing_bucket(s3_server: S3TestServer) -> None:
    fio = S3FileIO(s3_server.properties)
    with pytest.raises(NoSuchFile, match="no-such-bucket-xyz"):
        fio.read("s3://no-such-bucket-xyz/k")
    assert not fio.exists("s3://no-such-bucket-xyz/k")
    fio.delete("s3://no-such-bucket-xyz/k")  # missing is not an error
    assert fio.delete_many(["s3://no-such-bucket-xyz/k"]) == []


def test_first_existing_asks_once_for_names_in_one_directory(s3_server: S3TestServer) -> None:
    bucket = s3_server.new_bucket()
    fio = S3FileIO(s3_server.properties)
    names = [f"s3://{bucket}/t/metadata/v2{ext}" for ext in (".metadata.json", ".gz.metadata.json")]
    fio.write(names[1], b"gzip")
    with s3_server.recording(bucket) as requests:
        assert fio.first_existing(names) == names[1]
        # names in two directories, or one name: a HEAD each
        assert fio.first_existing([f"s3://{bucket}/t/a", f"s3://{bucket}/u/a"]) is None
        assert fio.first_existing([names[1]]) == names[1]
    assert [r.kind for r in requests] == [
        "LIST t/metadata/v2.",
        "HEAD t/a",
        "HEAD u/a",
        "HEAD t/metadata/v2.gz.metadata.json",
    ]
    missing = ["s3://no-such-bucket-xyz/m/v1.a", "s3://no-such-bucket-xyz/m/v1.b"]
    assert fio.first_existing(missing) is None


def test_open_input_reads_across_ranged_blocks(
    s3_server: S3TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(s3_module, "_READ_BLOCK", 1000)
    bucket = s3_server.new_bucket()
    fio = S3FileIO(s3_server.properties)
    data = bytes(i % 251 for i in range(10_500))
    fio.write(f"s3://{bucket}/big", data)
    with fio.open_input(f"s3://{bucket}/big") as f:
        assert f.read(2500) == data[:2500]
        f.seek(10_450)
        assert f.read(100) == data[10_450:]
        assert f.read(5) == b""
        f.seek(-1, 2)
        assert f.read() == data[-1:]
        f.seek(0)
        assert f.read() == data


def test_open_input_fails_if_the_object_is_replaced(s3_server: S3TestServer) -> None:
    bucket = s3_server.new_bucket()
    fio = S3FileIO(s3_server.properties)
    fio.write(f"s3://{bucket}/f", b"old content")
    with fio.open_input(f"s3://{bucket}/f") as f:
        fio.write(f"s3://{bucket}/f", b"new content")
        with pytest.raises(ClientError, match="PreconditionFailed"):
            f.read()


def test_default_credential_chain(s3_server: S3TestServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    props = {
        k: v
        for k, v in s3_server.properties.items()
        if k not in ("s3.access-key-id", "s3.secret-access-key", "s3.region")
    }
    props["client.region"] = "us-east-1"
    bucket = s3_server.new_bucket()
    fio = S3FileIO(props)
    assert fio.region == "us-east-1"
    fio.write(f"s3://{bucket}/k", b"v")
    assert fio.read(f"s3://{bucket}/k") == b"v"


def test_property_validation() -> None:
    with pytest.raises(ValidationError, match=r"s3\.path-style-access"):
        S3FileIO({"s3.path-style-access": "yes"})
    with pytest.raises(ValidationError, match=r"s3\.secret-access-key"):
        S3FileIO({"s3.access-key-id": "AKIA"})
    assert S3FileIO({"s3.path-style-access": "TRUE"}).properties["s3.path-style-access"] == "TRUE"


def test_client_is_cached_and_configured(s3_server: S3TestServer) -> None:
    fio = S3FileIO({**s3_server.properties, "s3.region": "eu-west-1"})
    client = fio.client
    assert fio.client is client
    assert client.meta.region_name == "eu-west-1"
    assert client.meta.endpoint_url == s3_server.endpoint
    assert client.meta.config.s3["addressing_style"] == "path"
    virtual = S3FileIO({"s3.path-style-access": "false", "s3.region": "us-east-1"}).client
    assert virtual.meta.config.s3["addressing_style"] == "virtual"


def test_missing_boto3_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # makes `import boto3` fail
    fio = S3FileIO({"s3.region": "us-east-1"})
    with pytest.raises(MissingDependency, match=r"pip install 'icewright\[aws\]'"):
        fio.read("s3://bucket/key")


def test_pyarrow_filesystem_lists_what_fileio_wrote(s3_server: S3TestServer) -> None:
    bucket = s3_server.new_bucket()
    fio = S3FileIO(s3_server.properties)
    fio.write(f"s3://{bucket}/t/a", b"12345")
    fs, normalize = fio.to_pyarrow_filesystem()
    assert normalize(f"s3a://{bucket}/t/a") == f"{bucket}/t/a"
    assert normalize(f"s3://{bucket}") == bucket
    from pyarrow.fs import FileSelector

    infos = fs.get_file_info(FileSelector(normalize(f"s3://{bucket}/t"), recursive=True))
    assert [(i.path, i.size) for i in infos] == [(f"{bucket}/t/a", 5)]
