"""The DHCP agent: one dnsmasq per network, in a ``qdhcp-<network_id>`` namespace.

``config`` is the pure core (a network as the server describes it in, the
files and the command line dnsmasq needs out); ``netns`` and ``process`` are
the thin adapters to the host; ``driver`` puts them together for one
network; ``agent`` is the reconcile loop fed by the server's RPC.
"""
