"""VPN as a service: IPsec site-to-site connections on routers (upstream's neutron-vpnaas)."""
