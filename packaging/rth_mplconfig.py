# Runtime hook of the bundle, in place of PyInstaller's own matplotlib hook: that one
# points MPLCONFIGDIR at a new temporary folder on every run, so matplotlib rebuilt its
# font list (seconds) each time a figure was made. Here it is the user's cache folder
# (core.desktop.paths.cache_dir: platformdirs' user cache, or TAILLENS_HOME/cache), kept between
# runs; a MPLCONFIGDIR the user set wins. Only named here: matplotlib creates it on use.
import os

if not os.environ.get("MPLCONFIGDIR"):
    from core.desktop.paths import cache_dir

    os.environ["MPLCONFIGDIR"] = str(cache_dir(create=False) / "matplotlib")
