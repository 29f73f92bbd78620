"""Run SANY and TLC (``tla2tools.jar``) safely on untrusted TLA+ text: the public names of
the modules that do it, importable from here.

Where each job lives:

* :mod:`alias.tla.toolconfig` -- :class:`ToolConfig`, :func:`find_jar`, :class:`ToolError`;
* :mod:`alias.tla.confine` -- **how a run is confined** (namespaces, no network, a
  read-only view, a size-limited tmpfs, process limits; :func:`confinement`);
* :mod:`alias.tla.overrides` -- the Community Modules' Java overrides, confined runs only;
* :mod:`alias.tla.jar` -- what a jar is and can do (:func:`tool_version`,
  :func:`capabilities`, :func:`library_digest`);
* :mod:`alias.tla.jvm` -- the JVM command and its class-data-sharing archive;
* :mod:`alias.tla.runner`, :mod:`alias.tla.folders` -- the process runner and run folders;
* :mod:`alias.tla.servers` (+ :mod:`alias.tla.tool_server`) -- runs through the tool servers;
* :mod:`alias.tla.runkey` -- run keys;
* :mod:`alias.tla.sany` -- :func:`run_sany` and SANY's verdict from TLC's front end;
* :mod:`alias.tla.tlc` -- :func:`run_tlc`, :func:`run_tlc_dump_dot`.
"""

from __future__ import annotations

from .confine import Status, active as confined, status as confinement
from .folders import OUTPUT_CAP
from .jar import Capabilities, capabilities, library_digest, supports_check_deadlock, tool_version
from .jvm import cds_archive, check_java
from .overrides import overrides_jar
from .runkey import FP_INDEX, sany_run_key, tlc_run_key
from .sany import SanyResult, run_sany, sany_exit_codes, sany_from_tlc
from .tlc import DOT_CAP, DotDump, TlcResult, error_lines, run_tlc, run_tlc_dump_dot
from .toolconfig import ToolConfig, ToolError, default_jvm_cache, find_jar, write_atomic

__all__ = [
    "ToolConfig", "ToolError", "SanyResult", "TlcResult", "DotDump", "find_jar", "tool_version",
    "supports_check_deadlock", "run_sany", "sany_exit_codes", "sany_from_tlc", "run_tlc", "run_tlc_dump_dot",
    "sany_run_key", "tlc_run_key", "check_java", "error_lines", "OUTPUT_CAP", "DOT_CAP", "Capabilities",
    "capabilities", "library_digest", "cds_archive", "default_jvm_cache", "write_atomic", "FP_INDEX",
    "overrides_jar", "confinement", "confined", "Status",
]
