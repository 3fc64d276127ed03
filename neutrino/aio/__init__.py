"""The all-in-one (``make run``): API, RPC endpoints and this host's agents in
one process over the in-process bus (``transport_url = fake://``).

It sits just below ``cmd/`` (``neutrino serve`` starts it, so it never
imports ``cmd``): it assembles the server, the agents and a private Open
vSwitch, and may import all of them.
"""
