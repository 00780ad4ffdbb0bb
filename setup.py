"""The optional C extension ``idxadvisor._speedups`` (docs/speedups.md); everything else is in pyproject.toml.

The extension is optional: without a compiler (or when it fails to build) ``pip install`` goes on and idxadvisor
runs on its Python path, which is the reference the extension is tested against.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("idxadvisor._speedups", ["idxadvisor/_speedups.c"], optional=True)])
