"""The L3 service plugin (``router``): routers and floating IPs."""
