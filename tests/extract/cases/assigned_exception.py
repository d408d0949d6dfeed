# An exception assigned to a name and raised later (`err = ValueError(...)`, then `raise err`
# under an if) is the raise's exception and message.
def f(a):
    err = ValueError(f"bad {a}")
    if a:
        raise err
