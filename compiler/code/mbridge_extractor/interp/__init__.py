"""The abstract interpreter: `core.Interp` evaluates snapshot code statically (see extract_mbridge.py).

Interp is one class assembled from mixins, one module per concern: names (module-level bindings and
imports), classes (MRO, dataclass fields, instantiation), calls (binding, snapshot / external / opaque
callees), statements (blocks, forks over undecided conditions, assignment), expressions, builtin_calls
(builtins and methods of constants, lists, dicts) and operators.  state holds the frames and status codes,
syntax the AST helpers, tables the fixed tables of Python semantics."""
