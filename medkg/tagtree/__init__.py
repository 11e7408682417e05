"""The tag tree (built by the summarise stage, read by U-Retrieval and global
search): each chunk's tag summary (``tags``), the tree of them (``tree``)."""
