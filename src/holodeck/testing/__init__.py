"""`holodeck test`: run an agent's test cases, check its tool use, score its answers with
metrics, and report the results for people and CI."""
