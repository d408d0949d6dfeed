# The upstream's response builders (this case's settings) are sites of kind "response", with
# the status code and error type they give (the builder's defaults where the call gives none):
# `self.create_error_response` is not importable (its exception_qualname is the builder's name),
# the imported one resolves; an error type that is no name ("<script>") stays data, never the
# entry's exception name; str(code) has nothing to match and gives no site.
from http import HTTPStatus
from fastapi import status
from .errors import create_error_response
from .protocol import ErrorInfo, ErrorResponse


class Serving:
    def cancel(self, response_id, code, kind):
        if response_id is None:
            return self.create_error_response("Cannot cancel a synchronous response.")
        if code:
            return self.create_error_response(message=f"Response with id '{response_id}' not found.",
                                              err_type="NotFoundError", status_code=HTTPStatus.NOT_FOUND)
        if kind:
            return create_error_response(f"max_num_seqs is {code}", kind, status.HTTP_422_UNPROCESSABLE_ENTITY)
        err = ErrorResponse(error=ErrorInfo(message="Model is still loading", type="<script>", code=503))
        return create_error_response(str(code))
