"""The Octavia v2 load-balancer API (service type ``load-balancer``)."""
