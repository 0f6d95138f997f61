"""torch.optim.optimizer's global step hooks (torch >= 2.0 semantics: hook(optimizer, args, kwargs))."""
_pre_hooks, _post_hooks = [], []


def register_optimizer_step_pre_hook(hook):
    _pre_hooks.append(hook)


def register_optimizer_step_post_hook(hook):
    _post_hooks.append(hook)


class Optimizer:
    def __init__(self, params):
        self.params = list(params)

    def _step(self):
        raise NotImplementedError

    def step(self, *args, **kwargs):
        for h in _pre_hooks:
            h(self, args, kwargs)
        out = self._step()
        for h in _post_hooks:
            h(self, args, kwargs)
        return out


class SGD(Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params)
        self.lr = lr

    def _step(self):
        for p in self.params:
            p[0] -= self.lr * p[1]
