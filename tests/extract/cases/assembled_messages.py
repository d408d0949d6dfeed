# Messages assembled before the raise keep their pieces (form "assembled"): a local list of
# messages joined into the message (its appends are the alternatives; a list with no text of its
# own beside its pieces stays opaque, keyed by where it is raised), and a message a helper of the
# module returns: a method with no raise of its own, a name bound to a helper's result
# (`msg = _why(size)`: each of its returns, one piece), a function nested in the method. A
# helper errcat cannot see (`make_it`) leaves the message opaque, with no alternatives.
def check(cfg):
    invalid_reasons = []
    if cfg.dcp:
        invalid_reasons.append("DCP not supported")
    if cfg.pp > 1:
        invalid_reasons.append(f"pipeline parallel size {cfg.pp} is not supported")
    if invalid_reasons:
        raise ValueError(f"Selected backend is not valid: {', '.join(invalid_reasons)}")


def validate(items):
    errors = ["no items given"] if not items else []
    for item in items:
        if item < 0:
            errors.append(f"item {item} is negative")
        errors += ["item list changed"]
    raise RuntimeError("\n".join(errors))


def _why(size):
    if size > 10:
        return f"size {size} is over the limit"
    return "size is not a number"


class Loader:
    def _reason(self, name):
        return "weights of %s are missing" % name

    def load(self, name, size):
        if name:
            raise ValueError(self._reason(name))
        msg = _why(size)
        raise TypeError(msg)

    def nested(self, x):
        def explain(v):
            return f"nested helper says {v}"
        raise KeyError(explain(x))

    def unknown(self, x):
        raise KeyError(make_it(x))
