"""The two data files that say what to read: code-fields.tsv (FieldSpec: fact field -> config
attribute path) and code-layout.tsv (Layout: where things are in a checkout), both TSV with `#` comments
and a header row."""

from .errors import InputError


def read_tsv(path):
    """Rows of a TSV data file as dicts, each with its 1-based line number under '_line'."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise InputError(path, 1, "cannot read data file: %s" % e.strerror, "check the path given on the command line")
    header = None
    rows = []
    for n, raw in enumerate(text.split("\n"), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        cells = raw.split("\t")
        if header is None:
            header = cells
            continue
        if len(cells) > len(header):
            raise InputError(path, n, "row has %d cells, header has %d" % (len(cells), len(header)),
                             "tabs separate cells; a cell may not contain a tab")
        row = dict(zip(header, cells + [""] * (len(header) - len(cells))))
        row["_line"] = n
        rows.append(row)
    if header is None:
        raise InputError(path, 1, "data file has no header row", "the first non-comment line names the columns")
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
