"""torch.utils.data.dataloader: the iterator classes whose __next__ fetches a batch."""


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._loader = loader
        self._i = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self._i >= len(self._loader.dataset):
            raise StopIteration
        item = self._loader.dataset[self._i]
        self._i += 1
        return item


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    pass


class DataLoader:
    def __init__(self, dataset):
        self.dataset = dataset

    def __iter__(self):
        return _SingleProcessDataLoaderIter(self)
