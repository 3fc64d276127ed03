"""The L3 agent: legacy routers as ``qrouter-<id>`` namespaces with SNAT and floating IPs."""
