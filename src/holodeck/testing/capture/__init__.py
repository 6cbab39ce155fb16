"""Conversations made test cases (`holodeck test capture`, chat's `/save-case`): read a
conversation (`conversation`), take out what must not be kept (`redaction`), write the
case (`case`) where `holodeck test` finds it (`case_writer`); and served turns sampled
from a request log (`request_log`)."""
