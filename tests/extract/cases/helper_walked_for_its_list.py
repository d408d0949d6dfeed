# A helper walked for the list it returns adds no site of its own: its raise is one site, made
# by its own walk (`Late._items`), and the caller's message has the helper's pieces.
class Late:
    def use(self):
        items = self._items()
        raise ValueError(", ".join(items))

    def _items(self):
        items = ["first reason"]
        if self.x:
            raise KeyError("a raise in the helper is one site")
        return items
