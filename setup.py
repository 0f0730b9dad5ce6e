"""The wheel's packages, derived from the tree: every package under engramory/ (a host folder
added is in the wheel without a line here or in pyproject.toml), plus the runtime bundle that
pyproject's package-dir maps onto this checkout's root (engramory._bundle). Everything else
about the build is in pyproject.toml; tests/test_packaging.py checks a built wheel against the
tree."""

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

BUNDLE = [
    "engramory._bundle",
    "engramory._bundle.hooks",
    "engramory._bundle.tools",
    "engramory._bundle.schemas",
    "engramory._bundle.templates",
    "engramory._bundle.hermes.engramory",
]

class BuildPy(build_py):
    """The bundle package is the checkout's root, where this script lives: it is no module of
    the bundle."""

    def find_package_modules(self, package, package_dir):  # type: ignore[no-untyped-def]
        found = super().find_package_modules(package, package_dir)
        return [m for m in found if (m[0], m[1]) != ("engramory._bundle", "setup")]


setup(cmdclass={"build_py": BuildPy}, packages=find_packages(include=["engramory", "engramory.*"]) + BUNDLE)
