"""Releases: release folders in the Hugging Face layout, verification, download and Hub upload."""
