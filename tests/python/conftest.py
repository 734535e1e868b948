"""pytest's configuration for the Python tests: the `serial` marker (scripts/test.sh runs the other tests
on two workers with pytest-xdist, then these alone)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "serial: timing-sensitive or ordered; runs alone, after the parallel tests")
