"""The DHCP agent scheduler plugin: scheduling, its RPC endpoint, its notifier."""
