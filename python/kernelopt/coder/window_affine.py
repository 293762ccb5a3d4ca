"""Affine facts about a pointwise kernel's indices, for the `window_rows` family (window_rows.py).

Inductor decomposes a pointwise kernel's flat output index `xindex` into coordinates with `%` and `//`
(`x0 = xindex % W`, `x1 = (xindex // W) % H`, `x2 = xindex // (W*H)`, ...). Here every such variable,
every load's address and every load's mask (a conjunction of bounds: the padding checks) is read as an
affine function of the output's mixed-radix digits o0 (the contiguous output dimension), o1 (the next),
... The family uses these to prove, without running anything, that a load made for output row o1 + 1 is
the very load (same address, same mask) another element of the window made for row o1.
"""
import ast
from dataclasses import dataclass


class Unreadable(Exception):
    """An expression this reader does not model (the caller declines with the reason)."""


@dataclass(frozen=True)
class Lin:
    """coeffs . digits + const."""
    coeffs: tuple
    const: int

    def __add__(self, other):
        return Lin(tuple(a + b for a, b in zip(self.coeffs, other.coeffs)), self.const + other.const)

    def scaled(self, k):
        return Lin(tuple(a * k for a in self.coeffs), self.const * k)

    def next_row(self):
        """The same function one output row further (digit 1 plus one)."""
        return Lin(self.coeffs, self.const + self.coeffs[1])

    def is_constant(self):
        return not any(self.coeffs)


FALSE_ATOM = ("false",)  # a mask holding it is false everywhere


def _sign_split(coeffs, dims):
    """The least and greatest value coeffs . digits takes over the box 0 <= digit_j < dims[j]."""
    lo = sum(min(0, c * (d - 1)) for c, d in zip(coeffs, dims))
    hi = sum(max(0, c * (d - 1)) for c, d in zip(coeffs, dims))
    return lo, hi


class Digits:
    """The output's mixed-radix digits as one kernel's `//` and `%` of xindex define them."""

    def __init__(self, fn, xnumel):
        splits = []  # (divisor, modulus or None) of every xindex-derived variable
        for node in fn.body:
            if isinstance(node, ast.Assign):
                form = index_form(node.value)
                if form is not None:
                    splits.append(form)
        bounds = {1}
        for divisor, modulus in splits:
            bounds.add(divisor)
            if modulus is not None:
                bounds.add(divisor * modulus)
        self.bounds = sorted(b for b in bounds if b < xnumel)
        for lo, hi in zip(self.bounds, self.bounds[1:] + [xnumel]):
            if hi % lo:
                raise Unreadable(f"the index splits at {lo} and {hi}, which is no multiple of it")
        self.dims = [hi // lo for lo, hi in zip(self.bounds, self.bounds[1:] + [xnumel])]
        self.xnumel = xnumel

    def of(self, divisor, modulus):
        """The Lin of (xindex // divisor) % modulus (modulus None: no %)."""
        top = divisor * modulus if modulus is not None else None
        if divisor not in self.bounds or (top is not None and top < self.xnumel and top not in self.bounds):
            raise Unreadable(f"xindex // {divisor} % {modulus} does not fall on the index's digits")
        coeffs = tuple(b // divisor if b >= divisor and (top is None or b < top) else 0 for b in self.bounds)
        return Lin(coeffs, 0)

    def zero(self, const=0):
        return Lin((0,) * len(self.bounds), const)


def index_form(value):
    """(divisor, modulus) when value is xindex, xindex % M, xindex // D or (xindex // D) % M; else None."""
    def is_x(n):
        return isinstance(n, ast.Name) and n.id == "xindex"

    def const(n):
        return n.value if isinstance(n, ast.Constant) and type(n.value) is int and n.value > 0 else None

    if is_x(value):
        return 1, None
    if not isinstance(value, ast.BinOp):
        return None
    if isinstance(value.op, ast.FloorDiv) and is_x(value.left) and const(value.right):
        return const(value.right), None
    if isinstance(value.op, ast.Mod) and const(value.right):
        inner = index_form(value.left)
        if inner is not None and inner[1] is None:
            return inner[0], const(value.right)
    return None


class Reader:
    """Reads expressions over an environment of names into Lin (integers), frozensets of atoms (masks: a
    conjunction of `coeffs . digits + const OP 0`, OP '>=' or '<') or raises Unreadable."""

    def __init__(self, digits, constants):
        self.digits = digits
        self.env = {"xindex": digits.of(1, None)}
        self.env.update({k: digits.zero(v) for k, v in constants.items()})

    def bind(self, name, value):
        """Remembers what an assignment gives `name` (nothing when this reader cannot model it)."""
        form = index_form(value)
        try:
            self.env[name] = self.digits.of(*form) if form else self.read(value)
        except Unreadable:
            self.env.pop(name, None)

    def read(self, node):
        if isinstance(node, ast.Constant):
            if type(node.value) is int:
                return self.digits.zero(node.value)
            if node.value is True:
                return frozenset()
            if node.value is False:
                return frozenset([FALSE_ATOM])
        elif isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self.lin(node.operand).scaled(-1)
        elif isinstance(node, ast.BinOp):
            return self._binop(node)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(node)
        elif isinstance(node, ast.Subscript) and _is_reshape(node.slice):
            return self.read(node.value)
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "tl.full" and len(node.args) >= 2:
            return self.read(node.args[1])
        raise Unreadable(f"`{ast.unparse(node)}` is not affine in the output coordinates")

    def lin(self, node):
        got = self.read(node)
        if not isinstance(got, Lin):
            raise Unreadable(f"`{ast.unparse(node)}` is not an integer index")
        return got

    def _binop(self, node):
        if isinstance(node.op, ast.BitAnd):
            left, right = self.read(node.left), self.read(node.right)
            if isinstance(left, frozenset) and isinstance(right, frozenset):
                return left | right
            raise Unreadable(f"`{ast.unparse(node)}` is not a conjunction of bounds")
        if not isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)):
            raise Unreadable(f"`{ast.unparse(node)}` is neither affine nor a conjunction of bounds")
        left, right = self.lin(node.left), self.lin(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left + right.scaled(-1)
        if isinstance(node.op, ast.Mult) and (left.is_constant() or right.is_constant()):
            return right.scaled(left.const) if left.is_constant() else left.scaled(right.const)
        if left.is_constant() and right.is_constant() and isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right.const:
            value = left.const // right.const if isinstance(node.op, ast.FloorDiv) else left.const % right.const
            return self.digits.zero(value)
        raise Unreadable(f"`{ast.unparse(node)}` is not affine in the output coordinates")

    def _compare(self, node):
        diff = self.lin(node.left) + self.lin(node.comparators[0]).scaled(-1)
        op = node.ops[0]
        if isinstance(op, ast.Lt):
            atom = (diff.coeffs, diff.const, "<")
        elif isinstance(op, ast.LtE):
            atom = (diff.coeffs, diff.const - 1, "<")
        elif isinstance(op, ast.GtE):
            atom = (diff.coeffs, diff.const, ">=")
        elif isinstance(op, ast.Gt):
            atom = (diff.coeffs, diff.const - 1, ">=")
        else:
            raise Unreadable(f"`{ast.unparse(node)}` is not a bound")
        return frozenset([atom])

    def mask(self, node):
        """A load's or store's mask (None: no mask) as a canonical conjunction: atoms true on every output
        are dropped; one false on every output makes it {FALSE_ATOM}."""
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return frozenset()
        got = self.read(node)
        if not isinstance(got, frozenset):
            raise Unreadable(f"the mask `{ast.unparse(node)}` is not a conjunction of bounds")
        return self.simplified(got)

    def simplified(self, atoms, dims=None):
        """atoms without those true on every output of the box 0 <= digit_j < dims[j] (default: the whole
        output); {FALSE_ATOM} when one is false on all of it."""
        dims = dims or self.digits.dims
        out = set()
        for atom in atoms:
            if atom == FALSE_ATOM:
                return frozenset([FALSE_ATOM])
            coeffs, const, op = atom
            lo, hi = _sign_split(coeffs, dims)
            lo, hi = lo + const, hi + const
            always, never = (lo >= 0, hi < 0) if op == ">=" else (hi < 0, lo >= 0)
            if never:
                return frozenset([FALSE_ATOM])
            if not always:
                out.add(atom)
        return frozenset(out)

    def carry_keys(self, atoms):
        """The mask at row o1 and at row o1 + 1, each canonical over the outputs whose next row is an output
        too (o1 <= H - 2: where a row's loads may be taken from the row above, this is all that matters)."""
        dims = list(self.digits.dims)
        dims[1] -= 1
        shifted = [a if a == FALSE_ATOM else (a[0], a[1] + a[0][1], a[2]) for a in atoms]
        return self.simplified(atoms, dims), self.simplified(shifted, dims)


def _is_reshape(sl):
    """`[:]`, `[:, None]`, `[None, :]`: a view that adds unit dimensions (values unchanged)."""
    parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    return all((isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None)
               or (isinstance(p, ast.Constant) and p.value is None) for p in parts)
