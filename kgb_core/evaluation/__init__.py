"""Evaluation: the single judge of every candidate.

The harness side (``pool``) screens a source, hands it to a worker process and turns whatever
happens to that process into a verdict; the worker side (``worker``, ``checker``) imports the
candidate, checks it against the reference on fresh inputs and times both.
"""
