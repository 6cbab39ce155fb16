"""`holodeck chat`: the command (`command`), a conversation and its session file, the
terminal loop, slash commands, the view and the transcript."""
