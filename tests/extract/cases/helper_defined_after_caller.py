# A helper defined below its caller is read: `wrapped = wrap(url, e)`, then a raise of it
# under an isinstance test, has the class the test names and the message the helper's return
# constructs ("no media at {url}").
def load(url, e):
    wrapped = wrap(url, e)
    if isinstance(wrapped, KeyError):
        raise wrapped


def wrap(url, e):
    if e:
        return KeyError(f"no media at {url}")
    return e
