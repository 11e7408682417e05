"""medkg inside other frameworks (optional extras): ``langchain``."""
