"""The reference stack program (`__main__.py`) and its typed configuration."""
