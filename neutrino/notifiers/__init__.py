"""Notifiers to other services (the compute service)."""
