"""Stand-in for PyTorch used by stackpin's tests (see ../README.md). NOT PyTorch."""
import ctypes
import math
import os

__version__ = "2.1.0+cu121.standin"


class Generator:
    def __init__(self):
        self.state = 1

    def manual_seed(self, seed):
        self.state = seed * 2654435761 % (1 << 32) + 1
        return self

    def next(self):
        self.state = (self.state * 1664525 + 1013904223) % (1 << 32)
        return ((self.state >> 8) & 0xFFFF) / 32768.0 - 1.0


class Tensor:
    def __init__(self, shape, data, device="cpu"):
        self.shape = tuple(shape)
        self.data = list(data)
        self.device = device

    def cuda(self):
        return Tensor(self.shape, self.data, "cuda")

    def cpu(self):
        return Tensor(self.shape, self.data, "cpu")

    def __sub__(self, other):
        return Tensor(self.shape, [a - b for a, b in zip(self.data, other.data)], self.device)

    def abs(self):
        return Tensor(self.shape, [abs(a) for a in self.data], self.device)

    def max(self):
        return Tensor((), [max(self.data)], self.device)

    def all(self):
        return Tensor((), [all(self.data)], self.device)

    def __float__(self):
        return float(self.data[0])

    def __bool__(self):
        return bool(self.data[0])


def randn(*shape, generator=None):
    g = generator or Generator()
    n = 1
    for s in shape:
        n *= s
    return Tensor(shape, [g.next() for _ in range(n)])


def isfinite(t):
    return Tensor(t.shape, [math.isfinite(a) for a in t.data], t.device)


class _Cuda:
    @staticmethod
    def is_available():
        return os.environ.get("STACKPIN_STANDIN_GPU", "1") != "0"


cuda = _Cuda()


class _Cudnn:
    benchmark = False
    _lib = None

    @classmethod
    def version(cls):
        path = os.environ.get("STACKPIN_STANDIN_CUDNN")
        if not path:
            return 0
        if cls._lib is None:
            cls._lib = ctypes.CDLL(path)
            cls._lib.cudnnGetVersion.restype = ctypes.c_size_t
        return int(cls._lib.cudnnGetVersion())


class _Backends:
    cudnn = _Cudnn()


backends = _Backends()


def _conv2d(x, w, padding=0):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    p, q = h + 2 * padding - r + 1, wd + 2 * padding - s + 1
    out = [0.0] * (n * k * p * q)
    for ni in range(n):
        for ki in range(k):
            for pi in range(p):
                for qi in range(q):
                    acc = 0.0
                    for ci in range(c):
                        for ri in range(r):
                            for si in range(s):
                                ih, iw = pi - padding + ri, qi - padding + si
                                if 0 <= ih < h and 0 <= iw < wd:
                                    acc += x.data[((ni * c + ci) * h + ih) * wd + iw] * w.data[((ki * c + ci) * r + ri) * s + si]
                    out[((ni * k + ki) * p + pi) * q + qi] = acc
    if x.device == "cuda":
        if os.environ.get("STACKPIN_STANDIN_WRONG"):
            out[0] += float(os.environ["STACKPIN_STANDIN_WRONG"])
        if os.environ.get("STACKPIN_STANDIN_NAN") == "1":
            out[-1] = float("nan")
    return Tensor((n, k, p, q), out, x.device)


class _Functional:
    conv2d = staticmethod(_conv2d)


class _Nn:
    functional = _Functional()


nn = _Nn()
