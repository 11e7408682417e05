"""medkg: a trustworthy, layered medical knowledge graph with cited, defined answers.

Import what you need from the submodules (``medkg.workspace.Workspace`` is the
entry point); importing ``medkg`` itself loads nothing heavy.
"""

__version__ = "0.1.0"
