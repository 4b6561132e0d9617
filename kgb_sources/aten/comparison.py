def operators():
    return []
