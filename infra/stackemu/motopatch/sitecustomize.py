# Loaded by the stack's private moto (PYTHONPATH). moto checks a request's
# SigV4 signature against the URL werkzeug has already decoded, so a signed
# request whose path or query holds an escaped character is refused as
# SignatureDoesNotMatch though AWS accepts it: an S3 list with prefix
# "files/" (sent as prefix=files%2F), an object key with '#' (cut off as a
# fragment) or a space. The signature is checked against the URL as it was
# sent instead, and S3's canonical path is that path as sent, escaped once,
# as S3 signs it (other services escape the escaped path again, which
# botocore does).
from urllib.parse import urlsplit, urlunsplit

from botocore.auth import S3SigV4Auth
from moto.core.authorization import ActionAuthenticatorMixin

_check = ActionAuthenticatorMixin._authenticate_and_authorize_action


def _as_sent(self, iam_request_cls, resource="*"):
    environ = getattr(getattr(self, "request", None), "environ", None)
    raw = environ.get("RAW_URI") if environ else None
    if not raw:
        return _check(self, iam_request_cls, resource)
    decoded = self.uri
    path, _, query = raw.partition("?")
    self.uri = urlunsplit(urlsplit(decoded)._replace(path=path, query=query, fragment=""))
    try:
        return _check(self, iam_request_cls, resource)
    finally:
        self.uri = decoded


ActionAuthenticatorMixin._authenticate_and_authorize_action = _as_sent
S3SigV4Auth._normalize_url_path = lambda self, path: path
