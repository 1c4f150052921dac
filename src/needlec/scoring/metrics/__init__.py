"""Built-in metrics, one module per group. Importing a module registers its metrics in
`needlec.registry.METRICS`, whose `provides` table names the module of each, so reading a spec loads
only the metrics it names."""

from __future__ import annotations

from needlec.scoring.metrics.base import MetricConfig, Result

__all__ = ["MetricConfig", "Result"]
