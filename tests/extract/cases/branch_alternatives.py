# A message set to one text per branch keeps each branch's text as an alternative (form
# "assembled", issue #19): an if/elif/else (`pick`), an f-string whose field was set before the
# if and in it (`hinted`), a match with a catch-all case (`warn`). A parameter a path leaves as it
# was is no text (`report`: no alternatives); a branch that raises gives nothing to the code after
# it (`leaving`: "Input is empty." alone, form "variable").
import logging

logger = logging.getLogger(__name__)


def pick(kind, v):
    if kind == "a":
        msg = "Backend A is not available on this platform."
    elif kind == "b":
        msg = f"Backend B needs compute capability {v} or newer."
    else:
        msg = "No backend was selected."
    raise ValueError(msg)


def hinted(name):
    msg = f"Unknown model {name}."
    if name.startswith("hf"):
        msg = f"Unknown model {name}; did you mean a local path?"
    raise ValueError(f"Cannot load: {msg}")


def report(failure_type, msg, context):
    if msg:
        failure_type = f"{failure_type}. {msg}"
    logger.error("Transfer failure: %s | Context: %s", failure_type, context)


def warn(level):
    match level:
        case 1:
            text = "Cache is nearly full."
        case _:
            text = "Cache is full; requests wait."
    logger.warning(text)


def leaving(x):
    msg = "Input is empty."
    if x:
        msg = "Input is too long."
        raise TypeError(msg)
    raise ValueError(msg)
