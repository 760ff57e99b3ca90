"""The stand-in for nki.typing: tensor annotations (`X: nt.tensor[128, 512]`,
`nt.tensor[[K, M], nl.bfloat16]`, `nt.tensor[nt.mutable]`, `nt.mutable_tensor`).

An annotation changes nothing in the kernel; a parameter annotated with a shape
of integers is held to it: the tensor --arg gives must have that shape
(cli._kernel_args), else an error naming both.
"""
from .errors import NkiError


class Annotation:
    """What `nt.tensor[...]` makes: the shape (a tuple of ints, or None when it names none) and dtype."""

    def __init__(self, key=()):
        items = key if isinstance(key, tuple) else (key,)
        if items and isinstance(items[0], (list, tuple)):
            shape, rest = tuple(items[0]), items[1:]
        else:
            shape = tuple(k for k in items if isinstance(k, int) and not isinstance(k, bool))
            rest = tuple(k for k in items if not isinstance(k, int) or isinstance(k, bool))
            if len(shape) != len(items) - len(rest):
                shape = ()
        self.shape = shape if shape and all(isinstance(s, int) and not isinstance(s, bool) for s in shape) \
            else None
        self.rest = rest

    def __getitem__(self, key):
        return Annotation(key)


tensor = Annotation()
mutable_tensor = Annotation()
mutable = "mutable"


def check_argument(name, annotation, shape):
    """A tensor argument against its parameter's annotation (an error when the shapes differ)."""
    if isinstance(annotation, Annotation) and annotation.shape is not None and \
            tuple(annotation.shape) != tuple(shape):
        raise NkiError("kernel argument '%s' is annotated nt.tensor%s, but --arg gives it the shape %s"
                       % (name, list(annotation.shape), list(shape)), False)
