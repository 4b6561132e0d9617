"""placeholder"""


def operators():
    return []
