"""Family reports: each family's aggregate and headline table, registered in `needlec.registry.REPORTS`.

Importing a module registers its family; the registry imports them on first use. See `base` for
the contract a family report (built in or from a plugin) follows.
"""

from __future__ import annotations

from needlec.scoring.families.base import FamilyResult, ReportConfig, Table

__all__ = ["FamilyResult", "ReportConfig", "Table"]
