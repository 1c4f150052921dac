"""A needlec plugin used by needlec's tests (see the entry points in pyproject.toml)."""
