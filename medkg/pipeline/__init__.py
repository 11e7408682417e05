"""The build as stages: each module is one thin stage over the pure operations
in ``construction/``, ``linking/``, ``retrieval/`` and ``llm/``; ``stages.py``
lists the build's stages in order; ``state.py`` says what each one finished."""
