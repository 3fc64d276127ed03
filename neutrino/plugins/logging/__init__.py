"""The ``log`` service plugin (upstream's ``logging`` extension)."""
