"""Backend implementations. Import them through :func:`freshwiki.llm.open_llm`."""
