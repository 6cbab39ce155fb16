"""The runtime: an `Agent` made from an `AgentSpec`, conversations with it (`Session`),
and the events its turns stream. The public names are re-exported by `holodeck`.

    >>> import asyncio
    >>> from holodeck import Agent, RunOptions, ToolCallFinished, load_agent
    >>> async def tools_called() -> list[str]:
    ...     agent = Agent(load_agent("examples/weather"), RunOptions(model="test"))
    ...     async with agent, agent.session() as session:
    ...         return [
    ...             event.name
    ...             async for event in session.run("Weather in Oslo?")
    ...             if isinstance(event, ToolCallFinished)
    ...         ]
    >>> asyncio.run(tools_called())
    ['get_weather', 'get_forecast']

Only this package (through `holodeck.llm`) talks to model providers; the CLI, the
test runner and the server consume the same event stream.
"""
