"""Spark's failures as one-line icewright errors (icewright.spark.failures): from the
real JVM (a corrupt Parquet file, a malformed JSON record, a job that fails on its data)
and from the text of errors whose JVM is gone."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from icewright.errors import IcewrightError, ValidationError
from icewright.spark.failures import causes, spark_failure
from tests.spark.test_write import SIMPLE, files_under, write


def _one_line(e: BaseException) -> str:
    text = str(e)
    assert "\n" not in text and "\tat " not in text and len(text) < 600, text
    return text


def test_a_corrupt_parquet_file_names_the_file(spark: SparkSession, tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    pq.write_table(pa.table({"id": [1, 2], "name": ["a", "b"]}), landing / "part-1.parquet")
    (landing / "part-3.parquet").write_bytes(b"PAR1 this is not parquet PAR1")
    with pytest.raises(ValidationError) as info:
        write(spark, f"parquet:{landing}", SIMPLE, tmp_path / "t")
    text = _one_line(info.value)
    assert text.startswith(f"source file {landing}/part-3.parquet is not Parquet: "), text
    assert files_under(tmp_path / "t") == []
    # Only the corrupt file: Spark fails while reading the footer, before the job.
    (landing / "part-1.parquet").unlink()
    with pytest.raises(ValidationError, match=r"part-3\.parquet is not Parquet: "):
        write(spark, f"parquet:{landing}", SIMPLE, tmp_path / "t")


def test_a_malformed_json_record_fails_instead_of_writing_nulls(
    spark: SparkSession, tmp_path: Path
) -> None:
    src = tmp_path / "in.json"
    src.write_text('{"id": 1, "name": "a"}\n{"id": oops}\n')
    with pytest.raises(ValidationError) as info:
        write(spark, f"json:{src}", SIMPLE, tmp_path / "t")
    assert "is not JSON: Unrecognized token 'oops'" in _one_line(info.value)
    gz = tmp_path / "in.csv.gz"
    gz.write_bytes(b"id,name\n1,a\n")  # not gzip although its name says so
    with pytest.raises(ValidationError, match=r"in\.csv\.gz is not CSV: not a gzip file"):
        write(spark, f"csv:{gz}", SIMPLE, tmp_path / "t")


def test_a_data_error_in_the_source_is_bad_input(spark: SparkSession, tmp_path: Path) -> None:
    source = spark.sql("SELECT CAST('abc' AS INT) AS id, 'x' AS name")
    with pytest.raises(ValidationError) as info:
        write(spark, source, SIMPLE, tmp_path / "t")
    assert "failed on its input: The value 'abc'" in _one_line(info.value)


@pytest.mark.parametrize(
    ("text", "kind", "words"),
    [
        (
            "An error occurred while calling o85.collectToPython.\n"
            ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 3 in "
            "stage 1.0 failed 1 times, most recent failure: Lost task 3.0: "
            "org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)\n"
            "\tat org.apache.spark.api.python.BasePythonRunner...\n"
            "Caused by: java.io.EOFException\n",
            IcewrightError,
            "died",
        ),
        (
            "An error occurred while calling o55.parquet.\n"
            ": org.apache.spark.SparkException: [FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER] "
            "Encountered error while reading file s3a://bkt/in/part-0.parquet. Could not read "
            "footer.\n\tat org.apache.spark...\nCaused by: java.lang.RuntimeException: "
            "s3a://bkt/in/part-0.parquet is not a Parquet file. Expected magic number\n",
            ValidationError,
            "source file s3a://bkt/in/part-0.parquet is not Parquet: s3a://bkt/in/part-0.parquet"
            " is not a Parquet file",
        ),
        ("Java gateway process exited before sending its port number.", IcewrightError, "died"),
    ],
)
def test_text_of_errors_whose_jvm_is_gone(
    text: str, kind: type[IcewrightError], words: str
) -> None:
    error = spark_failure(RuntimeError(text), job="write job j", source_format="parquet")
    assert type(error) is kind
    assert words in _one_line(error)
    assert causes(RuntimeError(text))[0].cls != "RuntimeError" or "gateway" in text
