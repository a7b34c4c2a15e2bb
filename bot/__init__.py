"""Chat adapters (Slack, Teams, terminal), conversation state, document links: the composition root."""
