"""The fixture repository the schema-5 dataset beside this file was crawled from (tests/versions/
test_migrate.py): every kind of entry, so a reader of schema 6 migrates each field that moved.

``make.py`` wrote ``acme/server/`` with errcat as it was at schema 5 (commit cc8d7b5), from
this tree committed by ``tests/conftest.FixtureRepo`` (fixed author and date: the same commit
every time) and synced (``errcat sync``: every record has a history) with ``TOML``."""

TREE = {
    "pkg/__init__.py": "",
    "pkg/config.py": """
        import logging

        logger = logging.getLogger(__name__)


        def check_size(size):
            if size < 0:
                raise ValueError(f"size must be at least 0, got {size}")
            if size > 10:
                logger.warning("size %d is large; it may be slow", size)
            if size > 1000:
                logger.error("size %d is far too large to be fast", size)
            return size


        def check_name(name):
            assert name, "name is required for a widget"
            assert name.isidentifier()
            if name == "x":
                raise NotImplementedError
            return name


        def load(path, error):
            if not path:
                raise error
            return path
        """,
    "pkg/server.py": """
        from pkg.errors import create_error_response


        def serve(request):
            if request.size > 100:
                return create_error_response("request size over one hundred", "BadRequestError", 400)
            if request.model is None:
                return create_error_response(f"the model {request.name} does not exist", status_code=404,
                                             err_type="NotFoundError")
            return None
        """,
    "pkg/far/__init__.py": "",
    "pkg/far/away.py": """
        def quantize(bits):
            if bits not in (4, 8):
                raise RuntimeError(f"quantization with {bits} bits is unsupported")
            return bits
        """,
    "pkg/errors.py": """
        def create_error_response(message, err_type="BadRequestError", status_code=400):
            return {"message": message, "type": err_type, "code": status_code}
        """,
}

TOML = """
[upstreams.acme]
url = "https://github.com/acme/server"
include = ["pkg/**/*.py"]
kinds = ["raise", "assert", "log", "response"]

[[upstreams.acme.responses]]
call = "create_error_response"
params = ["message", "err_type", "status_code"]
message = "message"
error_type = "err_type"
status_code = "status_code"
default_error_type = "BadRequestError"
default_status_code = 400
"""
