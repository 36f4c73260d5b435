"""mbridge_extractor -- static recipe facts of a Megatron Bridge checkout (the code front end of kbc).

Run through `extract_mbridge.py` (beside this package), never imported by Bridge code and never importing it:
the checkout is read with `ast` only.  One module per concern, in the order a run uses them:

  cli              the command line: arguments, exit codes (0 written/identical, 1 differs, 2 bad input)
  extract          one extraction, start to end: the text of every output file
  datafiles        code-fields.tsv (FieldSpec) and code-layout.tsv (Layout): what to read, and where
  snapshot         the checkout as parsed modules and their top-level bindings (Snapshot, Module)
  values           the abstract values (Const, Obj, Alt, Unknown ...) and pure functions over them
  interp/          the abstract interpreter: core (Interp, heap states) and one mixin per concern --
                   names (module-level bindings, imports), classes (MRO, dataclasses), calls, statements,
                   expressions, builtin_calls, operators; state (Frame, status codes), syntax (AST helpers),
                   tables (operators, builtins, pure functions)
  exports          recipe names: each export package's names traced to their defining functions
  facts            one recipe function evaluated, each code-fields.tsv path read as a Fact
  launcher         argparse flags, override table, mode rule, runner steps, launch script, name pattern
  config_keys      every dataclass field under the config root, as dotted override keys
  datasets         the --dataset presets: builder, returned config class, train mode, accepted modes
  benchmark_names  recipe names parsed with the launcher's own pattern and rules
  render           text of abstract values for TSV cells
  output           the output files' names and headers; atomic write; check against files on disk
  compare          what changed between two extracted snapshots
  errors           InputError (path:line: error + hint), CycleError, Budget, Raised
"""
