"""The all-in-one (``make run``): API, RPC endpoints and this host's agents in
one process over the in-process bus (``transport_url = fake://``).

It sits at the level of ``cmd/``: it assembles the server, the agents and a
private Open vSwitch, and may import all of them.
"""
