# `raise WidgetError.from_size(size)`: a class's factory method keeps the class as the raise's
# exception, resolved in the module (pkg.class_factory.WidgetError).
class WidgetError(Exception):
    @classmethod
    def from_size(cls, size):
        return cls(f"bad size {size}")


def check(size):
    raise WidgetError.from_size(size)
