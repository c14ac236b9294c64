"""./dev start's check of Qt's xcb libraries: missing ones are named as Debian packages."""

from __future__ import annotations

from app.qt_deps import XCB_PACKAGES, missing_libraries, packages_for

LDD = """/venv/PySide6/Qt/plugins/platforms/libqxcb.so:
\tlinux-vdso.so.1 (0x00007ffc)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb.so.1 => /lib/x86_64-linux-gnu/libxcb.so.1 (0x00007f)
/venv/PySide6/Qt/lib/libQt6XcbQpa.so.6:
\tlibxcb-icccm.so.4 => not found
\tlibxkbcommon-x11.so.0 => not found
"""
LDCONFIG_WITHOUT_CURSOR = "\tlibxcb.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libxcb.so.1\n"
LDCONFIG_WITH_CURSOR = LDCONFIG_WITHOUT_CURSOR + (
    "\tlibxcb-cursor.so.0 (libc6,x86-64) => /lib/x86_64-linux-gnu/libxcb-cursor.so.0\n"
)


def test_missing_libraries_become_debian_packages() -> None:
    missing = missing_libraries(ldd_output=LDD, ldconfig_output=LDCONFIG_WITHOUT_CURSOR)
    # libxcb-cursor is loaded at run time (dlopen): ldd cannot see it, ldconfig can.
    assert missing == [
        "libxcb-cursor.so.0",
        "libxcb-icccm.so.4",
        "libxcb-keysyms.so.1",
        "libxkbcommon-x11.so.0",
    ]
    assert packages_for(missing) == [
        "libxcb-cursor0",
        "libxcb-icccm4",
        "libxcb-keysyms1",
        "libxkbcommon-x11-0",
    ]


def test_nothing_missing_nothing_to_install() -> None:
    ldd = "\n".join(line for line in LDD.splitlines() if "not found" not in line)
    assert missing_libraries(ldd_output=ldd, ldconfig_output=LDCONFIG_WITH_CURSOR) == []


def test_the_three_packages_a_fresh_debian_lacked_are_known() -> None:
    for package in ("libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1"):
        assert package in XCB_PACKAGES.values()
