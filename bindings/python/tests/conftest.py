import os

import pytest


def pytest_report_header(config):
    import zyfa
    try:
        return "zyfa %s from %s (package %s)" % (zyfa.version(), zyfa.library_path(),
                                                 os.path.dirname(zyfa.__file__))
    except zyfa.LibraryNotFoundError as e:
        return "libzyfa not loadable: %s" % e


@pytest.fixture(scope="session")
def cpu():
    import zyfa
    with zyfa.Context("cpu", num_threads=2) as ctx:
        yield ctx
