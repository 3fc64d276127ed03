"""The Linux bridge L2 agent: flat and VXLAN networks on kernel bridges."""
