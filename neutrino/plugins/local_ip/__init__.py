"""The ``local_ip`` service plugin."""
