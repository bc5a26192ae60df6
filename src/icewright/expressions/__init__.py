"""Row filters for scan planning: predicates, parsing, binding, projection and evaluators.

>>> from icewright.expressions import parse
>>> expr = parse("region IN ('eu', 'us') AND NOT (qty < 10 OR note IS NULL)")
>>> str(expr)
"region IN ('eu', 'us') AND NOT (qty < 10 OR note IS NULL)"

Two text forms: :func:`sql_filter` reads a predicate a user wrote as SQL and gives it
Spark SQL's meaning (three-valued: ``region != 'eu'`` does not match a NULL region);
:func:`parse` reads an Iceberg expression in the text ``str(expr)`` prints, with the
spec's two-valued meaning (``region != 'eu'`` matches a NULL region). Everything a user
types (``--where``, ``where=``, a scan's string filter) goes through :func:`sql_filter`.

Build a filter with :func:`sql_filter`, :func:`parse` or the builder functions,
:func:`bind` it to a schema (or let an evaluator bind it), and use:

* :func:`inclusive_projection` / :func:`strict_projection` -- partition predicates;
* :class:`ManifestEvaluator` -- skip manifests by their partition summaries;
* :class:`PartitionEvaluator` -- skip partitions;
* :class:`InclusiveMetricsEvaluator` -- skip files by their column metrics;
* :class:`StrictMetricsEvaluator` -- find files whose rows all match;
* :class:`ResidualEvaluator` -- the filter left per partition;
* :class:`Evaluator` -- evaluate a filter on rows.
"""

from __future__ import annotations

from icewright.expressions.binding import bind
from icewright.expressions.builders import (
    always_false,
    always_true,
    equal,
    greater_than,
    greater_than_or_equal,
    is_in,
    is_nan,
    is_null,
    less_than,
    less_than_or_equal,
    not_equal,
    not_in,
    not_nan,
    not_null,
    not_starts_with,
    predicate,
    starts_with,
)
from icewright.expressions.evaluators import Evaluator, ManifestEvaluator, PartitionEvaluator
from icewright.expressions.metrics import InclusiveMetricsEvaluator, StrictMetricsEvaluator
from icewright.expressions.operations import Operation
from icewright.expressions.parser import parse
from icewright.expressions.predicates import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundExpression,
    BoundPredicate,
    BoundReference,
    Expression,
    Not,
    Or,
    Reference,
    UnboundPredicate,
    and_,
    not_,
    or_,
    rewrite_not,
)
from icewright.expressions.projection import inclusive_projection, strict_projection
from icewright.expressions.residual import ResidualEvaluator
from icewright.expressions.sql import sql_filter, true_rows

__all__ = [
    "ALWAYS_FALSE",
    "ALWAYS_TRUE",
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "BoundExpression",
    "BoundPredicate",
    "BoundReference",
    "Evaluator",
    "Expression",
    "InclusiveMetricsEvaluator",
    "ManifestEvaluator",
    "Not",
    "Operation",
    "Or",
    "PartitionEvaluator",
    "Reference",
    "ResidualEvaluator",
    "StrictMetricsEvaluator",
    "UnboundPredicate",
    "always_false",
    "always_true",
    "and_",
    "bind",
    "equal",
    "greater_than",
    "greater_than_or_equal",
    "inclusive_projection",
    "is_in",
    "is_nan",
    "is_null",
    "less_than",
    "less_than_or_equal",
    "not_",
    "not_equal",
    "not_in",
    "not_nan",
    "not_null",
    "not_starts_with",
    "or_",
    "parse",
    "predicate",
    "rewrite_not",
    "sql_filter",
    "starts_with",
    "strict_projection",
    "true_rows",
]
