"""The typed definition both formats load into: `AgentSpec`, its tools, evaluations,
test cases, and the settings (config.yaml) models."""
