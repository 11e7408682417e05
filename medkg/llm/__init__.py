"""The LLM engine: a small chat-model port with two backends (any
OpenAI-compatible endpoint; a local GGUF file through llama-cpp-python),
validated structured output, an on-disk response cache, a ledger of calls,
tokens and cost, and versioned prompts for every stage."""
