"""The two data files that say what to read: code-fields.tsv (FieldSpec: fact field -> config
attribute path) and code-layout.tsv (Layout: where things are in a checkout), both TSV with `#` comments
and a header row."""

from .errors import InputError


def read_tsv(path):
    """Rows of a TSV data file as dicts, each with its 1-based line number under '_line'.

    The one rule of every data file, which base/tsv.cpp follows too (docs/sources.md, "The data files"):
    UTF-8, a leading byte-order mark ignored, a '\\r' before a line end dropped; empty lines and lines
    starting with '#' skipped; the first other line names the columns; each cell trimmed of the white
    space around it; a row with more or fewer cells than the header is an error, never padded.
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(path, 1, "cannot read data file: %s" % e.strerror, "check the path given on the command line")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, data.count(b"\n", 0, e.start) + 1, "invalid UTF-8 byte sequence", "save the file as UTF-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    header = None
    rows = []
    for n, raw in enumerate(text.split("\n"), 1):
        if raw.endswith("\r"):
            raw = raw[:-1]
        if not raw or raw.startswith("#"):
            continue
        cells = [c.strip(" \t\n\r\f\v") for c in raw.split("\t")]
        if header is None:
            header = cells
            continue
        if len(cells) != len(header):
            raise InputError(path, n, "row has %d cells, the header has %d" % (len(cells), len(header)),
                             "separate cells with exactly one tab; leave a cell empty rather than dropping it")
        row = dict(zip(header, cells))
        row["_line"] = n
        rows.append(row)
    if header is None:
        raise InputError(path, 1, "no header line", "the first non-comment line names the columns")
    return rows

class Layout:
    """Where things are in a checkout (kb-sources/data/code-layout.tsv)."""

    def __init__(self, rows, path):
        self.path = path
        self.rows = rows
        self.by_kind = {}
        for r in rows:
            self.by_kind.setdefault(r["kind"], []).append(r)

    def one(self, kind):
        rows = self.by_kind.get(kind, [])
        if len(rows) != 1:
            raise InputError(self.path, rows[1]["_line"] if len(rows) > 1 else 1,
                             "layout needs exactly one `%s` row, found %d" % (kind, len(rows)),
                             "see the comment header of the layout file")
        return rows[0]

    def all(self, kind):
        return self.by_kind.get(kind, [])

class FieldSpec:
    def __init__(self, row):
        self.field = row["field"]
        self.path = row["path"]
        self.view = row["view"] or "value"
        self.via = row["via"]
        self.default = row["default"]
        self.default_source = row["default_source"]
        self.line = row["_line"]
