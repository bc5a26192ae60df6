"""The partition field summaries of a manifest (spec: "Manifest Lists", ``field_summary``):
per partition field, whether any value is null or NaN and the lower and upper bounds of
the rest, built as the manifest's entries are written."""

from __future__ import annotations

import math
from typing import Any

from icewright.manifest.data_file import PartitionFieldSummary
from icewright.spec.types import DoubleType, FloatType, IcebergType, PrimitiveType
from icewright.spec.values import to_bytes

__all__ = ["FieldSummaryBuilder"]


class FieldSummaryBuilder:
    """Running null/NaN flags and min/max of one partition field over a manifest."""

    def __init__(self, field_type: IcebergType) -> None:
        # Partition result types are always primitive (spec: "Partition Transforms").
        assert isinstance(field_type, PrimitiveType)
        self.field_type: PrimitiveType = field_type
        self.is_float = isinstance(field_type, FloatType | DoubleType)
        self.contains_null = False
        self.contains_nan = False
        self.lower: Any = None
        self.upper: Any = None

    def _key(self, value: Any) -> Any:
        # Floats compare in IEEE 754 totalOrder for bounds: -0.0 sorts before +0.0 (spec:
        # "Manifest Lists", note 2).
        return (value, math.copysign(1.0, value)) if self.is_float else value

    def update(self, value: Any) -> None:
        """Take one partition value (None for null)."""
        if value is None:
            self.contains_null = True
        elif self.is_float and math.isnan(value):
            self.contains_nan = True
        elif self.lower is None:
            self.lower = self.upper = value
        else:
            if self._key(value) < self._key(self.lower):
                self.lower = value
            if self._key(value) > self._key(self.upper):
                self.upper = value

    def summary(self) -> PartitionFieldSummary:
        """The field's summary as a manifest list stores it."""
        return PartitionFieldSummary(
            contains_null=self.contains_null,
            contains_nan=self.contains_nan,
            lower_bound=None if self.lower is None else to_bytes(self.field_type, self.lower),
            upper_bound=None if self.upper is None else to_bytes(self.field_type, self.upper),
        )
