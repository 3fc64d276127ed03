"""The ``firewall_v2`` service plugin (FWaaS v2)."""
