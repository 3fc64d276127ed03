"""The metering agent: label rules as nftables counters in router namespaces."""
