"""TypeScript function tools, run with Node.js (`TypeScriptRunner`; the runtime offers
them to the model through `holodeck.runtime.toolsets.typescript_toolset`).

The schema the model sees comes from each function's TypeScript types, read with the
official compiler's type checker (parameters, literal unions as enums, arrays, nested
objects, optional parameters, JSDoc `@param` text). Calls run in one long-lived Node.js
process per toolset: started on first use, restarted if it died, killed when the
toolset exits. Requests and answers are JSON lines matched by id, so calls can overlap.

The Node.js side is `node/harness.cjs`. It needs the `typescript` npm package, found in
`$HOLODECK_NODE_MODULES`, else in `node/node_modules` (a developer checkout after
`npm install --prefix src/holodeck/tools/node`), else installed once with npm under
`$HOLODECK_HOME/node` (`~/.holodeck/node`).
"""

from __future__ import annotations

from holodeck.tools.typescript._install import (
    INSTALL_TIMEOUT_S,
    INSTALLED_MARKER,
    NODE_MODULES_ENV,
    typescript_package,
    typescript_version_spec,
)
from holodeck.tools.typescript._process import NEEDS_NODE, NodeProcessError, TypeScriptToolError
from holodeck.tools.typescript._runner import (
    MIN_NODE_MAJOR,
    PING_TIMEOUT_S,
    START_TIMEOUT_S,
    Described,
    MissingArguments,
    TypeScriptRunner,
)

__all__ = [
    "INSTALLED_MARKER",
    "INSTALL_TIMEOUT_S",
    "MIN_NODE_MAJOR",
    "NEEDS_NODE",
    "NODE_MODULES_ENV",
    "PING_TIMEOUT_S",
    "START_TIMEOUT_S",
    "Described",
    "MissingArguments",
    "NodeProcessError",
    "TypeScriptRunner",
    "TypeScriptToolError",
    "typescript_package",
    "typescript_version_spec",
]
