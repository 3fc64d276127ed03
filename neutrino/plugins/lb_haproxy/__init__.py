"""The ``haproxy`` load-balancer provider: load balancers of the Octavia v2
API realised by neutrino's load-balancer agents."""
