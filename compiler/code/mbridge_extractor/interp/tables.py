"""Fixed tables of Python semantics: operators, builtins, exceptions, pure functions and string
methods the interpreter may compute on constants."""

import ast
import math
import os


PURE_STR_METHODS = {
    "lower", "upper", "strip", "lstrip", "rstrip", "startswith", "endswith", "replace", "split", "rsplit",
    "join", "format", "title", "capitalize", "casefold", "find", "rfind", "count", "isdigit", "isalpha",
    "isalnum", "removeprefix", "removesuffix", "partition", "rpartition", "zfill", "center", "ljust", "rjust",
    "splitlines", "isupper", "islower", "index",
}

BINOPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a ** b, ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b,
    ast.BitXor: lambda a, b: a ^ b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
}
CMPOPS = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
}
EXCEPTIONS = {"ValueError", "TypeError", "KeyError", "RuntimeError", "AttributeError", "NotImplementedError",
              "AssertionError", "IndexError", "Exception", "ImportError", "ModuleNotFoundError", "OSError"}
BUILTIN_NAMES = {
    "len", "isinstance", "hasattr", "getattr", "setattr", "list", "tuple", "set", "frozenset", "dict", "sorted",
    "reversed", "any", "all", "min", "max", "sum", "abs", "round", "int", "float", "str", "bool", "repr", "range",
    "enumerate", "zip", "type", "print", "id", "callable", "iter", "next", "vars", "globals", "locals", "open",
    "input", "divmod", "pow", "ord", "chr", "hex", "bin", "hash", "object", "super",
} | EXCEPTIONS

PURE_EXTERNAL = {
    "math.lcm": math.lcm, "math.gcd": math.gcd, "math.ceil": math.ceil, "math.floor": math.floor,
    "math.sqrt": math.sqrt, "math.log2": math.log2, "math.prod": None,
    "os.path.basename": os.path.basename, "os.path.splitext": None,
}
PURE_EXTERNAL = {k: v for k, v in PURE_EXTERNAL.items() if v is not None}
