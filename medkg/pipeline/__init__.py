"""The build as stages: each module is one thin stage over the pure operations
in ``reading/``, ``extraction/``, ``growth/``, ``linking/``, ``tagtree/``,
``retrieval/`` and ``llm/``; ``stages.py`` lists the build's stages in order;
``marks.py`` says what each document finished, ``medkg.fingerprints`` what each
whole-workspace stage did."""
