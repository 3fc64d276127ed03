"""ML2, the modular layer-2 core: type drivers (this package) turn network
types and configured ranges into segments; mechanism and extension drivers
come later."""
