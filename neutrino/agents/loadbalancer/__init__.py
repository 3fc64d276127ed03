"""The load-balancer agent: each load balancer of the ``haproxy`` provider as
haproxy in its own namespace on this host (Octavia's amphora, without the VM)."""
