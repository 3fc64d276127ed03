"""Policy: the rules and their enforcement.

Importing the package sets up oslo.policy's extension checks to load on
demand (``extension_checks``) before any rule is parsed: every module that
declares rules is in this package or in ``neutrino.plugins``, which
imports it first.
"""
from neutrino.policy import extension_checks

extension_checks.install()
