"""The plugins. Their modules declare policy rules as they are imported:
``neutrino.policy`` is imported first, which has oslo.policy load its
extension checks on demand (``policy/extension_checks.py``)."""
import neutrino.policy  # noqa: F401 - before any rule is parsed
