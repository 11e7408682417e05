"""The SAC-KG growth loop (the grow stage's operations): the sentence corpus
(``corpus``), the generator (``generator``), the pruner (``pruner``) and the
loop itself (``loop``: generate, verify, correct, store, prune)."""
