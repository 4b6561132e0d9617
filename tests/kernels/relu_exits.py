# Ends its own process mid-call (SystemExit is no Exception, so nothing in the worker catches
# it): the harness must answer crashed and start a new worker.
def kernel(x):
    raise SystemExit(3)
