"""An entry point that cannot load: it imports a module that does not exist (on purpose)."""

import needlec_fixture_plugin_missing_dependency  # noqa: F401
