"""The processes on hosts: they reach the server only over the message bus."""
