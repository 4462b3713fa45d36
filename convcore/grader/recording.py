"""Record every write a piece of NumPy code makes into arrays, with the line that made it.

Used to play a student's own convolution code on the page (``convcore.grader.code_trace``):
the code runs on arrays of ``RecordedArray``, an ndarray subclass, and while a
``Recording`` is active every write into one (``a[idx] = v``, ``a[idx] += v``, in-place
operators and ufuncs with ``out=``, ``np.add.at``, ``a.fill``, ``np.copyto``) becomes a
``Write``: the buffer it landed in (a ``Root``), the cells it targets (flat indices of
that buffer, from any index: integer, slice, fancy, boolean, through any view), each
cell's value before and after, and the line of the code's file that made it.

Which cells a view's write targets is read from memory addresses: every view of a
buffer maps its elements to the buffer's cells by its data pointer and strides, so
``dx_pad[:, :, 1:-1, 1:-1]``, transposes and reshapes need no bookkeeping. A buffer
becomes a Root the first time something writes into it (or when a patched NumPy
function creates it: ``np.zeros``, ``np.pad``, ``np.einsum``, …, listed in
``CREATORS``); a Root gets a ``Write`` of its first values (``created``), but one made zero-filled by a
creator (``np.zeros``), so that replaying the writes from zeros rebuilds every Root.

While a Recording is active, the NumPy functions of ``CREATORS`` are replaced in the
``numpy`` module (and in the globals of the code's modules that imported them by name)
by versions that return RecordedArray roots; everything else NumPy does is unchanged.
Nothing is guessed: code that computes an array outside these functions and returns it
unwritten is reported by the caller as one whole-array write.

``Recording(paths, max_writes, max_cells)``: a context manager; ``.writes`` (in order),
``.roots``, ``.capped`` (the writes made past a cap, not recorded: the writes kept are
always the first ones), ``.locate(array)``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CREATORS", "RecordedArray", "Recording", "Root", "Write", "recorded"]

# NumPy functions whose results become Roots while recording; the zero-filled ones make
# no write, the others a "created" write of their values at the calling line
ZERO_CREATORS = ("zeros", "zeros_like", "empty", "empty_like")
CREATORS = (*ZERO_CREATORS, "ones", "ones_like", "full", "full_like", "pad", "copy", "array", "einsum", "tensordot")
FRAMES = 40  # frames searched upward for the code's own line
MAX_READ_CELLS = 4096  # cells read between two writes that the second carries, at most


@dataclass
class Root:
    """A buffer that writes landed in: ``array`` (the owner, its own memory), its index
    in creation order, the variable name the code gave it (found later: ``name``),
    ``initial`` its values when first seen, the line that created it (None: unknown)."""

    index: int
    array: np.ndarray
    initial: np.ndarray
    line: int | None
    name: str | None = None
    pass_name: str | None = None
    given: bool = False  # an input the code was called with (``register``)
    ptr: int = 0  # its data pointer
    _flat_of_offset: np.ndarray | None = field(default=None, repr=False)
    _flat: np.ndarray | None = field(default=None, repr=False)

    def flat(self) -> np.ndarray:
        """The buffer's cells in C order, (size,): a view of a C-contiguous buffer, kept;
        a copy of another."""
        if self._flat is not None:
            return self._flat
        if not self.array.flags.c_contiguous:
            return self.array.reshape(-1, order="C")
        self._flat = self.array.reshape(-1)
        return self._flat

    def flat_of_offset(self) -> np.ndarray | None:
        """{element offset from the data pointer: C-order flat index}, for a buffer that is
        not C-contiguous (None when it is: the offset is the flat index)."""
        if self._flat_of_offset is None and not self.array.flags.c_contiguous:
            offsets = _offsets(self.array, self.array)
            table = np.full(int(offsets.max()) + 1, -1, dtype=np.int64)
            table[offsets.ravel()] = np.arange(offsets.size)
            self._flat_of_offset = table
        return self._flat_of_offset


@dataclass
class Write:
    """One write: into ``root`` (its index), the target ``cells`` (sorted unique flat
    indices), their values ``before`` and ``after``, the code's ``line`` (None when no
    frame of the code's files made it), the pass it ran in, and ``how`` it was made
    ("set", "ufunc", "at", "created")."""

    root: int
    cells: np.ndarray
    before: np.ndarray
    after: np.ndarray
    line: int | None
    pass_name: str | None
    how: str
    reads: list[tuple[int, np.ndarray]] = field(default_factory=list)  # (root, cells) indexed since the last write


def _offsets(view: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Each element of ``view`` as an element offset from ``owner``'s data pointer: the
    view's own shape and strides laid over the offsets 0, 1, … of the owner's elements."""
    if view.size == 0:
        return np.empty(view.shape, dtype=np.int64)
    item, word = owner.itemsize, np.dtype(np.int64).itemsize
    start = view.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    offsets = np.arange(owner.size, dtype=np.int64)
    strides = tuple(stride // item * word for stride in view.strides)
    return np.ndarray(view.shape, np.int64, offsets, start // item * word, strides).copy()


def _owner(array: np.ndarray) -> np.ndarray:
    """The ndarray that owns ``array``'s memory (``array`` itself for an owner)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _geometry(view: np.ndarray, ptr: int) -> tuple[tuple[int, ...], tuple[int, ...], int, tuple[int, ...]]:
    """(shape, strides, the element offset of its first element from ``ptr``, the data
    pointer of the buffer it views, its strides in elements): kept on a RecordedArray,
    whose cells a loop reads and writes thousands of times (an in-place ``a.shape = …``
    makes it anew; a buffer moved by ``a.resize(…, refcheck=False)`` is not followed)."""
    shape, strides = view.shape, view.strides
    known = getattr(view, "_geometry", None)
    if known is not None and known[0] == shape and known[1] == strides:
        return known
    item = view.itemsize
    start = (view.__array_interface__["data"][0] - ptr) // item
    known = (shape, strides, start, tuple(stride // item for stride in strides))
    if isinstance(view, RecordedArray):
        view._geometry = known
    return known


def _plain(value: Any) -> Any:
    return value.view(np.ndarray) if isinstance(value, RecordedArray) else value


_ACTIVE: list[Recording] = []  # the recording in progress (at most one)

# sys.modules' values when last indexed, and its modules by file: a Recording is entered
# for every run of the code (the judging runs are dozens per case), and the index is
# built again only when sys.modules holds other module objects (compared by identity;
# the list held keeps them alive, so an id is never reused)
_MODULE_INDEX: tuple[list[Any], dict[str, list[Any]]] = ([], {})


def _modules_from(paths: set[str]) -> list[Any]:
    """The loaded modules whose file is one of ``paths``."""
    global _MODULE_INDEX
    modules = list(sys.modules.values())
    seen, by_file = _MODULE_INDEX
    if modules != seen:
        by_file = {}
        for module in modules:
            path = getattr(module, "__file__", None)
            if isinstance(path, str):
                by_file.setdefault(path, []).append(module)
        _MODULE_INDEX = (modules, by_file)  # (one assignment: a thread sees the old or the new)
    return [module for path in paths for module in by_file.get(path, ())]


class RecordedArray(np.ndarray):
    """An ndarray whose writes the active Recording sees (module notes). Without an
    active Recording it is an ndarray."""

    def __setitem__(self, index: Any, value: Any) -> None:
        if _ACTIVE and _ACTIVE[-1].on:
            _ACTIVE[-1].set(self, index, value)
        else:
            np.ndarray.__setitem__(self.view(np.ndarray), index, value)

    def __getitem__(self, index: Any) -> Any:
        result = np.ndarray.__getitem__(self, index)
        if _ACTIVE and _ACTIVE[-1].on and _ACTIVE[-1].reading:
            _ACTIVE[-1].read(self, index)
        return result

    def __array_finalize__(self, obj: Any) -> None:
        # the code's line that made this array (a view: ``dx = dx_pad[...]``), while recording
        if _ACTIVE and _ACTIVE[-1].on:
            self._line = _ACTIVE[-1].line()

    @property
    def flat(self) -> Any:
        """``a.flat``, whose writes (``a.flat[k] = v``) are recorded too."""
        plain = np.ndarray.flat.__get__(self.view(np.ndarray))
        return _RecordedFlat(self, plain) if _ACTIVE and _ACTIVE[-1].on else plain

    def fill(self, value: Any) -> None:
        self.__setitem__(Ellipsis, value)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, out: Any = None, **kwargs: Any) -> Any:
        plain = tuple(_plain(i) for i in inputs)
        targets: list[np.ndarray] = []
        if out is not None:
            kwargs["out"] = tuple(_plain(o) for o in out)
            targets = [o for o in out if isinstance(o, RecordedArray)]
        recording = _ACTIVE[-1] if _ACTIVE and _ACTIVE[-1].on else None
        if recording is not None and method == "at" and isinstance(inputs[0], RecordedArray):
            return recording.mutate(inputs[0], inputs[1], lambda: getattr(ufunc, method)(*plain, **kwargs), "at")
        if recording is not None and targets:
            if len(targets) > 1:
                raise ValueError("recording: a ufunc with several recorded outputs is not supported")
            recording.mutate(targets[0], Ellipsis, lambda: getattr(ufunc, method)(*plain, **kwargs), "ufunc")
            return out[0] if len(out) == 1 else out
        result = getattr(ufunc, method)(*plain, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return recorded(result)

    def __array_function__(self, func: Callable, types: Iterable[type], args: tuple, kwargs: dict) -> Any:
        recording = _ACTIVE[-1] if _ACTIVE and _ACTIVE[-1].on else None
        if recording is not None and args and isinstance(args[0], RecordedArray):
            target, rest = args[0], tuple(_plain(a) for a in args[1:])
            if func is np.copyto:
                recording.mutate(target, Ellipsis, lambda: np.copyto(_plain(target), *rest, **kwargs), "set")
                return None
            if func is np.put:  # (flat indices)
                recording.mutate(target, rest[0], lambda: np.put(_plain(target), *rest, **kwargs), "set", flat=True)
                return None
            if func in (np.putmask, np.place):  # (a mask of the array's shape)
                mask = np.asarray(rest[0], dtype=bool)
                recording.mutate(target, mask, lambda: func(_plain(target), *rest, **kwargs), "set")
                return None
        return super().__array_function__(func, types, args, kwargs)


def recorded(result: Any) -> Any:
    """``result`` as a RecordedArray when it is an ndarray (a view: no copy)."""
    if isinstance(result, np.ndarray) and not isinstance(result, RecordedArray):
        return result.view(RecordedArray)
    if isinstance(result, tuple):
        return tuple(recorded(r) for r in result)
    return result


class Recording:
    """The writes made while it is active (module notes). ``paths``: the code's files
    (whose lines the writes name); ``max_writes``: the writes recorded at most."""

    def __init__(self, paths: Iterable[str], max_writes: int = 50_000, max_cells: int = 300_000):
        self.paths = set(paths)
        self.max_writes = max_writes
        self.max_cells = max_cells  # the cells of all writes together, at most
        self.cells_kept = 0
        self.writes: list[Write] = []
        self.roots: list[Root] = []
        self.capped = 0  # writes made past max_writes
        self.on = False
        self.reading = True  # (off once the writes are capped)
        self._reads: dict[int, set[int]] = {}
        self._read_cells = 0
        self.pass_name: str | None = None
        self._by_owner: dict[int, Root] = {}
        self._saved: list[tuple[Any, str, Any]] = []
        self.frames: dict[Any, Any] = {}  # the code's latest frame per function, to name the roots from its locals

    # -- the code's line ------------------------------------------------------------

    def line(self) -> int | None:
        """The line of the innermost frame of the code's files, or None."""
        frame = sys._getframe(2)
        for _ in range(FRAMES):
            if frame is None:
                return None
            if frame.f_code.co_filename in self.paths:
                self.frames[frame.f_code] = frame
                return frame.f_lineno
            frame = frame.f_back
        return None

    # -- roots ------------------------------------------------------------------------

    def root_of(self, array: np.ndarray, line: int | None = None, created: bool = True) -> Root:
        """The Root of ``array``'s memory, made the first time it is seen, with a "created"
        write of its values unless ``created`` is False (a zero-filled creator's)."""
        owner = _owner(array)
        found = self._by_owner.get(id(owner))
        if found is not None:
            return found
        plain = owner.view(np.ndarray)
        root = Root(len(self.roots), plain, plain.copy(), line, pass_name=self.pass_name)
        root.ptr = plain.__array_interface__["data"][0]
        self._by_owner[id(owner)] = root
        self.roots.append(root)
        if created:  # (whatever its values: the writes' sequence must not depend on them)
            cells = np.arange(plain.size, dtype=np.int64)
            values = plain.ravel().astype(np.float64, copy=True) if plain.dtype.kind in "biuf" else None
            if values is not None:
                self._append(Write(root.index, cells, np.zeros(plain.size), values, line, self.pass_name, "created"))
        return root

    def cells(self, array: np.ndarray, root: Root) -> np.ndarray:
        """The root's flat index of each element of ``array`` (a view of its memory)."""
        offsets = _offsets(array, root.array)
        table = root.flat_of_offset()
        return offsets if table is None else table[offsets]

    def locate(self, array: np.ndarray) -> tuple[Root, np.ndarray] | None:
        """(the Root, the flat index of each element) of an array of a known Root's
        memory, or None."""
        if not isinstance(array, np.ndarray):
            return None
        root = self._by_owner.get(id(_owner(array)))
        if root is None or array.itemsize != root.array.itemsize:
            return None
        return root, self.cells(array, root)

    # -- writes -----------------------------------------------------------------------

    def _append(self, write: Write) -> None:
        if self.capped or len(self.writes) >= self.max_writes or self.cells_kept + write.cells.size > self.max_cells:
            self.capped += 1  # (from the first write past a cap on, none: the writes kept are a prefix)
            self.reading = False
            return
        self.cells_kept += write.cells.size
        write.reads = [(root, _cells_of(parts)) for root, parts in self._reads.items()]
        self._reads, self._read_cells = {}, 0
        self.writes.append(write)

    def read(self, array: np.ndarray, index: Any) -> None:
        """Note the cells ``array[index]`` names, of a known Root (the reads the next write
        carries, at most MAX_READ_CELLS)."""
        self.on = False
        try:
            root = self._by_owner.get(id(_owner(array)))
            if root is None or array.itemsize != root.array.itemsize or self._read_cells >= MAX_READ_CELLS:
                return
            one = _one_cell(array, root, index)
            if one is not None:  # (most reads: one cell, kept as a number until the write)
                self._reads.setdefault(root.index, set()).add(one)
                self._read_cells += 1
                return
            try:
                cells = np.asarray(self.cells(array, root)[index]).ravel()
            except (IndexError, TypeError, ValueError):
                return
            self._reads.setdefault(root.index, set()).update(cells.tolist())
            self._read_cells += cells.size
        finally:
            self.on = True

    def register(self, array: np.ndarray, name: str) -> None:
        """Make ``array``'s memory a Root named ``name`` (an input: no write of its values)."""
        if id(_owner(array)) not in self._by_owner:
            root = self.root_of(array, None, created=False)
            root.name, root.given = name, True

    def mutate(self, target: np.ndarray, index: Any, do: Callable[[], Any], how: str, flat: bool = False) -> Any:
        """Run ``do`` (which writes ``target[index]``; with ``flat``, ``target.flat[index]``)
        and record the write."""
        if self.capped:  # (past the cap nothing more is kept: the write only counted)
            self.on = False
            try:
                self.capped += 1
                return do()
            finally:
                self.on = True
        line = self.line()
        self.on = False  # (what this does with arrays is not the code's)
        try:
            root = self.root_of(target, line)
            if target.itemsize != root.array.itemsize:
                cells = np.arange(root.array.size, dtype=np.int64)  # (a reinterpreting view: every cell)
            elif not flat and (one := _one_cell(target, root, index)) is not None:  # (a[n, f, i, j]: no index grid)
                cells = np.array([one], dtype=np.int64)
            else:
                grid = self.cells(target, root)
                cells = np.unique(np.asarray((grid.ravel() if flat else grid)[index]).ravel())
            before = _values(root, cells)
            result = do()
            after = _values(root, cells)
            self._append(Write(root.index, cells, before, after, line, self.pass_name, how))
            return result
        finally:
            self.on = True

    def set(self, target: RecordedArray, index: Any, value: Any) -> None:
        """``target[index] = value``, recorded; a view written back onto itself (what
        ``a[s] += v`` does after its in-place add) is no write."""
        if isinstance(value, np.ndarray) and self._onto_itself(target, index, value):
            return
        self.mutate(target, index, lambda: np.ndarray.__setitem__(target.view(np.ndarray), index, value), "set")

    def _onto_itself(self, target: np.ndarray, index: Any, value: np.ndarray) -> bool:
        try:
            view = np.ndarray.__getitem__(target.view(np.ndarray), index)
        except (IndexError, TypeError, ValueError):
            return False
        return (
            isinstance(view, np.ndarray)
            and view.shape == value.shape
            and view.strides == value.strides
            and view.__array_interface__["data"][0] == value.__array_interface__["data"][0]
        )

    # -- numpy's creators ---------------------------------------------------------------

    def _creator(self, name: str, original: Callable) -> Callable:
        zero = name in ZERO_CREATORS

        def create(*args: Any, **kwargs: Any) -> Any:
            if not self.on:
                return original(*args, **kwargs)
            out = kwargs.get("out")
            if isinstance(out, np.ndarray):  # (np.einsum(..., out=dw): a write into dw)
                plain = {**kwargs, "out": _plain(out)}
                self.mutate(out, Ellipsis, lambda: original(*(_plain(a) for a in args), **plain), "ufunc")
                return out
            line = self.line()
            self.on = False
            try:
                result = original(*(_plain(a) for a in args), **kwargs)
                if not isinstance(result, np.ndarray) or result.dtype.kind not in "biuf":
                    return recorded(result)
                result = np.ascontiguousarray(result)
                self.root_of(result, line, created=not zero)
                return result.view(RecordedArray)
            finally:
                self.on = True

        create.__name__ = original.__name__
        create.__doc__ = original.__doc__
        return create

    def __enter__(self) -> Recording:
        if _ACTIVE:
            raise RuntimeError("a recording is already active")
        patched = {name: self._creator(name, getattr(np, name)) for name in CREATORS}
        originals = {id(getattr(np, name)): name for name in CREATORS}
        self._saved = [(np, name, getattr(np, name)) for name in CREATORS]
        for module in _modules_from(self.paths):  # `from numpy import zeros` in the code's modules
            for key, value in list(vars(module).items()):
                if id(value) in originals and not key.startswith("__"):
                    self._saved.append((module, key, value))
                    setattr(module, key, patched[originals[id(value)]])
        for name, function in patched.items():
            setattr(np, name, function)
        _ACTIVE.append(self)
        self.on = True
        return self

    def __exit__(self, *exc: Any) -> None:
        self.on = False
        _ACTIVE.remove(self)
        for holder, key, value in reversed(self._saved):
            setattr(holder, key, value)
        self._saved = []

    # -- names --------------------------------------------------------------------------

    def name_roots(self, taken: Iterable[str] = ()) -> None:
        """Give each Root the name of the code's variable that held it (or a view of it),
        from the locals of the code's frames, innermost last; ``array1``, ``array2``, …
        where none did. Names already ``taken`` (or given) get a number."""
        used = set(taken) | {r.name for r in self.roots if r.name}
        for frame in self.frames.values():  # (the first pass first: its xp is xp)
            for key, value in frame.f_locals.items():
                if not isinstance(value, np.ndarray) or key.startswith("_"):
                    continue
                root = self._by_owner.get(id(_owner(value)))
                if root is not None and root.name is None:
                    name = key
                    while name in used:  # (xp in the forward and again in the backward: xp′)
                        name += "′"
                    root.name = name
                    used.add(name)
        for root in self.roots:
            if root.name is None:
                k = 1
                while f"array{k}" in used:
                    k += 1
                root.name = f"array{k}"
                used.add(root.name)


class _RecordedFlat:
    """``a.flat`` while recording: its reads as numpy's, its writes recorded."""

    def __init__(self, array: RecordedArray, plain: Any):
        self._array, self._plain = array, plain

    def __getitem__(self, index: Any) -> Any:
        return self._plain[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        def do() -> None:
            self._plain[index] = _plain(value)

        _ACTIVE[-1].mutate(self._array, index, do, "set", flat=True)

    def __iter__(self) -> Any:
        return iter(self._plain)

    def __len__(self) -> int:
        return len(self._plain)

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        return self._plain.__array__(*args, **kwargs)


def _one_cell(view: np.ndarray, root: Root, index: Any) -> int | None:
    """The root's flat index of the one cell of ``view`` (of the root's memory) that an
    index of plain integers names (negative ones counted from the end), or None for any
    other index. The loops' reads and writes (``a[n, f, i, j]``) come through here."""
    index = index if type(index) is tuple else (index,)
    if len(index) != view.ndim:
        return None
    for i in index:
        if type(i) is not int and not (isinstance(i, np.integer) and not isinstance(i, np.bool_)):
            return None
    shape, _, offset, steps = _geometry(view, root.ptr)
    for i, n, step in zip(index, shape, steps):
        i = int(i)
        if not -n <= i < n:
            return None
        offset += (i % n) * step
    table = root.flat_of_offset()
    return offset if table is None else int(table[offset])


def _cells_of(cells: set[int]) -> np.ndarray:
    return np.array(sorted(cells), dtype=np.int64)


def _values(root: Root, cells: np.ndarray) -> np.ndarray:
    """The values of ``cells`` of ``root``, as floats (a copy: an index array's)."""
    return root.flat()[cells].astype(np.float64, copy=False)
