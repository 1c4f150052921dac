"""Small shared helpers with no needlec dependencies: canonical JSON and atomic output folders."""
