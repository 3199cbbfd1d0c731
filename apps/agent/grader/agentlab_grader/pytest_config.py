"""pytest's configuration parsed once per warm sandbox, and run from it per judge process.

The judge's directories are the same paths for every request, so the zygote can parse pytest's
command line, ini file and plugin registry before it reads any request; every judge process
gets a copy of that parsed configuration by fork.
"""

import os

BOX = "/box"


def judge_dirs(ctx) -> tuple[str, str, str]:
    """The judge's workspace, report and temporary directories: the same paths for every request
    (a fresh tmpfs at /box in the sandbox; one request at a time per zygote in process mode), so
    that pytest's configuration can be parsed once, in the zygote, before any request."""
    root = BOX if ctx.sandboxed else os.path.join(ctx.scratch, "judge")
    return os.path.join(root, "ws"), os.path.join(root, "out"), os.path.join(root, "tmp")


def prepare_config(ctx):
    """pytest's parsed configuration (options, ini, rootdir, plugin registry), built once in the
    zygote before it reads any request: parsing it is a third of a small task's pytest run. It
    holds no task data; each judge process gets a copy by fork and adds its test paths and our
    plugins. The capture manager's global capture (temporary files) is stopped here and started
    afresh in each judge process, so no two requests ever share a capture file."""
    from _pytest.config import _prepareconfig

    ws, out, tmp = judge_dirs(ctx)
    if not ctx.sandboxed:
        for d in (ws, out, tmp):
            os.makedirs(d, exist_ok=True)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # --confcutdir: without it pytest 8 collects every parent directory up to / (listing each).
    args = [
        "-c",
        ctx.ini,
        "--rootdir",
        ws,
        "--confcutdir",
        ws,
        "--noconftest",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:stepwise",
        "--junitxml",
        os.path.join(out, "junit.xml"),
        "--continue-on-collection-errors",
        "-q",
        "--basetemp",
        os.path.join(tmp, "pytest"),
    ]
    cwd = os.getcwd()
    os.chdir(ws)  # the invocation directory is the workspace, as in every judge process
    try:
        config = _prepareconfig(args, [])
    finally:
        os.chdir(cwd)
    config.pluginmanager.getplugin("capturemanager").stop_global_capturing()
    return config


def run_prepared(config, test_paths: list, plugins: list) -> int:
    """What pytest.main does after parsing, on the zygote's parsed configuration."""
    import pytest
    from _pytest.config import Config

    os.environ["PYTEST_VERSION"] = pytest.__version__
    config.args, config.args_source = list(test_paths), Config.ArgsSource.ARGS
    capman = config.pluginmanager.getplugin("capturemanager")
    capman.start_global_capturing()  # its files in this process's own /tmp, on its own fds
    capman.suspend_global_capture()
    for p in plugins:
        config.pluginmanager.register(p)
    try:
        return int(config.hook.pytest_cmdline_main(config=config))
    finally:
        config._ensure_unconfigure()
