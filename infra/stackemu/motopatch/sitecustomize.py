# Loaded by the stack's private moto (PYTHONPATH), two corrections of
# moto's IAM enforcement.
#
# moto checks a request's
# SigV4 signature against the URL werkzeug has already decoded, so a signed
# request whose path or query holds an escaped character is refused as
# SignatureDoesNotMatch though AWS accepts it: an S3 list with prefix
# "files/" (sent as prefix=files%2F), an object key with '#' (cut off as a
# fragment) or a space. The signature is checked against the URL as it was
# sent instead, and S3's canonical path is that path as sent, escaped once,
# as S3 signs it (other services escape the escaped path again, which
# botocore does).
from urllib.parse import urlsplit, urlunsplit

#
# moto refuses a call in XML whatever the protocol, so an SDK calling a JSON
# protocol (DynamoDB, Secrets Manager, KMS, SQS) cannot read the refusal and
# reports an undecodable 403. AWS answers those in JSON as
# AccessDeniedException; so does this.
from botocore.auth import S3SigV4Auth
from moto.core.authorization import ActionAuthenticatorMixin
from moto.core.exceptions import AccessDeniedError, JsonRESTError

_check = ActionAuthenticatorMixin._authenticate_and_authorize_action


def _as_sent(self, iam_request_cls, resource="*"):
    environ = getattr(getattr(self, "request", None), "environ", None)
    raw = environ.get("RAW_URI") if environ else None
    if not raw:
        return _json_refusal(self, iam_request_cls, resource)
    decoded = self.uri
    path, _, query = raw.partition("?")
    self.uri = urlunsplit(urlsplit(decoded)._replace(path=path, query=query, fragment=""))
    try:
        return _json_refusal(self, iam_request_cls, resource)
    finally:
        self.uri = decoded


def _json_refusal(self, iam_request_cls, resource):
    try:
        return _check(self, iam_request_cls, resource)
    except AccessDeniedError as refused:
        headers = getattr(self, "headers", None) or {}
        if not headers.get("X-Amz-Target"):
            raise
        answer = JsonRESTError("AccessDeniedException", refused.message)
        answer.code = 403
        raise answer from None


ActionAuthenticatorMixin._authenticate_and_authorize_action = _as_sent
S3SigV4Auth._normalize_url_path = lambda self, path: path
