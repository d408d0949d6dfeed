# A list of messages a helper of the module builds, joined by its caller (issue #19): the
# helper's appends and the caller's are the message's pieces. A method defined further down with
# no site of its own is walked only for what it returns (`Adapter._features`). A list from a
# function errcat cannot see (imported) holds one piece matching anything ({why}), beside the
# caller's own appends.
from other import external_reasons


class Adapter:
    def validate(self, limit):
        error_msg = self._features()
        if self.rank > limit:
            error_msg.append(f"Adapter rank {self.rank} is greater than max_rank {limit}.")
        if error_msg:
            raise ValueError(f"{' '.join(error_msg)}")

    def _features(self):
        found = []
        if self.dora:
            found.append("DoRA is not supported.")
        if self.bias:
            found.append("Adapter bias is not supported.")
        return found


def _reasons(cfg):
    out = []
    if cfg.tp > 1:
        out.append(f"tensor parallel size {cfg.tp} is not supported")
    return out


def check(cfg):
    why = _reasons(cfg)
    why.append("the backend was built without it")
    raise RuntimeError("Cannot use the backend: " + "; ".join(why))


def unseen(cfg):
    why = external_reasons(cfg)
    why.append("and one more")
    raise RuntimeError("Not valid: " + ", ".join(why))
