"""The runtime: an `Agent` built from an `AgentSpec`, whose turns stream typed events.

    >>> from holodeck.runtime import build_agent
    >>> agent = build_agent(spec, model="test")  # doctest: +SKIP
    >>> async for event in agent.run("What's the weather in Paris?"):  # doctest: +SKIP
    ...     print(event)

Only this package (through `holodeck.llm`) talks to model providers; the CLI, the
test runner and the server consume the same event stream.
"""
