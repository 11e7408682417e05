"""Graph stores behind one interface (:class:`medkg.store.base.GraphStore`)."""
