# Raises inside kernel(...): the checker must answer runtime_error with the message.
def kernel(x):
    raise RuntimeError("deliberate failure for the test suite")
