"""Whether the display the window would open on answers, asked before Qt is.

Qt's xcb and wayland platforms abort the process (SIGABRT, exit 134, "could not connect
to display") when ``DISPLAY`` or ``WAYLAND_DISPLAY`` names a server that is not there, for
example ``DISPLAY=:99`` with no X server, or an SSH session whose forwarding has gone.
:func:`unreachable_display` connects first, the way the platform plugins do, so the
command line can say so in one line and exit 2 instead.

X11: ``xcb_connect`` from the system's libxcb (the library the xcb plugin connects with;
the connection also fails for a server that refuses our authorisation, as Qt's would).
Without libxcb, a socket connection to the display's Unix socket or TCP port. Wayland:
a connection to the compositor's socket (``WAYLAND_DISPLAY``, a path or a name in
``XDG_RUNTIME_DIR``). Nothing here imports Qt.
"""

from __future__ import annotations

import ctypes
import os
import socket

_TIMEOUT_S = 3.0


def _xcb_connects(display: str) -> bool | None:
    """True or False as libxcb's own connection says; None when libxcb is not here."""
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return None
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.restype = ctypes.c_int
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(display.encode(), None)
    if not connection:
        return False
    try:
        return xcb.xcb_connection_has_error(connection) == 0
    finally:
        xcb.xcb_disconnect(connection)


def _x_socket_connects(display: str) -> bool:
    """Connect to an X display's socket: ``[host]:N[.S]`` as Xlib reads it (a local
    display is the Unix socket /tmp/.X11-unix/XN, also in Linux's abstract namespace;
    a host is TCP port 6000 + N)."""
    spec = display.rpartition("/")[2] if display.startswith(("unix/", "tcp/")) else display
    host, colon, rest = spec.rpartition(":")
    number = rest.partition(".")[0]
    if not colon or not number.isdigit():
        return False
    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        for address in ("\0" + path, path):
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.settimeout(_TIMEOUT_S)
                    sock.connect(address)
                    return True
            except OSError:
                continue
        return False
    try:
        with socket.create_connection((host, 6000 + int(number)), timeout=_TIMEOUT_S):
            return True
    except OSError:
        return False


def x_display_answers(display: str) -> bool:
    connected = _xcb_connects(display)
    return _x_socket_connects(display) if connected is None else connected


def wayland_socket(name: str, runtime_dir: str | None) -> str | None:
    """The compositor's socket path: ``name`` if absolute, else in ``XDG_RUNTIME_DIR``."""
    if os.path.isabs(name):
        return name
    return os.path.join(runtime_dir, name) if runtime_dir else None


def wayland_display_answers(name: str, runtime_dir: str | None) -> bool:
    path = wayland_socket(name, runtime_dir)
    if path is None:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(_TIMEOUT_S)
            sock.connect(path)
            return True
    except OSError:
        return False


def unreachable_display(environ: dict[str, str] | None = None) -> str | None:
    """None when a display that is set answers (or none is set: the caller says that);
    else the sentence that says which display did not answer."""
    env = os.environ if environ is None else environ
    x11 = env.get("DISPLAY", "")
    wayland = env.get("WAYLAND_DISPLAY", "")
    if not (x11 or wayland):
        return None
    tried = []
    if wayland:
        if wayland_display_answers(wayland, env.get("XDG_RUNTIME_DIR")):
            return None
        tried.append(f"WAYLAND_DISPLAY={wayland} (no Wayland compositor answers there)")
    if x11:
        if x_display_answers(x11):
            return None
        tried.append(f"DISPLAY={x11} (no X server answers there, or it refused this user)")
    return "cannot reach the display: " + " nor ".join(tried)
