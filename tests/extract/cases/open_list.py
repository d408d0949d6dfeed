# A list the function did not start (`error_msg = self._validate_features()`, a parameter)
# that messages are appended to: the pieces appended are the message's, and what it held before
# is one piece matching anything ({error_msg}, {reasons}), so the pattern matches a message
# with text before the appended pieces too.
class Adapter:
    def validate(self, limit):
        error_msg = self._validate_features()
        if self.r > limit:
            error_msg.append(f"LoRA rank {self.r} is greater than max_lora_rank {limit}.")
        if error_msg:
            raise ValueError(" ".join(error_msg))


def check(reasons, x):
    reasons.append("x is negative")
    raise ValueError("; ".join(reasons))
