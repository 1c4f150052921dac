"""Built-in metrics. Importing this package registers each in `needlec.registry.METRICS`."""

from __future__ import annotations

from needlec.scoring.metrics import choice, existence, extract, needlebench, numeric, ruler, text
from needlec.scoring.metrics.base import MetricConfig, Result

__all__ = ["MetricConfig", "Result", "choice", "existence", "extract", "needlebench", "numeric", "ruler", "text"]
