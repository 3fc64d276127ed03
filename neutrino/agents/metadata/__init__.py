"""The metadata path for 169.254.169.254.

An instance asks ``http://169.254.169.254/...``; a small proxy in its
router's namespace (or its network's DHCP namespace) receives the request,
stamps who asked (``X-Forwarded-For``) and where (``X-Neutron-Router-ID`` or
``X-Neutron-Network-ID``) and passes it over a UNIX socket to the metadata
agent, which finds the instance's port over RPC and forwards the request to
the compute service's metadata API, signed with the shared secret.
"""
