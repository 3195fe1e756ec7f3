"""The one exception type of zyfa: a failed C call, with its status code and detail message."""
from . import _lib


class ZyfaError(RuntimeError):
    """A zyfa call failed.

    status:  the zyfa_status code (zyfa.ERROR_INVALID_ARGUMENT, zyfa.ERROR_NOT_SUPPORTED, ...)
    name:    the library's short name of the status ("invalid argument")
    message: the library's detail naming the offending field and value (may be "")
    """

    def __init__(self, status, message, name=None):
        self.status = int(status)
        self.name = name if name is not None else status_string(status)
        self.message = message
        super().__init__("%s: %s" % (self.name, message) if message else self.name)


def status_string(status):
    return _lib.lib().zyfa_status_string(int(status)).decode()


def check(status):
    """Raises ZyfaError for a non-zero status, with this thread's last error message."""
    if status != _lib.SUCCESS:
        lib = _lib.lib()
        raise ZyfaError(status, lib.zyfa_last_error_message().decode(errors="replace"))
