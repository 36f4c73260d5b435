"""The extractor's exceptions: bad input (reported as `path:line: error:` + hint, exit 2), circular
imports, the evaluation budget, and an exception raised by the code being interpreted."""


class InputError(Exception):
    """Bad input: reported as `path:line: error: msg` plus a hint, exit code 2."""

    def __init__(self, path, line, msg, hint):
        super().__init__(msg)
        self.path, self.line, self.msg, self.hint = path, line, msg, hint

    def render(self):
        return "%s:%s: error: %s\nhint: %s\n" % (self.path, self.line, self.msg, self.hint)


class CycleError(Exception):
    """A name or module that depends on itself (a circular import)."""

    def __init__(self, path, line, what):
        super().__init__(what)
        self.path, self.line, self.what = path, line, what


class Budget(Exception):
    """The evaluation of one recipe took too many steps."""


class Raised(Exception):
    pass
