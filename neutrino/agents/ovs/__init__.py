"""The Open vSwitch L2 agent: br-int access ports, br-tun tunnels, provider bridges."""
