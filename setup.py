"""Build hook: ship the top-level ``targets/`` tag folder inside the package.

The tag files live at the repository root (they are data, not code), so a regular,
non-editable install copies them to ``hetsim/targets``; an editable install reads them in place.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithTags(build_py):
    def run(self) -> None:
        super().run()
        source = Path(__file__).parent / "targets"
        destination = Path(self.build_lib) / "hetsim" / "targets"
        if source.is_dir():
            shutil.copytree(source, destination, dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildWithTags})
