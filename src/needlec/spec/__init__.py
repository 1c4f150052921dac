"""The spec language: loading YAML/JSON with positions, the strict models, grids, validation and templates."""
