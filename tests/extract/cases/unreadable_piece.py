# A list given a message errcat cannot read keeps the pieces it can, the unreadable one as a
# field matching anything (vLLM's validate_configuration appends what another method returns
# beside its own texts); a list of nothing errcat can read is no list of messages (no
# alternatives).
def validate(cls, head_size, dtype):
    invalid_reasons = []
    if not cls.supports_head_size(head_size):
        invalid_reasons.append("head_size not supported")
    combination_reason = cls.supports_combination(head_size, dtype)
    if combination_reason is not None:
        invalid_reasons.append(combination_reason)
    if invalid_reasons:
        raise ValueError(f"Backend not valid: {', '.join(invalid_reasons)}")


def tensors(xs):
    out = []
    for x in xs:
        out.append(x.shape)
    raise ValueError(f"Bad shapes: {', '.join(out)}")
