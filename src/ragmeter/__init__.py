"""ragmeter: measure retrieval for language models, with honest intervals."""

__version__ = "0.1.0"
